package btree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

func newTestTree(t testing.TB, pageSize int, cache int64, fill float64) (*Tree, *pagestore.Store, *bufferpool.Pool) {
	t.Helper()
	c, _ := codec.New(codec.LZ4, 0)
	s, err := pagestore.Open("db", pagestore.Options{FS: vfs.NewMem(), PageSize: pageSize, Codec: c, DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	// Page 0 is the database's meta page: keep it out of the tree.
	if id, err := s.Allocate(); err != nil || id != 0 {
		t.Fatalf("allocate page 0: %d %v", id, err)
	}
	p, err := bufferpool.New(s, bufferpool.Options{CacheSize: cache, Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(); s.Close() })
	return New(p, fill), s, p
}

type kv struct{ k, v string }

func sortedModel(m map[string]string) []kv {
	out := make([]kv, 0, len(m))
	for k, v := range m {
		out = append(out, kv{k, v})
	}
	slices.SortFunc(out, func(a, b kv) int { return bytes.Compare([]byte(a.k), []byte(b.k)) })
	return out
}

// checkVersion compares the version rooted at root with model: point
// lookups, full scans both ways, and seeks.
func checkVersion(t *testing.T, tr *Tree, root PageID, model map[string]string, rng *rand.Rand) {
	t.Helper()
	checkVersionAt(t, tr, root, Live, model, rng)
}

// checkVersionAt is checkVersion for the version of transaction asOf, as
// a snapshot taken then reads it.
func checkVersionAt(t *testing.T, tr *Tree, root PageID, asOf uint64, model map[string]string, rng *rand.Rand) {
	t.Helper()
	want := sortedModel(model)
	c := new(Cursor)
	tr.InitCursorAt(c, root, asOf, nil, nil)
	defer c.Release() // a pinned leaf would keep a writer out
	var got []kv
	for ok := c.First(); ok; ok = c.Next() {
		got = append(got, kv{string(c.Key()), string(c.Value())})
	}
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("forward scan: %d entries, want %d", len(got), len(want))
	}
	got = got[:0]
	for ok := c.Last(); ok; ok = c.Prev() {
		got = append(got, kv{string(c.Key()), string(c.Value())})
	}
	slices.Reverse(got)
	if !slices.Equal(got, want) {
		t.Fatalf("backward scan: %d entries, want %d", len(got), len(want))
	}
	for i := 0; i < 20; i++ {
		probe := randKey(rng)
		v, ok, err := tr.GetAt(root, asOf, []byte(probe), nil)
		if err != nil {
			t.Fatal(err)
		}
		if mv, mok := model[probe]; mok != ok || (ok && string(v) != mv) {
			t.Fatalf("Get(%q) = %q %v, want %q %v", probe, v, ok, mv, mok)
		}
		j, _ := slices.BinarySearchFunc(want, probe, func(e kv, k string) int { return bytes.Compare([]byte(e.k), []byte(k)) })
		if ok := c.SeekGE([]byte(probe)); ok != (j < len(want)) || (ok && string(c.Key()) != want[j].k) {
			t.Fatalf("SeekGE(%q): valid %v", probe, ok)
		}
		if ok := c.SeekLT([]byte(probe)); ok != (j > 0) || (ok && string(c.Key()) != want[j-1].k) {
			t.Fatalf("SeekLT(%q): valid %v", probe, ok)
		}
	}
}

func randKey(rng *rand.Rand) string {
	return fmt.Sprintf("k%05d", rng.IntN(3000))
}

// TestTreeModel runs random transactions of puts and deletes against a map,
// checking every committed version (and some older ones, which must not
// change: copy-on-write) through lookups, scans and seeks. As the database
// does, a transaction after an Abort reuses its txid, and the kept
// versions are checked after every Abort too: undo must leave every node
// as it was, its txid included (a leaf left with the aborted txid would
// look unfrozen to the next snapshot's writer). A few values go to
// overflow pages, so transactions mix simple writes (key undo) with page
// undo (undo.go).
func TestTreeModel(t *testing.T) {
	for _, ps := range []int{4096, 16384} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			tr, _, _ := newTestTree(t, ps, 1<<20, 1.0)
			rng := rand.New(rand.NewPCG(uint64(ps), 1))
			model := map[string]string{}
			var root PageID
			type version struct {
				root  PageID
				model map[string]string
			}
			var old []version
			var frozen, committed uint64 // the newest kept version, as a snapshot
			for txn := 1; txn <= 120; txn++ {
				if txn%10 == 0 {
					old = append(old, version{root, model})
					frozen = committed
				}
				tx := tr.Begin(root, committed+1, frozen, frozen)
				next := make(map[string]string, len(model))
				for k, v := range model {
					next[k] = v
				}
				for op := 0; op < 1+rng.IntN(60); op++ {
					k := randKey(rng)
					if rng.IntN(3) == 0 {
						ok, err := tx.Delete([]byte(k))
						if err != nil {
							t.Fatal(err)
						}
						if _, had := next[k]; had != ok {
							t.Fatalf("Delete(%q) = %v, model has it: %v", k, ok, had)
						}
						delete(next, k)
					} else {
						n := rng.IntN(120)
						if rng.IntN(40) == 0 {
							n = 2 * ps // in overflow pages
						}
						v := fmt.Sprintf("v%d-%s", txn, bytes.Repeat([]byte("x"), n))
						if err := tx.Put([]byte(k), []byte(v)); err != nil {
							t.Fatal(err)
						}
						next[k] = v
					}
				}
				if rng.IntN(8) == 0 {
					if _, err := tx.Abort(); err != nil {
						t.Fatal(err)
					}
					checkVersion(t, tr, root, model, rng) // put back as it was
					for _, v := range old {
						checkVersion(t, tr, v.root, v.model, rng)
					}
					continue
				}
				r, _, err := tx.Commit()
				if err != nil {
					t.Fatal(err)
				}
				root, model, committed = r, next, uint64(txn)
				checkVersion(t, tr, root, model, rng)
			}
			for _, v := range old {
				checkVersion(t, tr, v.root, v.model, rng)
			}
		})
	}
}

// TestTreeFillFactor: sequential inserts leave leaves about FillFactor full.
func TestTreeFillFactor(t *testing.T) {
	for _, fill := range []float64{1.0, 0.75, 0.5} {
		tr, s, p := newTestTree(t, 4096, 4<<20, fill)
		var root PageID
		tx := tr.Begin(root, 1, 0, 0)
		for i := 0; i < 5000; i++ {
			if err := tx.Put([]byte(fmt.Sprintf("key%08d", i)), bytes.Repeat([]byte("v"), 50)); err != nil {
				t.Fatal(err)
			}
		}
		root, _, err := tx.Commit()
		if err != nil {
			t.Fatal(err)
		}
		if err := p.FlushAll(); err != nil {
			t.Fatal(err)
		}
		// Count leaves: data bytes / (leaves × page size) ≈ fill.
		c := tr.NewCursor(root, nil, nil)
		defer c.Release()
		leaves, used := 0, 0
		var last []byte
		for ok := c.First(); ok; ok = c.Next() {
			if first := node(c.leaf).key(0); !bytes.Equal(last, first) {
				leaves++
				used += 4096 - (node(c.leaf).upper() - nodeHeaderSize - slotSize*node(c.leaf).count())
				last = append(last[:0], first...)
			}
		}
		got := float64(used) / float64(leaves*4096)
		t.Logf("fill %.2f: %d leaves, %.2f full; store r = %.2f", fill, leaves, got, s.Stats().CompressionRatio)
		if got < fill-0.08 || got > fill+0.02 {
			t.Errorf("fill factor %.2f: leaves %.2f full", fill, got)
		}
	}
}

func TestTreeLimits(t *testing.T) {
	tr, _, _ := newTestTree(t, 4096, 1<<20, 1)
	tx := tr.Begin(0, 1, 0, 0)
	if err := tx.Put(nil, []byte("v")); err != ErrEmptyKey {
		t.Errorf("empty key: %v", err)
	}
	if err := tx.Put(make([]byte, tr.MaxKeySize()+1), nil); err == nil {
		t.Error("oversized key accepted")
	}
	if err := tx.Put([]byte("k"), make([]byte, tr.MaxValueSize()+1)); err == nil {
		t.Error("oversized value accepted")
	}
	if err := tx.Put(make([]byte, tr.MaxKeySize()), make([]byte, tr.MaxValueSize())); err != nil {
		t.Errorf("largest key and value: %v", err)
	}
}

package btree

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/bufferpool"
)

// shortKey and tallKey are coldTree's key formats: 7 bytes (trees of
// height 2 at 3,000 rows) and 200 bytes (about 20 children a branch:
// height 3 or more).
func shortKey(i int) string { return fmt.Sprintf("k%06d", i) }
func tallKey(i int) string  { return fmt.Sprintf("%0200d", i) }

// coldTree loads n rows (keys key(i), 100-byte values) through a large
// pool, writes them back, and returns the tree over a new pool of cache
// bytes that holds none of its pages, the root and the rows.
func coldTree(t *testing.T, n int, cache int64, key func(int) string) (*Tree, *bufferpool.Pool, PageID, []kv) {
	t.Helper()
	tr, s, p := newTestTree(t, 4096, 8<<20, 1.0)
	tx := tr.Begin(0, 1, 0, 0)
	var rows []kv
	for i := range n {
		e := kv{key(i), strings.Repeat(string(rune('a'+i%26)), 100)}
		if err := tx.Put([]byte(e.k), []byte(e.v)); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, e)
	}
	root, _, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	cold, err := bufferpool.New(s, bufferpool.Options{CacheSize: cache, Partitions: 2, FixedShare: true, CompressedShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cold.Close() })
	return New(cold, 1.0), cold, root, rows
}

// A bounded scan reads its leaves ahead, readAheadMax at a time, so that
// none of them is a miss of its own, and reads nothing past its bound;
// forwards and backwards, in a tree of height 2 and a taller one (a
// scan across several parents of leaves). A scan without a bound reads
// nothing ahead.
func TestBoundedScansReadAhead(t *testing.T) {
	for _, c := range []struct {
		name   string
		key    func(int) string
		height int
	}{{"short-keys", shortKey, 2}, {"tall", tallKey, 3}} {
		t.Run(c.name, func(t *testing.T) {
			const n = 3000
			tr, p, root, rows := coldTree(t, n, 4<<20, c.key)
			if h := treeHeight(t, tr, root); h < c.height {
				t.Fatalf("test setup: tree of height %d, want at least %d", h, c.height)
			}
			scan := func(lower, upper []byte, back bool) int {
				cur := tr.NewCursor(root, lower, upper)
				defer cur.Release()
				got := 0
				if back {
					for ok := cur.Last(); ok; ok = cur.Prev() {
						got++
					}
				} else {
					for ok := cur.First(); ok; ok = cur.Next() {
						got++
					}
				}
				if err := cur.Err(); err != nil {
					t.Fatal(err)
				}
				return got
			}
			key := func(i int) []byte { return []byte(rows[i].k) }
			for _, s := range []struct {
				from, to int
				back     bool
			}{{100, 1300, false}, {1500, 2700, true}} {
				before := p.Stats()
				if got := scan(key(s.from), key(s.to), s.back); got != s.to-s.from {
					t.Fatalf("scan [%d, %d) back=%v: %d rows", s.from, s.to, s.back, got)
				}
				st := p.Stats()
				misses, hits := st.Misses-before.Misses, st.ReadAheadHits-before.ReadAheadHits
				pages := st.ReadAheadPages - before.ReadAheadPages
				// Misses: the branches on the way (not read ahead once
				// the height is known), at most one per 20 leaves.
				if misses > 1+hits/10 || hits < 2*readAheadMax || pages != hits {
					t.Fatalf("scan [%d, %d) back=%v: %d misses, %d pages read ahead, %d used; want branches only, more than two read-aheads' worth, all used",
						s.from, s.to, s.back, misses, pages, hits)
				}
			}
			before := p.Stats()
			cur := tr.NewCursor(root, key(2750), nil) // no upper bound
			got := 0
			for ok := cur.First(); ok && got < 200; ok = cur.Next() {
				got++
			}
			cur.Release()
			if st := p.Stats(); st.ReadAheadPages != before.ReadAheadPages || st.Misses-before.Misses < 5 {
				t.Fatalf("unbounded scan: %d pages read ahead, %d misses; want none read ahead", st.ReadAheadPages-before.ReadAheadPages, st.Misses-before.Misses)
			}
		})
	}
}

// treeHeight is the number of levels of the tree at root.
func treeHeight(t *testing.T, tr *Tree, root PageID) int {
	t.Helper()
	c := tr.NewCursor(root, nil, nil)
	defer c.Release()
	if !c.First() {
		t.Fatal("empty tree")
	}
	return len(c.stack) + 1
}

// Bounded cursors over a pool that holds a fraction of the tree (pages
// read ahead, evicted and read again as the cursors move) see exactly the
// rows of the model.
func TestCursorModelWithReadAhead(t *testing.T) {
	const n = 3000
	for _, key := range []func(int) string{shortKey, tallKey} {
		tr, p, root, rows := coldTree(t, n, 256<<10, key)
		cursorModelRounds(t, tr, p, root, rows, key)
	}
}

func cursorModelRounds(t *testing.T, tr *Tree, p *bufferpool.Pool, root PageID, rows []kv, key func(int) string) {
	t.Helper()
	const n = 3000
	rng := rand.New(rand.NewPCG(7, 7))
	probe := func() []byte { return []byte(key(rng.IntN(n+2) - 1)) }
	for range 60 {
		var lower, upper []byte
		if rng.IntN(4) > 0 {
			lower = probe()
		}
		if rng.IntN(4) > 0 {
			upper = probe()
		}
		want := slices.DeleteFunc(slices.Clone(rows), func(e kv) bool {
			return (lower != nil && e.k < string(lower)) || (upper != nil && e.k >= string(upper))
		})
		runCursorModel(t, tr, root, lower, upper, want, rng, probe)
	}
	if st := p.Stats(); st.ReadAheadPages == 0 || st.ReadAheadHits == 0 {
		t.Fatalf("no read-ahead: %d pages, %d hits", st.ReadAheadPages, st.ReadAheadHits)
	}
}

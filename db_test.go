package strata

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

func memOptions(fs vfs.FS) *Options {
	return &Options{PageSize: 4096, CacheSize: 1 << 20, Partitions: 2, Codec: "lz4", fs: fs}
}

func TestBasic(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get([]byte("a")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get on empty db: %v", err)
	}
	b := db.NewBatch()
	for i := 0; i < 1000; i++ {
		b.Set([]byte(fmt.Sprintf("key%04d", i)), []byte(fmt.Sprintf("value%d", i)))
	}
	if err := b.Commit(Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Delete([]byte("key0500")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open("db", memOptions(fs)); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, err := db.Get([]byte("key0042"))
	if err != nil || string(v) != "value42" {
		t.Fatalf("get: %q %v", v, err)
	}
	if ok, _ := db.Has([]byte("key0500")); ok {
		t.Fatal("deleted key present")
	}
	it, _ := db.NewIter(&IterOptions{LowerBound: []byte("key0100"), UpperBound: []byte("key0110")})
	var keys []string
	for it.First(); it.Valid(); it.Next() {
		keys = append(keys, string(it.Key()))
	}
	it.Close()
	if len(keys) != 10 || keys[0] != "key0100" || keys[9] != "key0109" {
		t.Fatalf("bounded scan: %v", keys)
	}
}

func TestBadInput(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Set(nil, []byte("v")); !errors.Is(err, ErrEmptyKey) {
		t.Errorf("empty key: %v", err)
	}
	if err := db.Set(make([]byte, db.MaxKeySize()+1), nil); !errors.Is(err, ErrKeyTooLarge) {
		t.Errorf("big key: %v", err)
	}
	if err := db.Set([]byte("k"), make([]byte, db.MaxValueSize()+1)); !errors.Is(err, ErrValueTooLarge) {
		t.Errorf("big value: %v", err)
	}
	if _, err := Open("db", memOptions(fs)); !errors.Is(err, ErrLocked) {
		t.Errorf("second open: %v", err)
	}
	it, _ := db.NewIter(nil)
	it.Close()
	if it.First() || !errors.Is(it.Error(), ErrClosed) || !errors.Is(it.Close(), ErrClosed) {
		t.Error("closed iterator still works")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get([]byte("k")); !errors.Is(err, ErrClosed) {
		t.Errorf("get after close: %v", err)
	}
	if err := db.Set([]byte("k"), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("set after close: %v", err)
	}
	if err := db.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second close: %v", err)
	}
	o := memOptions(fs)
	o.PageSize = 8192
	if _, err := Open("db", o); !errors.Is(err, ErrPageSize) {
		t.Errorf("other page size: %v", err)
	}
	// A directory with other files is not a database.
	fs.MkdirAll("other", 0o755)
	f, _ := fs.OpenFile("other/notes.txt", 0x42, 0o644, vfs.OpenOptions{})
	f.Close()
	if _, err := Open("other", memOptions(fs)); !errors.Is(err, ErrNotDatabase) {
		t.Errorf("foreign directory: %v", err)
	}
}

// TestModel runs random sets, deletes, batches, transactions, snapshots,
// bounded iterators in both directions and reopens against a map.
func TestModel(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 5))
			fs := vfs.NewMem()
			db, err := Open("db", memOptions(fs))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { db.Close() }()
			model := map[string]string{}
			key := func() string { return fmt.Sprintf("k%04d", rng.IntN(800)) }
			type snap struct {
				s *Snapshot
				m map[string]string
			}
			var snaps []snap
			for i := 0; i < 1500; i++ {
				switch r := rng.IntN(100); {
				case r < 35:
					k, v := key(), fmt.Sprintf("v%d-%s", i, bytes.Repeat([]byte{'x'}, rng.IntN(100)))
					if err := db.Set([]byte(k), []byte(v)); err != nil {
						t.Fatal(err)
					}
					model[k] = v
				case r < 45:
					k := key()
					if err := db.Delete([]byte(k)); err != nil {
						t.Fatal(err)
					}
					delete(model, k)
				case r < 55:
					b := db.NewBatch()
					staged := map[string]*string{}
					for j := 0; j < rng.IntN(30); j++ {
						k := key()
						if rng.IntN(4) == 0 {
							b.Delete([]byte(k))
							staged[k] = nil
						} else {
							v := fmt.Sprintf("b%d", i)
							b.Set([]byte(k), []byte(v))
							staged[k] = &v
						}
					}
					if err := b.Commit(NoSync); err != nil {
						t.Fatal(err)
					}
					for k, v := range staged {
						if v == nil {
							delete(model, k)
						} else {
							model[k] = *v
						}
					}
				case r < 60:
					abort := rng.IntN(3) == 0
					k := key()
					err := db.Update(func(tx *Tx) error {
						v, err := tx.Get([]byte(k))
						if err != nil && !errors.Is(err, ErrNotFound) {
							return err
						}
						if err := tx.Set([]byte(k), append(v, 'u')); err != nil {
							return err
						}
						if got, _ := tx.Get([]byte(k)); !bytes.Equal(got, append(v, 'u')) {
							return fmt.Errorf("tx does not see its own write")
						}
						if abort {
							return errors.New("abort")
						}
						return nil
					})
					if abort != (err != nil) {
						t.Fatalf("update: %v", err)
					}
					if !abort {
						model[k] += "u"
					}
				case r < 75:
					k := key()
					v, err := db.Get([]byte(k))
					if mv, ok := model[k]; ok != (err == nil) || (ok && string(v) != mv) {
						t.Fatalf("get %s: %q %v, want %q", k, v, err, mv)
					}
				case r < 80:
					s, err := db.NewSnapshot()
					if err != nil {
						t.Fatal(err)
					}
					snaps = append(snaps, snap{s, maps(model)})
				case r < 85 && len(snaps) > 0:
					j := rng.IntN(len(snaps))
					checkScan(t, rng, snaps[j].m, func(o *IterOptions) *Iterator { it, _ := snaps[j].s.NewIter(o); return it })
					snaps[j].s.Close()
					snaps = slices.Delete(snaps, j, j+1)
				case r < 95:
					checkScan(t, rng, model, func(o *IterOptions) *Iterator { it, _ := db.NewIter(o); return it })
				case r < 97:
					if err := db.Checkpoint(); err != nil {
						t.Fatal(err)
					}
				default:
					for _, s := range snaps {
						s.s.Close()
					}
					snaps = nil
					if err := db.Close(); err != nil {
						t.Fatal(err)
					}
					if db, err = Open("db", memOptions(fs)); err != nil {
						t.Fatal(err)
					}
				}
			}
			checkScan(t, rng, model, func(o *IterOptions) *Iterator { it, _ := db.NewIter(o); return it })
		})
	}
}

func maps(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// checkScan compares a bounded iterator, forward and backward, with model.
func checkScan(t *testing.T, rng *rand.Rand, model map[string]string, open func(*IterOptions) *Iterator) {
	t.Helper()
	var o IterOptions
	if rng.IntN(2) == 0 {
		o.LowerBound = []byte(fmt.Sprintf("k%04d", rng.IntN(800)))
	}
	if rng.IntN(2) == 0 {
		o.UpperBound = []byte(fmt.Sprintf("k%04d", rng.IntN(800)))
	}
	var want []string
	for k, v := range model {
		if (o.LowerBound == nil || k >= string(o.LowerBound)) && (o.UpperBound == nil || k < string(o.UpperBound)) {
			want = append(want, k+"="+v)
		}
	}
	slices.Sort(want)
	it := open(&o)
	defer it.Close()
	var got []string
	for it.First(); it.Valid(); it.Next() {
		got = append(got, string(it.Key())+"="+string(it.Value()))
	}
	if it.Error() != nil {
		t.Fatal(it.Error())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("forward scan %q..%q: %d entries, want %d", o.LowerBound, o.UpperBound, len(got), len(want))
	}
	got = got[:0]
	for it.Last(); it.Valid(); it.Prev() {
		got = append(got, string(it.Key())+"="+string(it.Value()))
	}
	slices.Reverse(got)
	if !slices.Equal(got, want) {
		t.Fatalf("backward scan %q..%q: %d entries, want %d", o.LowerBound, o.UpperBound, len(got), len(want))
	}
}

package strata

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestSeekToOwnKeyUnderEvictions: seeking an iterator to its own Key (a
// slice of the leaf it has pinned) lands on that key while other
// goroutines' misses reuse frames. The seek unpinned the leaf before it
// had read the key to the end, and a frame reused meanwhile changed the
// key under it: 7–79 of 20,000 seeks landed on another key, with no error.
// (Found by a reviewer, thirty-second session.)
func TestSeekToOwnKeyUnderEvictions(t *testing.T) {
	const rows = 20000
	o := memOptions(vfs.NewMem())
	o.CacheSize = 2 * (8*4096 + 64<<10) // the smallest cache: frames are reused all the time
	db, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	key := func(i int) []byte { return []byte(fmt.Sprintf("key%08d", i*7)) }
	b := db.NewBatch()
	for i := 0; i < rows; i++ {
		b.Set(key(i), bytes.Repeat([]byte("v"), 200))
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for !stop.Load() {
				db.Get(key(r.IntN(rows)))
			}
		}(g)
	}
	defer func() { stop.Store(true); wg.Wait() }()
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 20000; i++ {
		it, err := db.NewIter(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !it.SeekGE(key(r.IntN(rows))) {
			t.Fatalf("seek: %v", it.Error())
		}
		want := bytes.Clone(it.Key())
		var ok bool
		if i%2 == 0 {
			ok = it.SeekGE(it.Key())
		} else if it.SeekLT(it.Key()) {
			ok = it.Next() // the key before, then the one after it: the own key again
		} else if it.Error() == nil {
			ok = it.First() // the own key was the first
		}
		if !ok || !bytes.Equal(it.Key(), want) {
			t.Fatalf("seek %d to the iterator's own key %q: %v at %q (%v)", i, want, ok, it.Key(), it.Error())
		}
		it.Close()
	}
}

// TestSeekCopiesWithoutAllocating: the seek's copy of its key lives in the
// iterator while the key is short (64 bytes): an iterator and its seeks
// cost the one allocation of the iterator, as before the copy.
func TestSeekCopiesWithoutAllocating(t *testing.T) {
	db, err := Open("db", memOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, k := range []string{"k1", "k2"} {
		if err := db.Set([]byte(k), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		it, err := db.NewIter(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !it.SeekGE([]byte("k1")) || !it.SeekLT([]byte("k2")) {
			t.Fatal("seek")
		}
		it.Close()
	})
	if allocs > 1 {
		t.Fatalf("an iterator with two seeks: %v allocations, want 1 (the iterator)", allocs)
	}
}

package btree

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/bufferpool"
)

// TestGuardedSurvivesGarbage: an optimistic read may see any bytes (a page
// being replaced in its frame). Searching them, as a branch or as a leaf
// whose value is copied out, must not crash the process: guarded turns
// the search's panics into a failed read.
func TestGuardedSurvivesGarbage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	page := make([]byte, 4096)
	failed := 0
	for i := 0; i < 20000; i++ {
		for j := range page {
			page[j] = byte(rng.Uint32())
		}
		page[0] = kindBranch
		if i%4 >= 2 {
			page[0] = kindLeaf
		}
		if i%2 == 0 {
			// Slots that mostly point inside the page, cells that mostly
			// do not end there.
			page[2], page[3] = byte(rng.IntN(256)), 0
		}
		key := []byte(fmt.Sprint(rng.Uint64()))
		if !guarded(node(page), true, true, func(n node) error {
			if n.kind() == kindBranch {
				_ = n.child(n.childFor(key))
				return nil
			}
			// A point lookup's leaf read (Tree.lookup).
			if i, ok := n.search(key); ok {
				v, _, _ := n.value(i)
				_ = append([]byte(nil), v...)
			}
			return nil
		}) {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no garbage page made the search fail: the test does not test the guard")
	}
	if guarded(node(page[:nodeHeaderSize]), true, false, func(n node) error { panic("not a runtime error") }) {
		t.Fatal("a panicking read was accepted")
	}
}

// TestLookupsRacingEviction: point lookups and scans of one version run
// while other goroutines read a second tree through the same small pool,
// so the first tree's branches leave their frames, and their frames take
// other pages, under the optimistic reads of the lookups. Every lookup
// and scan must find exactly the version's contents.
func TestLookupsRacingEviction(t *testing.T) {
	// Long keys: branches of a few children each, more of them than the
	// frames hold, so that inner pages are evicted too.
	tr, _, _ := newTestTree(t, 4096, 384<<10, 1.0)
	pad := strings.Repeat("k", 300)
	key := func(prefix string, i int) string { return fmt.Sprintf("%s%07d%s", prefix, i, pad) }
	build := func(prefix string, n int) (PageID, map[string]string) {
		tx := tr.Begin(0, 1, 0, 0)
		model := make(map[string]string, n)
		for i := range n {
			k, v := key(prefix, i*7), fmt.Sprintf("value %d of %s", i, prefix)
			if err := tx.Put([]byte(k), []byte(v)); err != nil {
				t.Fatal(err)
			}
			model[k] = v
		}
		root, _, err := tx.Commit()
		if err != nil {
			t.Fatal(err)
		}
		return root, model
	}
	const nA, nB = 4000, 8000
	rootA, modelA := build("a", nA)
	rootB, _ := build("b", nB)

	rounds := 12000
	if raceEnabled {
		rounds = 1500
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 2 {
		wg.Add(1)
		go func() { // churn: another tree's pages through the pool
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for range rounds {
				k := key("b", rng.IntN(nB)*7)
				if _, ok, err := tr.Get(rootB, []byte(k), nil); err != nil || !ok {
					errs <- fmt.Errorf("churn Get(%s): %v %v", k, ok, err)
					return
				}
			}
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 10))
			for r := range rounds {
				i := rng.IntN(nA)
				k := key("a", i*7+rng.IntN(2)) // present, or not
				v, ok, err := tr.Get(rootA, []byte(k), nil)
				if mv, mok := modelA[k]; err != nil || ok != mok || string(v) != mv {
					errs <- fmt.Errorf("Get(%s) = %q %v %v, want %q %v", k, v, ok, err, mv, mok)
					return
				}
				if r%8 != 0 {
					continue
				}
				c := tr.NewCursor(rootA, []byte(k), nil)
				want := i
				if k != key("a", i*7) {
					want++
				}
				n := 0
				for ok := c.First(); ok && n < 40 && want+n < nA; ok = c.Next() {
					if got, w := string(c.Key()), key("a", (want+n)*7); got != w {
						c.Release()
						errs <- fmt.Errorf("scan from %s: key %d is %s, want %s", k, n, got, w)
						return
					}
					n++
				}
				err = c.Err()
				c.Release()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestReadsPeekBranches: once a branch has been read (and marked inner),
// point lookups, scans' seeks and a writer's descents read it
// optimistically, without its latch: the point of peek.go. A change that
// quietly sent them back to the latch would pass every other test.
func TestReadsPeekBranches(t *testing.T) {
	if !bufferpool.OptimisticReads {
		t.Skip("no optimistic reads on this machine")
	}
	if testing.Short() && raceEnabled {
		t.Skip("slow under -race -short")
	}
	tr, _, _ := newTestTree(t, 4096, 8<<20, 1.0)
	tx := tr.Begin(0, 1, 0, 0)
	key := func(i int) []byte { return fmt.Appendf(nil, "key%07d", i) }
	const n = 20000
	for i := range n {
		if err := tx.Put(key(i), []byte("a value of some length, to fill the leaves")); err != nil {
			t.Fatal(err)
		}
	}
	root, _, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := tr.Get(root, key(0), nil); err != nil || !ok {
		t.Fatal("first lookup", ok, err) // reads (and marks) the path's branches with their latches
	}
	var good, bad, leaves int
	peekHook = func(_ PageID, leaf, ok bool) {
		switch {
		case ok && leaf:
			leaves++
		case ok:
			good++
		default:
			bad++
		}
	}
	defer func() { peekHook = nil }()
	count := func(what string, read func()) {
		t.Helper()
		good, bad, leaves = 0, 0, 0
		read()
		if good == 0 {
			t.Errorf("%s: no branch peeked (%d peeks failed)", what, bad)
		}
	}
	count("point lookups", func() {
		for i := 0; i < n; i += 1000 {
			if _, ok, err := tr.Get(root, key(i), nil); err != nil || !ok {
				t.Fatal(i, ok, err)
			}
		}
		if leaves == 0 {
			t.Error("point lookups: no leaf peeked")
		}
	})
	count("a scan's seek", func() {
		c := tr.NewCursor(root, key(n/2), nil)
		if !c.First() {
			t.Fatal(c.Err())
		}
		c.Release()
	})
	count("a writer's descents", func() {
		tx := tr.Begin(root, 2, 1, 1)
		if err := tx.Put(key(n/3), []byte("changed")); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Abort(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPeekedLeafChangedMidRead: a point lookup that peeks its leaf copies
// the value out before it knows the read was good. When the page's frame
// is latched exclusively in between (a writer, an eviction), the read
// must fail and the lookup read the leaf again with its latch, returning
// the value once: not what the failed read appended, and not twice.
func TestPeekedLeafChangedMidRead(t *testing.T) {
	if !bufferpool.OptimisticReads {
		t.Skip("no optimistic reads on this machine")
	}
	tr, _, pool := newTestTree(t, 4096, 8<<20, 1.0)
	tx := tr.Begin(0, 1, 0, 0)
	key := func(i int) []byte { return fmt.Appendf(nil, "key%07d", i) }
	val := func(i int) string { return fmt.Sprintf("value %d, of some length to fill leaves", i) }
	const n = 2000
	for i := range n {
		if err := tx.Put(key(i), []byte(val(i))); err != nil {
			t.Fatal(err)
		}
	}
	root, _, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	for i := range n { // read (and mark) every page with its latch
		if _, ok, err := tr.Get(root, key(i), nil); err != nil || !ok {
			t.Fatal(i, ok, err)
		}
	}
	var leafPeeks, failed int
	peekReadHook = func(id PageID) {
		pg, err := pool.Get(id, bufferpool.Exclusive)
		if err != nil {
			t.Error(err)
			return
		}
		if pg.Data()[0] == kindLeaf {
			leafPeeks++
		}
		pg.Release() // the version moved: the peek must fail
	}
	peekHook = func(_ PageID, _, ok bool) {
		if !ok {
			failed++
		}
	}
	defer func() { peekReadHook, peekHook = nil, nil }()
	for i := 0; i < n; i += 7 {
		prefix := []byte("prefix:")
		got, ok, err := tr.Get(root, key(i), prefix)
		if err != nil || !ok || string(got) != "prefix:"+val(i) {
			t.Fatalf("key %d: got %q %v %v, want %q", i, got, ok, err, "prefix:"+val(i))
		}
	}
	if leafPeeks == 0 || failed == 0 {
		t.Fatalf("%d leaf peeks, %d failed peeks: the test tests nothing", leafPeeks, failed)
	}
}

// TestForgetClearsFailedPeekBytes: what a failed leaf peek appended to a
// lookup's buffer (perhaps another page's bytes) is not left reachable in
// the caller's spare capacity, and a new array it grew is dropped.
func TestForgetClearsFailedPeekBytes(t *testing.T) {
	orig := append(make([]byte, 0, 64), "prefix:"...)
	dst := append(orig, "bytes of another page"...)
	got := forget(orig, dst)
	if string(got) != "prefix:" || cap(got) != 64 {
		t.Fatalf("forget returned %q (cap %d)", got, cap(got))
	}
	for i, b := range got[len(got):cap(got)] {
		if b != 0 {
			t.Fatalf("byte %d past the prefix left as %q", i, b)
		}
	}
	grown := append(orig, make([]byte, 100)...) // a new array
	if got := forget(orig, grown); &got[:1][0] != &orig[:1][0] || len(got) != len(orig) {
		t.Fatal("forget kept the array a failed peek grew")
	}
	if got := forget(nil, []byte("garbage")); got != nil {
		t.Fatalf("forget of a nil buffer returned %q", got)
	}
}

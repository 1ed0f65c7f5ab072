package strata

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/btree"
	"github.com/stratadb/strata/internal/vfs"
)

// TestAbortFreeErrorsAreRetried: pages of a discarded transaction that
// cannot be freed at once are counted, retried at the next checkpoint, and
// nothing leaks: after a clean Close and Open the store holds only the
// pages the tree reaches.
func TestAbortFreeErrorsAreRetried(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs)
	opts.DisableDeferredCommits = true // the commit itself meets the failing reads
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	// More than the cache holds, incompressible: a later batch misses.
	rng := rand.New(rand.NewPCG(3, 3))
	load := db.NewBatch()
	for i := 0; i < 6000; i++ {
		v := make([]byte, 300)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		load.Set([]byte(fmt.Sprintf("k%04d", i)), v)
	}
	if err := load.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	before := db.Stats().Store.LivePages
	realFree := db.freePage
	failures := 0
	db.freePage = func(id btree.PageID) error {
		failures++
		return errors.New("injected: page pinned")
	}
	// A commit whose apply fails part-way (a page read error): the pages
	// it had created are freed by abort, and those frees fail.
	var fail atomic.Bool
	fs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpRead && fail.Load() && !strings.Contains(path, "/wal/") {
			return vfs.InjectedError(op, path)
		}
		return nil
	})
	b := db.NewBatch()
	b.Set([]byte("zzz"), make([]byte, 3*db.tree.MaxInlineValueSize())) // overflow pages first
	for i := 0; i < 6000; i += 7 {
		b.Set([]byte(fmt.Sprintf("k%04d", i)), make([]byte, 60))
	}
	fail.Store(true)
	if err := b.Commit(nil); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("commit with failing reads: %v", err)
	}
	fail.Store(false)
	fs.SetInjector(nil)
	db.freePage = realFree
	st := db.Stats()
	if failures == 0 || st.DeferredFrees != int64(failures) || st.PendingFreePages < failures {
		t.Fatalf("%d failed frees: DeferredFrees %d, PendingFreePages %d", failures, st.DeferredFrees, st.PendingFreePages)
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if st := db.Stats(); st.PendingFreePages != 0 || st.Store.LivePages != before {
		t.Fatalf("after the checkpoint: %d pending, %d live pages (%d before the transaction)", st.PendingFreePages, st.Store.LivePages, before)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := db.Stats().OrphansFreed; n != 0 || db.walkedAtOpen {
		t.Fatalf("Close was not clean: Open walked the tree and freed %d unreachable pages", n)
	}
	if leaked := unreachablePages(t, db); len(leaked) != 0 {
		t.Fatalf("%d pages are in the store but not in the tree: they leaked", len(leaked))
	}
}

package strata

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/btree"
	"github.com/stratadb/strata/internal/vfs"
)

// TestAbortFreeErrorsAreRetried: pages of a discarded transaction that
// cannot be freed at once are counted, retried at the next checkpoint, and
// nothing leaks: the next Open's scan for unreachable pages finds none.
func TestAbortFreeErrorsAreRetried(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 500; i++ {
		if err := db.Set([]byte(fmt.Sprintf("k%04d", i)), make([]byte, 50)); err != nil {
			t.Fatal(err)
		}
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
	_ = db.Update(func(tx *Tx) error {
		for i := 0; i < 500; i += 7 {
			if err := tx.Set([]byte(fmt.Sprintf("k%04d", i)), make([]byte, 60)); err != nil {
				return err
			}
		}
		it, err := tx.NewIter(nil) // writes the transaction's pages
		if err != nil {
			return err
		}
		it.Close()
		return errors.New("discard")
	})
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
	if n := db.Stats().OrphansFreed; n != 0 {
		t.Fatalf("Open freed %d unreachable pages: they had leaked", n)
	}
}

package strata

import (
	"errors"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// TestUpdatePanicReleasesWriter: a panic inside an Update function aborts
// the transaction, reaches the caller, and leaves the database usable
// (later writes, checkpoints and Close do not hang) with no leaked pages.
func TestUpdatePanicReleasesWriter(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	before := db.Stats().Store.LivePages
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want the function's panic", r)
			}
		}()
		_ = db.Update(func(tx *Tx) error {
			for i := 0; i < 200; i++ {
				if err := tx.Set([]byte{byte(i), 'x'}, make([]byte, 100)); err != nil {
					return err
				}
			}
			panic("boom")
		})
	}()
	done := make(chan error, 1)
	go func() {
		if err := db.Set([]byte("after"), []byte("1")); err != nil {
			done <- err
			return
		}
		done <- db.Checkpoint()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("writer lock still held after a panic in Update")
	}
	if _, err := db.Get([]byte{0, 'x'}); err != ErrNotFound {
		t.Fatalf("a write of the panicked transaction is visible: %v", err)
	}
	// The panicked transaction's pages were freed: only the one-row
	// commit's copy-on-write changes the page count.
	if after := db.Stats().Store.LivePages; after > before+1 {
		t.Errorf("live pages %d after the panic, %d before: the transaction's pages leaked", after, before)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestUpdateRefusedWriteKeepsTransaction: a write refused before it changes
// anything returns its error to the function and leaves the transaction
// usable; if the function returns nil, the other writes commit (as the
// Update doc says).
func TestUpdateRefusedWriteKeepsTransaction(t *testing.T) {
	db, err := Open("db", memOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *Tx) error {
		if err := tx.Set([]byte("a"), []byte("1")); err != nil {
			return err
		}
		if err := tx.Set(nil, []byte("x")); !errors.Is(err, ErrEmptyKey) {
			t.Errorf("empty key in a transaction: %v", err)
		}
		if err := tx.Set(make([]byte, db.MaxKeySize()+1), nil); !errors.Is(err, ErrKeyTooLarge) {
			t.Errorf("long key in a transaction: %v", err)
		}
		return tx.Set([]byte("b"), []byte("2"))
	})
	if err != nil {
		t.Fatalf("Update after refused writes: %v", err)
	}
	for _, k := range []string{"a", "b"} {
		if v, err := db.Get([]byte(k)); err != nil || len(v) != 1 {
			t.Errorf("get %s: %q %v", k, v, err)
		}
	}
}

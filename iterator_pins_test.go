package strata

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// within fails the test if f does not return within 10 seconds.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s hangs", what)
		return nil
	}
}

// TestIteratorsLeftOpen: iterators hold the leaf they are on. One left
// open inside Update must not keep the commit (which changes that leaf in
// place) waiting, and ones left open at DB.Close must not keep Close from
// returning; all of them then answer ErrClosed or the transaction's end.
func TestIteratorsLeftOpen(t *testing.T) {
	db, err := Open("db", memOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if err := db.Set([]byte(fmt.Sprintf("k%03d", i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	var leaked *Iterator
	err = within(t, "Update with an iterator left open", func() error {
		return db.Update(func(tx *Tx) error {
			it, err := tx.NewIter(nil)
			if err != nil {
				return err
			}
			if !it.First() {
				return fmt.Errorf("empty: %v", it.Error())
			}
			leaked = it
			return tx.Set([]byte("k000"), []byte("changed")) // on the leaf the iterator holds
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if leaked.First() || leaked.Error() == nil {
		t.Fatalf("iterator of a finished transaction moved: %v", leaked.Error())
	}
	if v, err := db.Get([]byte("k000")); err != nil || string(v) != "changed" {
		t.Fatalf("the commit: %q %v", v, err)
	}
	open := make([]*Iterator, 3)
	for i := range open {
		if open[i], err = db.NewIter(nil); err != nil {
			t.Fatal(err)
		}
		if !open[i].SeekGE([]byte(fmt.Sprintf("k%03d", 30*i))) {
			t.Fatal(open[i].Error())
		}
	}
	if err := within(t, "Close with iterators open", db.Close); err != nil {
		t.Fatal(err)
	}
	for _, it := range open {
		if it.Next() || !errors.Is(it.Error(), ErrClosed) {
			t.Fatalf("iterator after Close: valid %v, %v", it.Valid(), it.Error())
		}
		if err := it.Close(); err != nil {
			t.Fatalf("closing an iterator after the database: %v", err)
		}
	}
}

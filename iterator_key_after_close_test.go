package strata

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestIteratorKeyAfterRelease: an iterator positioned on a key whose leaf
// was let go of — by DB.Close, or by the end of its transaction — answers
// Key and Value with nil and Valid with false instead of reading the
// released leaf (Key used to index a nil page and panic; with the pool
// unmapped, it read unmapped memory).
func TestIteratorKeyAfterRelease(t *testing.T) {
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
	if err := db.View(func(tx *Tx) error {
		it, err := tx.NewIter(nil)
		if err != nil {
			return err
		}
		if !it.First() {
			return fmt.Errorf("empty: %v", it.Error())
		}
		leaked = it
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if leaked.Valid() || leaked.Key() != nil || leaked.Value() != nil {
		t.Fatalf("iterator of a finished transaction: valid %v, key %q", leaked.Valid(), leaked.Key())
	}
	if leaked.Error() == nil {
		t.Fatal("iterator of a finished transaction: no error")
	}
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !it.SeekGE([]byte("k050")) {
		t.Fatal(it.Error())
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if it.Valid() || it.Key() != nil || it.Value() != nil {
		t.Fatalf("iterator after DB.Close: valid %v, key %q", it.Valid(), it.Key())
	}
	if !errors.Is(it.Error(), ErrClosed) {
		t.Fatalf("iterator after DB.Close: %v", it.Error())
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
}

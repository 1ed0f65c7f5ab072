package strata

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// largeValue is n deterministic bytes, different per seed, that compress
// (as real large values usually do) but not to nothing.
func largeValue(seed, n int) []byte {
	v := make([]byte, n)
	x := uint32(seed*2654435761 + 1)
	for i := range v {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		v[i] = 'a' + byte(x%16)
	}
	return v
}

// TestLargeValues: values beyond a quarter page go to overflow pages and
// come back intact through Get, iterators, snapshots, transactions and
// reopen; replacing and deleting them gives their pages back.
func TestLargeValues(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	baseline := db.Stats().Store.LivePages
	sizes := []int{db.MaxKeySize() + 100, 5000, 40_000, 1 << 20}
	for i, n := range sizes {
		if err := db.Set([]byte(fmt.Sprintf("big%d", i)), largeValue(i, n)); err != nil {
			t.Fatalf("set %d bytes: %v", n, err)
		}
	}
	snap, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Overwrite every value: the snapshot still sees the old ones.
	err = db.Update(func(tx *Tx) error {
		for i, n := range sizes {
			k := []byte(fmt.Sprintf("big%d", i))
			if v, err := tx.Get(k); err != nil || !bytes.Equal(v, largeValue(i, n)) {
				return fmt.Errorf("tx.Get %s: %v", k, err)
			}
			if err := tx.Set(k, largeValue(i+100, n/2)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(get func([]byte) ([]byte, error), seed int, half bool) {
		t.Helper()
		for i, n := range sizes {
			if half {
				n /= 2
			}
			v, err := get([]byte(fmt.Sprintf("big%d", i)))
			if err != nil || !bytes.Equal(v, largeValue(i+seed, n)) {
				t.Fatalf("value %d (%d bytes): %d bytes, err %v", i, n, len(v), err)
			}
		}
	}
	check(snap.Get, 0, false)
	check(db.Get, 100, true)
	it, err := snap.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for it.First(); it.Valid(); it.Next() {
		if !bytes.Equal(it.Value(), largeValue(i, sizes[i])) {
			t.Fatalf("iterator value %d differs", i)
		}
		i++
	}
	if it.Error() != nil || i != len(sizes) {
		t.Fatalf("iterator: %d values, %v", i, it.Error())
	}
	it.Close()
	snap.Close()

	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open("db", memOptions(fs)); err != nil {
		t.Fatal(err)
	}
	check(db.Get, 100, true)
	for i := range sizes {
		if err := db.Delete([]byte(fmt.Sprintf("big%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if live := db.Stats().Store.LivePages; live > baseline+1 {
		t.Errorf("%d live pages after deleting every value, %d before any: overflow pages leaked", live, baseline)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBatchTooLarge: a batch is one WAL record; a batch that would not
// fit is refused when the write is added, not at commit.
func TestBatchTooLarge(t *testing.T) {
	db, err := Open("db", memOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := db.NewBatch()
	v := make([]byte, db.MaxValueSize())
	n := 0
	for ; n < 10; n++ {
		if err := b.Set([]byte(fmt.Sprintf("k%d", n)), v); err != nil {
			if !errors.Is(err, ErrBatchTooLarge) {
				t.Fatalf("set %d: %v", n, err)
			}
			break
		}
	}
	if n != 3 {
		t.Fatalf("batch took %d values of 16 MiB, want 3 (64 MiB record)", n)
	}
	if err := b.Commit(NoSync); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Get([]byte("k2")); err != nil || len(got) != len(v) {
		t.Fatalf("get: %d bytes, %v", len(got), err)
	}
}

package strata

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/btree"
	"github.com/stratadb/strata/internal/vfs"
)

// TestAppendValue: AppendValue appends the value after dst's bytes (inline
// and overflow values, and an empty one), leaves dst as it was for a
// missing key, and allocates nothing for a cached key when dst has room;
// Get still returns an empty, non-nil slice for an empty value.
func TestAppendValue(t *testing.T) {
	db, err := Open("db", memOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	small, large := []byte("value"), bytes.Repeat([]byte("0123456789"), 2000) // large: overflow pages
	if err := db.Set([]byte("small"), small); err != nil {
		t.Fatal(err)
	}
	if err := db.Set([]byte("large"), large); err != nil {
		t.Fatal(err)
	}
	if err := db.Set([]byte("empty"), nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key  string
		want []byte
	}{{"small", small}, {"large", large}, {"empty", nil}} {
		got, err := db.AppendValue([]byte("prefix:"), []byte(c.key))
		if err != nil || !bytes.Equal(got, append([]byte("prefix:"), c.want...)) {
			t.Fatalf("AppendValue(prefix, %s) = %.20q…, %v", c.key, got, err)
		}
	}
	dst := []byte("prefix:")
	if got, err := db.AppendValue(dst, []byte("missing")); !errors.Is(err, ErrNotFound) || !bytes.Equal(got, dst) {
		t.Fatalf("AppendValue of a missing key = %q, %v: want dst and ErrNotFound", got, err)
	}
	if got, err := db.Get([]byte("empty")); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("Get of an empty value = %#v, %v: want an empty, non-nil slice", got, err)
	}
	buf, key := make([]byte, 0, 64), []byte("small")
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := db.AppendValue(buf[:0], key); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("AppendValue into a buffer with room: %v allocations a read, want 0", allocs)
	}
}

// TestAppendValueAfterARead: a read that misses a page lets the latch go,
// reads the page and looks again (DB.get); the value it then appends
// still follows dst's bytes, which the first look must not have lost.
func TestAppendValueAfterARead(t *testing.T) {
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%07d", i)) }
	pad := bytes.Repeat([]byte{'.'}, 100)
	db := memTable(t, 256<<10, 1, 64<<20, 20000, key, pad) // leaves 12× the cache
	for i := 1000; i < 20000; i++ {                        // push key 123's leaf out
		if _, err := db.Get(key(i)); err != nil {
			t.Fatal(err)
		}
	}
	missed := false
	getReadHook = func([]byte, btree.PageID) { missed = true }
	defer func() { getReadHook = nil }()
	dst := append(make([]byte, 0, 256), "prefix:"...)
	got, err := db.AppendValue(dst, key(123))
	if !missed {
		t.Fatal("the read did not miss a page (test setup)")
	}
	if err != nil || !bytes.Equal(got, append([]byte("prefix:"), pad...)) {
		t.Fatalf("AppendValue after a page read = %.30q…, %v", got, err)
	}
}

package strata

import (
	"bytes"
	"errors"
	"testing"

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

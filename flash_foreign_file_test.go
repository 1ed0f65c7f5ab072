package strata

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestFlashCacheRefusesOtherData: a flash cache Path naming a file that
// holds other data (another database's segment, any file) fails Open and
// leaves the file as it was. Open formatted whatever it found there
// ("cold: no valid superblock"): `strata serve --flash-cache` pointed at a
// segment file destroyed the database. Only an empty file, a cache's own,
// or any file with Format set is taken. (Found by reviewers, thirty-second
// session.)
func TestFlashCacheRefusesOtherData(t *testing.T) {
	fs := vfs.NewMem()
	// Another database, whose first segment file is the victim.
	other, err := Open("other", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	victim := "other/00000001.seg"
	before := readMemFile(t, fs, victim)
	opts := flashOpts(fs, 4<<20, 2<<20)
	opts.FlashCache.Path = victim
	if db, err := Open("db", opts); !errors.Is(err, ErrNotFlashCache) {
		if db != nil {
			db.Close()
		}
		t.Fatalf("Open with a segment file as the flash cache: %v", err)
	}
	if after := readMemFile(t, fs, victim); !bytes.Equal(before, after) {
		t.Fatalf("the segment file changed (%d bytes, was %d)", len(after), len(before))
	}
	if other, err = Open("other", memOptions(fs)); err != nil {
		t.Fatalf("the other database after the refused Open: %v", err)
	}
	if v, err := other.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("the other database's key: %q %v", v, err)
	}
	other.Close()
	// Zeros at the start prove nothing (a partition's first KiB often
	// are): a file with data only from 64 KiB on is refused too, unless
	// Format says it may be overwritten.
	data := make([]byte, 256<<10)
	for i := 64 << 10; i < len(data); i++ {
		data[i] = byte(i)
	}
	writeMemFile(t, fs, "/partition", data)
	opts.FlashCache.Path = "/partition"
	if db, err := Open("db2", opts); !errors.Is(err, ErrNotFlashCache) {
		if db != nil {
			db.Close()
		}
		t.Fatalf("a file zero over its first 64 KiB: %v", err)
	}
	if after := readMemFile(t, fs, "/partition"); !bytes.Equal(after, data) {
		t.Fatal("the refused file changed")
	}
	opts.FlashCache.Format = true
	db, err := Open("db2", opts)
	if err != nil {
		t.Fatalf("the same file with Format: %v", err)
	}
	db.Close()
	// The cache it became is taken without Format.
	opts.FlashCache.Format = false
	if db, err = Open("db2", opts); err != nil {
		t.Fatalf("reopening with its own flash cache: %v", err)
	}
	db.Close()
}

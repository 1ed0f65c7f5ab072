package check

import (
	"encoding/binary"
	"testing"

	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// plantOrphan writes a page no tree reaches into the store of "db", and
// clears the meta page's flags (the format before them) if oldMeta.
func plantOrphan(t *testing.T, fs vfs.FS, oldMeta bool) {
	t.Helper()
	s, err := pagestore.Open("db", pagestore.Options{FS: fs, DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Allocate()
	if err != nil {
		t.Fatal(err)
	}
	writePage(t, s, id, make([]byte, s.PageSize()))
	if oldMeta {
		page := readPage(t, s, 0)
		clear(page[44:])
		writePage(t, s, 0, page)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReportsLeakedPages: a page no tree reaches in a database closed
// cleanly (which Open does not look for) is a leak, neither corruption nor
// repairable; in a database whose meta page is not marked clean, Open frees
// it: repairable.
func TestReportsLeakedPages(t *testing.T) {
	fs, _ := build(t)
	if r := mustCheck(t, fs, "db"); !r.MetaClean || len(r.Problems) != 0 {
		t.Fatalf("a cleanly closed database: meta clean %v, problems %v", r.MetaClean, r.Problems)
	}
	plantOrphan(t, fs, false)
	r := mustCheck(t, fs, "db")
	if r.Leaks() != 1 || r.Corrupt() != 0 || r.Repairable() != 0 || len(r.Problems) != 1 || !r.Problems[0].Leak {
		t.Fatalf("an unreachable page after a clean Close: leaks %d, corrupt %d, repairable %d: %v", r.Leaks(), r.Corrupt(), r.Repairable(), r.Problems)
	}

	fs, _ = build(t)
	plantOrphan(t, fs, true)
	r = mustCheck(t, fs, "db")
	if r.MetaClean || r.Leaks() != 0 || r.Corrupt() != 0 || r.Repairable() != 1 {
		t.Fatalf("an unreachable page, meta page of the old format: meta clean %v, leaks %d, corrupt %d, repairable %d: %v", r.MetaClean, r.Leaks(), r.Corrupt(), r.Repairable(), r.Problems)
	}
}

// TestMetaFlagsChecked: the meta page's flags word is covered by its own
// checksum, and no flag but the clean one is known.
func TestMetaFlagsChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(page []byte)
	}{
		{"flags checksum", func(page []byte) { page[48] ^= 1 }},
		{"unknown flag", func(page []byte) { binary.LittleEndian.PutUint32(page[44:], 3) }},
		{"checksum without flags", func(page []byte) { binary.LittleEndian.PutUint32(page[44:], 0) }},
		{"bytes after the fields", func(page []byte) { page[60] = 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _ := build(t)
			s, err := pagestore.Open("db", pagestore.Options{FS: fs, DisableBackground: true})
			if err != nil {
				t.Fatal(err)
			}
			page := readPage(t, s, 0)
			if binary.LittleEndian.Uint32(page[44:]) != metaClean {
				t.Fatalf("flags %#x after a clean Close", binary.LittleEndian.Uint32(page[44:]))
			}
			tc.edit(page)
			writePage(t, s, 0, page)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if r := mustCheck(t, fs, "db"); r.Corrupt() == 0 {
				t.Fatalf("no corruption reported: %v", r.Problems)
			}
		})
	}
}

package pagestore

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/vfs"
)

// extentStore opens a store on a MemFS whose segments are large enough to
// hold the test's pages together, and writes pages 1..n (version 2:
// compressible) in id order, synced, so that their records lie one after
// another in the files.
func extentStore(t *testing.T, n int) (*Store, *vfs.MemFS, []PageID) {
	t.Helper()
	fs := vfs.NewMem()
	opts := testOptions(fs, mustCodec(t, "zstd"))
	opts.SegmentSize = 4 << 20
	s, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var ids []PageID
	for range n {
		id, err := s.Allocate()
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	return s, fs, ids
}

// readExtents calls ReadImages and checks that each page it returns is the
// page's content; it returns the pages seen and the reads made.
func readExtents(t *testing.T, s *Store, ids []PageID, ver func(PageID) int) (map[PageID]Stamp, int, error) {
	t.Helper()
	seen := map[PageID]Stamp{}
	page := make([]byte, testPageSize)
	reads, err := s.ReadImages(ids, func(id PageID, img Image, at Stamp) {
		if _, dup := seen[id]; dup {
			t.Errorf("page %d returned twice", id)
		}
		seen[id] = at
		if err := codec.Decompress(img.Codec, page, img.Data); err != nil {
			t.Errorf("page %d: %v", id, err)
			return
		}
		if !bytes.Equal(page, pageContent(id, ver(id), testPageSize)) {
			t.Errorf("page %d: wrong content", id)
		}
	})
	return seen, reads, err
}

func version2(PageID) int { return 2 }

// Pages written together are read with one read, in whatever order they
// are asked for; pages far apart with one read each.
func TestReadImagesMergesCloseRecords(t *testing.T) {
	s, _, ids := extentStore(t, 64)
	want := append([]PageID(nil), ids[10:26]...)
	rand.Shuffle(len(want), func(i, j int) { want[i], want[j] = want[j], want[i] })
	seen, reads, err := readExtents(t, s, want, version2)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(want) || reads != 1 {
		t.Fatalf("16 adjacent pages: %d returned with %d reads, want 16 with 1", len(seen), reads)
	}
	// Every fourth of the first 16 pages: the gaps (3 records of about 2
	// KiB) stay within extentGap, so still one read; pages 0 and 63 only,
	// further apart than extentGap: two reads.
	var sparse []PageID
	for i := 0; i < 16; i += 4 {
		sparse = append(sparse, ids[i])
	}
	if a, b := s.pmap.get(ids[0]), s.pmap.get(ids[12]); int64(b.off+b.len)-int64(a.off) > maxExtent {
		t.Fatalf("test setup: pages 0 to 12 span more than an extent")
	}
	if seen, reads, err := readExtents(t, s, sparse, version2); err != nil || len(seen) != len(sparse) || reads != 1 {
		t.Fatalf("every fourth page: %d of %d returned with %d reads (%v), want one read", len(seen), len(sparse), reads, err)
	}
	first, last := s.pmap.get(ids[0]), s.pmap.get(ids[63])
	if gap := int64(last.off) - int64(first.off+first.len); gap <= extentGap {
		t.Fatalf("test setup: pages 0 and 63 only %d bytes apart", gap)
	}
	if seen, reads, err := readExtents(t, s, []PageID{ids[63], ids[0]}, version2); err != nil || len(seen) != 2 || reads != 2 {
		t.Fatalf("two distant pages: %d returned with %d reads (%v), want 2 with 2", len(seen), reads, err)
	}
	st := s.Stats()
	if st.ExtentReads != 4 || st.ExtentPages != 16+4+2 {
		t.Fatalf("stats: %d extent reads of %d pages, want 4 of 22", st.ExtentReads, st.ExtentPages)
	}
}

// Pages not in the store, and pages whose newest record is still in a
// write buffer, are skipped.
func TestReadImagesSkipsWhatItCannotRead(t *testing.T) {
	s, _, ids := extentStore(t, 8)
	if _, _, err := s.WritePage(ids[3], pageContent(ids[3], 3, testPageSize)); err != nil {
		t.Fatal(err)
	}
	if err := s.Free(ids[5]); err != nil {
		t.Fatal(err)
	}
	seen, _, err := readExtents(t, s, append(ids, 999), version2)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := seen[ids[3]]; ok {
		t.Error("a page whose newest record is in a write buffer was returned")
	}
	if _, ok := seen[ids[5]]; ok {
		t.Error("a freed page was returned")
	}
	if len(seen) != 6 {
		t.Errorf("%d pages returned, want 6", len(seen))
	}
}

// A Stamp stays current until the page is written again or freed.
func TestIsCurrentUntilRewritten(t *testing.T) {
	s, _, ids := extentStore(t, 4)
	seen, _, err := readExtents(t, s, ids, version2)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if !s.IsCurrent(id, seen[id]) {
			t.Fatalf("page %d: fresh stamp not current", id)
		}
	}
	if _, _, err := s.WritePage(ids[0], pageContent(ids[0], 3, testPageSize)); err != nil {
		t.Fatal(err)
	}
	if err := s.Free(ids[1]); err != nil {
		t.Fatal(err)
	}
	if s.IsCurrent(ids[0], seen[ids[0]]) {
		t.Error("stamp of a rewritten page still current")
	}
	if s.IsCurrent(ids[1], seen[ids[1]]) {
		t.Error("stamp of a freed page still current")
	}
	if !s.IsCurrent(ids[2], seen[ids[2]]) {
		t.Error("stamp of an untouched page not current")
	}
}

// A read error is returned, not hidden, and reports no page of the
// failed read; a corrupt record is skipped (ReadImage reports it).
func TestReadImagesErrors(t *testing.T) {
	s, fs, ids := extentStore(t, 8)
	fs.SetInjector(vfs.InjectAfter(0, vfs.OpRead))
	seen, reads, err := readExtents(t, s, ids, version2)
	fs.SetInjector(nil)
	if !errors.Is(err, vfs.ErrInjected) || reads != 0 || len(seen) != 0 {
		t.Fatalf("failed read: err %v, %d reads, %d pages; want the injected error and nothing", err, reads, len(seen))
	}
	// Of two reads (pages far apart), the second to start fails: the
	// other's page is still returned, with the error.
	s2, fs2, ids2 := extentStore(t, 64)
	fs2.SetInjector(vfs.InjectAfter(1, vfs.OpRead))
	seen, reads, err = readExtents(t, s2, []PageID{ids2[0], ids2[63]}, version2)
	fs2.SetInjector(nil)
	if !errors.Is(err, vfs.ErrInjected) || reads != 1 || len(seen) != 1 {
		t.Fatalf("one of two reads failed: err %v, %d reads, %d pages; want the error, 1 read, 1 page", err, reads, len(seen))
	}
	loc := s.pmap.get(ids[2])
	path := segmentPath("db", loc.seg)
	f, err := fs.OpenFile(path, os.O_RDWR, 0o644, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff, 0xee}, int64(loc.off)+int64(loc.len)-2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	seen, _, err = readExtents(t, s, ids, version2)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := seen[ids[2]]; ok || len(seen) != 7 {
		t.Fatalf("corrupt record: %d pages returned (page 2 included: %v), want the 7 others", len(seen), ok)
	}
	if _, err := s.ReadImage(ids[2], nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ReadImage of the corrupt record: %v, want ErrCorrupt", err)
	}
}

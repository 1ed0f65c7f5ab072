package bufferpool

import (
	"testing"

	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// coldPool returns a store holding pages 0..n-1 (version 1), all written
// back by a pool with opts' partitions, and a new pool over it that holds
// none of them.
func coldPool(t *testing.T, s Store, n int, opts Options) *Pool {
	t.Helper()
	warm, err := New(s, Options{CacheSize: max(512<<10, opts.CacheSize), Partitions: max(1, opts.Partitions)})
	if err != nil {
		t.Fatal(err)
	}
	populate(t, warm, n)
	if err := warm.Close(); err != nil { // writes every dirty page back
		t.Fatal(err)
	}
	p, err := New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func readVersion(t *testing.T, p *Pool, id PageID) uint64 {
	t.Helper()
	pg, err := p.Get(id, Shared)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Release()
	return pageVersion(t, pg.Data(), id)
}

func span(from, n int) []PageID {
	ids := make([]PageID, n)
	for i := range ids {
		ids[i] = PageID(from + i)
	}
	return ids
}

// Pages read ahead are kept as images, and their uses are compressed hits
// (counted as read-ahead hits), not misses.
func TestReadAheadServesUses(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	p := coldPool(t, s, 300, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.5})
	ids := span(100, 16)
	if n := p.ReadAhead(ids); n != 16 {
		t.Fatalf("read ahead %d pages, want 16", n)
	}
	if n := p.ReadAhead(ids); n != 0 {
		t.Fatalf("read ahead %d cached pages again", n)
	}
	for _, id := range ids {
		if v := readVersion(t, p, id); v != 1 {
			t.Fatalf("page %d: version %d", id, v)
		}
	}
	st := p.Stats()
	if st.Misses != 0 || st.HitsCompressed != 16 || st.ReadAheadHits != 16 || st.ReadAheadPages != 16 || st.ReadAheadReads == 0 {
		t.Fatalf("misses %d, compressed hits %d, read-ahead hits %d, pages %d, reads %d; want 0, 16, 16, 16, > 0",
			st.Misses, st.HitsCompressed, st.ReadAheadHits, st.ReadAheadPages, st.ReadAheadReads)
	}
	checkInvariants(t, p)
}

// staleStore writes a newer version of each page between reading it
// ahead and handing it to the pool: the race with a reader that loads the
// page, changes it, writes it back and lets it go.
type staleStore struct {
	*pagestore.Store
}

func (s staleStore) ReadImages(ids []PageID, fn func(PageID, pagestore.Image, pagestore.Stamp)) (int, error) {
	return s.Store.ReadImages(ids, func(id PageID, img pagestore.Image, at pagestore.Stamp) {
		page := make([]byte, testPageSize)
		fillPage(page, id, 3)
		if _, _, err := s.Store.WritePage(id, page); err != nil {
			panic(err)
		}
		fn(id, img, at)
	})
}

// racingStore loads and changes each page through the pool between
// reading it ahead and handing it over: the page is cached by the time the
// read-ahead would keep it.
type racingStore struct {
	*pagestore.Store
	p *Pool
	t *testing.T
}

func (s *racingStore) ReadImages(ids []PageID, fn func(PageID, pagestore.Image, pagestore.Stamp)) (int, error) {
	return s.Store.ReadImages(ids, func(id PageID, img pagestore.Image, at pagestore.Stamp) {
		pg, err := s.p.Get(id, Exclusive)
		if err != nil {
			s.t.Error(err)
			return
		}
		fillPage(pg.Data(), id, 4)
		pg.MarkDirty()
		pg.Release()
		fn(id, img, at)
	})
}

// Read-ahead never replaces a newer version: not a page changed in a
// frame, nor one loaded while it was read, nor one written to the store
// after its record was read.
func TestReadAheadKeepsNewerVersions(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	opts := Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.5}
	p := coldPool(t, s, 300, opts)
	pg, err := p.Get(5, Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	fillPage(pg.Data(), 5, 2)
	pg.MarkDirty()
	pg.Release()
	p.ReadAhead(span(0, 10))
	if v := readVersion(t, p, 5); v != 2 {
		t.Fatalf("page changed in its frame: version %d after a read-ahead, want 2", v)
	}
	p.Close()

	rs := &racingStore{Store: s, t: t}
	p1, err := New(rs, opts)
	if err != nil {
		t.Fatal(err)
	}
	rs.p = p1
	if n := p1.ReadAhead(span(40, 8)); n != 0 {
		t.Fatalf("kept %d pages loaded while they were read", n)
	}
	for _, id := range span(40, 8) {
		if v := readVersion(t, p1, id); v != 4 {
			t.Fatalf("page %d: version %d, want the one changed in its frame, 4", id, v)
		}
	}
	checkInvariants(t, p1)
	p1.Close()

	p2, err := New(staleStore{s}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if n := p2.ReadAhead(span(20, 8)); n != 0 {
		t.Fatalf("kept %d pages whose records were replaced", n)
	}
	for _, id := range span(20, 8) {
		if v := readVersion(t, p2, id); v != 3 {
			t.Fatalf("page %d: version %d, want the store's newest, 3", id, v)
		}
	}
}

// Read-ahead stays within the budget, evicting images (pages read ahead
// and never used count as unused), and does nothing without images (R = 0).
func TestReadAheadWithinBudget(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	const n = 600
	p := coldPool(t, s, n, Options{CacheSize: 256 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.5})
	for from := 0; from+16 <= n; from += 16 {
		p.ReadAhead(span(from, 16))
		st := p.Stats()
		if st.ResidentBytes+st.MetaBytes > st.CacheSize {
			t.Fatalf("after reading ahead from %d: resident %d + metadata %d > budget %d", from, st.ResidentBytes, st.MetaBytes, st.CacheSize)
		}
	}
	checkInvariants(t, p)
	if st := p.Stats(); st.ReadAheadUnused == 0 || st.ReadAheadPages < n/2 {
		t.Fatalf("read ahead %d pages, %d evicted unused; want most pages and some evicted", st.ReadAheadPages, st.ReadAheadUnused)
	}
	for id := range PageID(n) {
		if v := readVersion(t, p, id); v != 1 {
			t.Fatalf("page %d: version %d", id, v)
		}
	}

	frames := coldPool(t, s, 0, Options{CacheSize: 256 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0})
	if got := frames.ReadAhead(span(0, 16)); got != 0 || frames.Stats().ReadAheadReads != 0 {
		t.Fatalf("R = 0: %d pages read ahead with %d reads, want none", got, frames.Stats().ReadAheadReads)
	}
}

// freeRacingStore reads page id ahead into the pool between the pool's
// drop of a page and the store's free of it (FreePage): the record is
// still the page's newest then, so the image is kept.
type freeRacingStore struct {
	*pagestore.Store
	p *Pool
}

func (s *freeRacingStore) Free(id PageID) error {
	s.p.ReadAhead([]PageID{id})
	return s.Store.Free(id)
}

// A page freed while a read-ahead kept its image leaves nothing behind:
// its id can be used again for a new page.
func TestFreePageDropsImagesReadAheadMeanwhile(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	opts := Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.5}
	coldPool(t, s, 50, opts).Close()
	fs := &freeRacingStore{Store: s}
	p, err := New(fs, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	fs.p = p
	if err := p.FreePage(7); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.ReadAheadPages != 1 {
		t.Fatalf("test setup: %d pages read ahead during the free, want 1", st.ReadAheadPages)
	}
	if _, err := p.GetCached(7, Shared, false); err != ErrNotCached {
		t.Fatalf("freed page still in the pool: %v", err)
	}
	pg, err := p.Create(7)
	if err != nil {
		t.Fatalf("reuse of the freed id: %v", err)
	}
	pg.Release()
	checkInvariants(t, p)
}

// Pages with neighbouring ids share a partition in runs of partRun (in
// partitions of partRunFrames frames or more), so a partition's write-back
// puts them next to each other in the store: after a sequential load
// through four partitions, each aligned run of 16 pages is read ahead with
// one read (with one partition per page's hash, the 16 lay in four
// partitions' regions: four reads). Smaller partitions spread pages one
// by one.
func TestNeighbouringPagesReadTogether(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	// Partitions of 1,024 frames: neighbouring ids go together from there.
	opts := Options{CacheSize: 4 * partRunFrames * testPageSize, Partitions: 4, FixedShare: true, CompressedShare: 0.5}
	p := coldPool(t, s, 512, opts)
	for from := 0; from < 512; from += partRun {
		before := p.Stats().ReadAheadReads
		if n := p.ReadAhead(span(from, partRun)); n != partRun {
			t.Fatalf("pages %d..%d: %d read ahead", from, from+partRun-1, n)
		}
		if reads := p.Stats().ReadAheadReads - before; reads != 1 {
			t.Fatalf("pages %d..%d: read ahead with %d reads, want 1", from, from+partRun-1, reads)
		}
	}
}

// In partitions smaller than partRunFrames frames, consecutive ids are
// spread one by one: a few runs of hot consecutive pages do not crowd one
// partition.
func TestSmallPartitionsSpreadEachPage(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 4 * (partRunFrames / 2) * testPageSize, Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	seen := map[*partition]int{}
	for id := range PageID(partRun) {
		seen[p.partFor(id)]++
	}
	if len(seen) < 3 {
		t.Fatalf("16 consecutive ids over 4 small partitions: %d partitions used", len(seen))
	}
}

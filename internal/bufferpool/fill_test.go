package bufferpool

import (
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// fillAll runs the fill until a step keeps nothing, and returns the pages
// it kept.
func fillAll(p *Pool) int {
	var f filler
	total := 0
	for range 1000 {
		n := p.fillStep(&f, time.Now())
		total += n
		if n == 0 && (f.next == 0 || !p.imagesHaveRoom()) {
			break
		}
	}
	return total
}

// Data that fits in the cache compressed is all in memory after the fill:
// reading every page then misses none, and the budget holds.
func TestFillBringsDataThatFitsCompressed(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	const n = 400 // about 700 KB of images: they fit R = 0.9 of 1 MiB
	p := coldPool(t, s, n, Options{CacheSize: 1 << 20, Partitions: 1, FixedShare: true, CompressedShare: 0.9})
	if kept := fillAll(p); kept != n {
		t.Fatalf("the fill kept %d pages, want all %d", kept, n)
	}
	st := p.Stats()
	if st.FillPages != n || st.FillReads == 0 || st.FillReads > n/8 {
		t.Fatalf("fill: %d pages with %d reads; want %d pages, several a read", st.FillPages, st.FillReads, n)
	}
	if st.ResidentBytes+st.MetaBytes > st.CacheSize {
		t.Fatalf("resident %d + metadata %d > budget %d", st.ResidentBytes, st.MetaBytes, st.CacheSize)
	}
	for id := range PageID(n) {
		if v := readVersion(t, p, id); v != 1 {
			t.Fatalf("page %d: version %d", id, v)
		}
	}
	if st := p.Stats(); st.Misses != 0 || st.ReadAheadHits != n {
		t.Fatalf("after the fill: %d misses, %d read-ahead hits; want 0 and %d", st.Misses, st.ReadAheadHits, n)
	}
	checkInvariants(t, p)
}

// The fill takes only free memory or the images' own share: with the
// images at their share and the budget full of frames it keeps nothing
// and evicts nothing.
func TestFillNeverEvicts(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	const n = 800
	p := coldPool(t, s, n, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.3})
	for id := range PageID(n) { // fill both tiers by use
		readVersion(t, p, id)
	}
	before := p.Stats()
	if before.ImageBytes < before.ImageTargetBytes*8/10 {
		t.Fatalf("test setup: images %d bytes of a share of %d", before.ImageBytes, before.ImageTargetBytes)
	}
	kept := fillAll(p)
	st := p.Stats()
	if kept != 0 || st.ImageEvictions != before.ImageEvictions || st.Evictions != before.Evictions {
		t.Fatalf("full pool: the fill kept %d pages, evicted %d images and %d frames; want none",
			kept, st.ImageEvictions-before.ImageEvictions, st.Evictions-before.Evictions)
	}
}

// A pass that keeps (almost) nothing makes the fill rest.
func TestFillRestsAfterAnEmptyPass(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	const n = 200
	p := coldPool(t, s, n, Options{CacheSize: 1 << 20, Partitions: 1, FixedShare: true, CompressedShare: 0.9})
	var f filler
	now := time.Now()
	for step := 0; f.restUntil.IsZero(); step++ {
		if step == 100 {
			t.Fatal("the fill never rests")
		}
		p.fillStep(&f, now)
	}
	if !f.restUntil.After(now) {
		t.Fatalf("rest until %v, not after %v", f.restUntil, now)
	}
	if got := p.fillStep(&f, now.Add(time.Second)); got != 0 || f.next != 0 {
		t.Fatalf("resting fill kept %d pages, moved to id %d", got, f.next)
	}
}

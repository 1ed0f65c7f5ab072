package bufferpool

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// TestFindRunMatchesBruteForce checks the first-fit search of the image
// arena against a granule-by-granule search, on random arenas: runs that
// cross OS pages, runs inside one, pages not backed by memory that a run
// may cover only as far as the budget allows, and the limit compaction
// passes.
func TestFindRunMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 20000; iter++ {
		pages := 1 + rng.IntN(6)
		pt := &partition{granFree: make([]uint64, pages), partialPages: newBitset(pages), freshPages: newBitset(pages)}
		for pg := range pages {
			switch rng.IntN(4) {
			case 0:
				pt.granFree[pg] = ^uint64(0)
				pt.freshPages.add(pg)
			case 1:
				pt.granFree[pg] = 0
			default:
				// Free granules in runs of random lengths.
				var w uint64
				for b := 0; b < 64; {
					n := 1 + rng.IntN(24)
					if rng.IntN(2) == 0 {
						w |= rangeMask(b, min(b+n, 64))
					}
					b += n
				}
				if w == ^uint64(0) {
					w &^= 1 << rng.IntN(64)
				}
				pt.granFree[pg] = w
			}
			if !pt.freshPages.has(pg) && pt.granFree[pg] != 0 {
				pt.partialPages.add(pg)
			}
		}
		k := 1 + rng.IntN(140)
		fresh := rng.IntN(3)
		limit := rng.IntN(pages + 1)
		got := pt.findRun(k, fresh, limit)
		want := -1
		for g := 0; g+k <= limit*granulesPerPage && want < 0; g++ {
			ok, newPages := true, 0
			for c := g; c < g+k && ok; c++ {
				ok = pt.granFree[c/granulesPerPage]&(1<<(c%granulesPerPage)) != 0
				if c%granulesPerPage == 0 || c == g {
					if pt.freshPages.has(c / granulesPerPage) {
						newPages++
					}
				}
			}
			if ok && newPages <= fresh {
				want = g
			}
		}
		if got != want {
			t.Fatalf("iteration %d: findRun(k %d, fresh %d, limit %d) = %d, want %d; pages %x, fresh pages %v",
				iter, k, fresh, limit, got, want, pt.granFree, pt.freshPages.words)
		}
	}
}

// TestRunStarts checks the in-word run search against a bit-by-bit one.
func TestRunStarts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 10000; iter++ {
		w := rng.Uint64() | rng.Uint64() | rng.Uint64() // long runs of ones
		k := 1 + rng.IntN(64)
		var want uint64
		for i := 0; i+k <= 64; i++ {
			if rangeMask(i, i+k)&w == rangeMask(i, i+k) {
				want |= 1 << i
			}
		}
		if got := runStarts(w, k); got != want {
			t.Fatalf("runStarts(%x, %d) = %x, want %x", w, k, got, want)
		}
	}
}

// arenaPartition returns the single partition of a pool with a 1 MiB
// cache, for tests that place images by hand.
func arenaPartition(t *testing.T) (*Pool, *partition) {
	t.Helper()
	s := openStore(t, vfs.NewMem(), "lz4")
	t.Cleanup(func() { s.Close() })
	p, err := New(s, Options{CacheSize: 1 << 20, Partitions: 1, FixedShare: true, CompressedShare: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, p.parts[0]
}

// attachTestImage gives page id a sole image of n bytes of the given fill
// byte. Called with mu held.
func attachTestImage(t *testing.T, pt *partition, id PageID, n int, fill byte) int32 {
	t.Helper()
	di, d := pt.allocDesc(id)
	d.state.Store(stImage)
	if !pt.attachImage(di, bytes.Repeat([]byte{fill}, n), codec.LZ4, false) {
		t.Fatalf("no room for the image of page %d", id)
	}
	return di
}

// TestCompactionSkipsPageOfPromotion: the highest partly used OS page of
// the image arena holds the extent of an image being promoted (read
// without mu), so it cannot be emptied. Compaction must empty the next
// lower page it can, instead of failing (its caller then evicted images,
// in CLOCK order, until some OS page happened to empty: many evictions for
// one page), and must not move the promoted image.
func TestCompactionSkipsPageOfPromotion(t *testing.T) {
	p, pt := arenaPartition(t)
	pt.mu.Lock()
	// 16 extents of 16 granules: four to an OS page, pages 0-3.
	n := 16*granuleSize - extentHeader
	var dis []int32
	for i := range 16 {
		dis = append(dis, attachTestImage(t, pt, PageID(i), n, byte(i)))
	}
	for i, di := range dis {
		if want := int32(16 * i); pt.desc(di).imgAt != want {
			t.Fatalf("image %d at granule %d, want %d (first fit)", i, pt.desc(di).imgAt, want)
		}
	}
	drop := func(i int) {
		d := pt.desc(dis[i])
		pt.dropImage(d, false)
		pt.retire(dis[i])
	}
	// Page 0: one hole. Page 2: one image left (B). Page 3: one image
	// left (T), being promoted.
	drop(1)
	drop(8)
	drop(9)
	drop(11)
	drop(12)
	drop(13)
	drop(14)
	promoted, moved := pt.desc(dis[15]), pt.desc(dis[10])
	promoted.state.Store(stLoading)
	resident := pt.residentPages
	ok := pt.compactImages()
	promoted.state.Store(stImage)
	if !ok {
		t.Fatal("compaction failed with page 2 free to empty into page 0")
	}
	if promoted.imgAt != 15*16 {
		t.Errorf("the promoted image moved to granule %d", promoted.imgAt)
	}
	if moved.imgAt != 16 {
		t.Errorf("page 2's image moved to granule %d, want 16 (the hole in page 0)", moved.imgAt)
	}
	if !pt.freshPages.has(2) || pt.residentPages != resident-1 {
		t.Errorf("page 2 released %v, resident pages %d → %d", pt.freshPages.has(2), resident, pt.residentPages)
	}
	if got := pt.imageData(moved.imgAt, int(moved.imgLen)); !bytes.Equal(got, bytes.Repeat([]byte{10}, n)) {
		t.Error("the moved image's bytes changed")
	}
	if pt.st.movedImages.Load() != 1 {
		t.Errorf("%d images moved, want 1", pt.st.movedImages.Load())
	}
	pt.mu.Unlock()
	checkInvariants(t, p)
}

// TestCompactionMovesExtentsAcrossPages: an extent that starts in the page
// below the one compaction empties, and one that reaches into the page
// above, are moved whole, and the page goes back to the kernel.
func TestCompactionMovesExtentsAcrossPages(t *testing.T) {
	p, pt := arenaPartition(t)
	pt.mu.Lock()
	// Extents of 40 granules: 0-39, 40-79 (crosses into page 1), 80-119,
	// 120-159 (crosses into page 2), 160-199.
	n := 40*granuleSize - extentHeader
	var dis []int32
	for i := range 5 {
		dis = append(dis, attachTestImage(t, pt, PageID(i), n, byte(i+1)))
	}
	// Free the first: a 40-granule hole in page 0. Page 1 (64-127) holds
	// parts of the extents at 40 and 120 and the whole one at 80.
	pt.dropImage(pt.desc(dis[0]), false)
	pt.retire(dis[0])
	// Only 40 granules are free below page 2: the first extent
	// overlapping it (120, from page 1) moves whole into the hole; the
	// next (160) finds no room and stays.
	if pt.emptyOSPage(2) {
		t.Error("page 2 emptied with room below it for one of its two extents")
	}
	if got := pt.desc(dis[3]).imgAt; got != 0 {
		t.Errorf("the extent at 120 moved to %d, want 0", got)
	}
	if got := pt.desc(dis[4]).imgAt; got != 160 {
		t.Errorf("the extent at 160 moved to %d with no room for it", got)
	}
	// Free the extent at 40: now 160 fits below page 2, which empties.
	pt.dropImage(pt.desc(dis[1]), false)
	pt.retire(dis[1])
	if !pt.emptyOSPage(2) || !pt.freshPages.has(2) {
		t.Errorf("page 2 not emptied with room below it (fresh %v)", pt.freshPages.has(2))
	}
	if got := pt.desc(dis[4]).imgAt; got != 40 {
		t.Errorf("the extent at 160 moved to %d, want 40", got)
	}
	dis = append(dis[:1], dis[2:]...)
	for i, di := range dis[1:] {
		d := pt.desc(di)
		if got := pt.imageData(d.imgAt, int(d.imgLen)); !bytes.Equal(got, bytes.Repeat([]byte{byte(i + 3)}, n)) {
			t.Errorf("image %d's bytes changed after the move", i+2)
		}
	}
	pt.mu.Unlock()
	checkInvariants(t, p)
}

// TestImagesTakeTheirSize: with 4 KiB pages that compress to about 780
// bytes, the images' memory is within a granule and a header of their
// size. Chains of 512-byte chunks took 1,024 bytes for each, a third more,
// so that data which fit in the cache compressed missed (the twelfth
// session's events at 2×).
func TestImagesTakeTheirSize(t *testing.T) {
	cd, err := codec.Parse("lz4")
	if err != nil {
		t.Fatal(err)
	}
	s, err := pagestore.Open("db", pagestore.Options{FS: vfs.NewMem(), PageSize: 4096, Codec: cd, DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := New(s, Options{CacheSize: 2 << 20, Partitions: 1, FixedShare: true, CompressedShare: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const n = 2000 // 8 MiB of pages, about 1.5 MiB compressed
	rng := rand.New(rand.NewPCG(7, 8))
	var ids []PageID
	for range n {
		pg, err := p.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		d := pg.Data()
		clear(d)
		for i := range 760 { // incompressible head, zeros after
			d[i] = byte(rng.Uint32())
		}
		ids = append(ids, pg.ID())
		pg.Release()
	}
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		for _, id := range ids {
			pg, err := p.Get(id, Shared)
			if err != nil {
				t.Fatal(err)
			}
			pg.Release()
		}
	}
	pt := p.parts[0]
	pt.mu.Lock()
	images := pt.images + pt.redundant
	var imgBytes int
	for di := int32(0); di < int32(pt.nDescChunks*descChunkLen); di++ {
		if d := pt.desc(di); d.state.Load() != stFree && d.imgAt >= 0 {
			imgBytes += int(d.imgLen)
		}
	}
	used, resident := pt.imageUsed(), pt.imageBytes()
	pt.mu.Unlock()
	checkInvariants(t, p)
	if images < 500 {
		t.Fatalf("only %d images held: the test needs the compressed tier full", images)
	}
	mean := imgBytes / images
	t.Logf("%d images of %d bytes on average: %d bytes of extents (%.3f×), %d resident (%.3f×)",
		images, mean, used, float64(used)/float64(imgBytes), resident, float64(resident)/float64(imgBytes))
	if limit := imgBytes + images*(extentHeader+granuleSize); used > limit {
		t.Errorf("images of %d bytes take %d bytes of extents, more than a header and a granule each (%d)", imgBytes, used, limit)
	}
	if float64(resident) > 1.1*float64(imgBytes) {
		t.Errorf("images of %d bytes keep %d bytes resident (%.2f×): the arena is fragmented", imgBytes, resident, float64(resident)/float64(imgBytes))
	}
}

// TestImageArenaChurn promotes, demotes, evicts and frees images of many
// sizes (demotions compress, so sizes vary), and checks the arena's
// bookkeeping against the descriptors after each round.
func TestImageArenaChurn(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	keepImages = false // demotions compress: images of many sizes
	defer func() { keepImages = true }()
	p, err := New(s, Options{CacheSize: 1 << 20, Partitions: 1, FixedShare: true, CompressedShare: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const n = 600
	populate(t, p, n)
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	freed := map[PageID]bool{}
	for round := 0; round < 20; round++ {
		// The share swings, so the images grow and shrink: compaction.
		p.SetShare([]float64{0.9, 0.3, 0.6}[round%3])
		for range 300 {
			id := PageID(rng.IntN(n))
			if freed[id] {
				continue
			}
			pg, err := p.Get(id, Shared)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]byte, testPageSize)
			fillPage(want, id, 1)
			if !bytes.Equal(pg.Data(), want) {
				t.Fatalf("round %d: page %d has the wrong bytes", round, id)
			}
			pg.Release()
		}
		for range 10 {
			id := PageID(rng.IntN(n))
			if _, st, _, _, _ := stateOf(p, id); st == stImage && !freed[id] {
				if err := p.FreePage(id); err != nil {
					t.Fatal(err)
				}
				freed[id] = true
			}
		}
		checkInvariants(t, p)
	}
	if p.Stats().MovedImages == 0 {
		t.Error("no image was moved by compaction: the test did not exercise it")
	}
}

// TestBitsetLastBelow checks the query compaction walks down with.
func TestBitsetLastBelow(t *testing.T) {
	s := newBitset(200)
	for _, i := range []int{0, 5, 63, 64, 130, 199} {
		s.add(i)
	}
	for _, c := range []struct{ below, want int }{
		{0, -1}, {1, 0}, {5, 0}, {6, 5}, {63, 5}, {64, 63}, {65, 64}, {130, 64}, {131, 130}, {199, 130}, {200, 199},
	} {
		if got := s.lastBelow(c.below); got != c.want {
			t.Errorf("lastBelow(%d) = %d, want %d", c.below, got, c.want)
		}
	}
	e := newBitset(100)
	if got := e.lastBelow(50); got != -1 {
		t.Errorf("empty set: lastBelow(50) = %d", got)
	}
}

package bufferpool

import (
	"bytes"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// TestPlanPiecesTakesLowestFreeGranules checks the plan of an image's
// pieces on random arenas: pieces in free granules, each within an OS
// page, resident pages below the limit first and in address order, taking
// every free run below the last one, then at most fresh pages not backed
// by memory; and the plan holds the image exactly when the free runs can.
func TestPlanPiecesTakesLowestFreeGranules(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 20000; iter++ {
		pages := 1 + rng.IntN(6)
		pt := &partition{granFree: make([]uint64, pages), granStart: make([]uint64, pages), partialPages: newBitset(pages), freshPages: newBitset(pages)}
		for pg := range pages {
			switch rng.IntN(4) {
			case 0:
				pt.granFree[pg] = ^uint64(0)
				pt.freshPages.add(pg)
				continue
			case 1:
				pt.granFree[pg] = 0
			default:
				var w uint64 // free granules in runs of random lengths
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
			pt.residentPages++
			pt.granulesUsed += 64 - bits.OnesCount64(pt.granFree[pg])
			if pt.granFree[pg] != 0 {
				pt.partialPages.add(pg)
			}
		}
		n := 1 + rng.IntN(9000)
		fresh := rng.IntN(3)
		limit := rng.IntN(pages + 1)
		ok := pt.planPieces(n, fresh, limit)
		// What the free runs below the limit can hold, one piece each.
		capacity, freshLeft := 0, fresh
		for pg := 0; pg < limit; pg++ {
			if pt.freshPages.has(pg) {
				if freshLeft > 0 {
					capacity += granulesPerPage*granuleSize - pieceHeader
					freshLeft--
				}
				continue
			}
			for w := pt.granFree[pg]; w != 0; {
				lo := bits.TrailingZeros64(w)
				run := bits.TrailingZeros64(^(w >> lo))
				capacity += run*granuleSize - pieceHeader
				w &^= rangeMask(lo, lo+run)
			}
		}
		if ok != (capacity >= n) {
			t.Fatalf("iteration %d: plan of %d bytes %v, the free runs below page %d hold %d (fresh %d)", iter, n, ok, limit, capacity, fresh)
		}
		if !ok {
			continue
		}
		held, freshUsed, prev, seenFresh := 0, 0, -1, false
		for i, p := range pt.plan {
			g, k := int(p.g), int(p.k)
			pg := g / granulesPerPage
			if pg >= limit || g%granulesPerPage+k > granulesPerPage || k < 1 {
				t.Fatalf("iteration %d: piece %d at %d of %d granules (limit page %d)", iter, i, g, k, limit)
			}
			if m := rangeMask(g%granulesPerPage, g%granulesPerPage+k); pt.granFree[pg]&m != m {
				t.Fatalf("iteration %d: piece at %d of %d granules takes used granules", iter, g, k)
			}
			isFresh := pt.freshPages.has(pg)
			if isFresh {
				freshUsed++
				seenFresh = true
			} else if seenFresh {
				t.Fatalf("iteration %d: a resident piece at %d after a fresh page", iter, g)
			}
			if !isFresh && g <= prev {
				t.Fatalf("iteration %d: pieces out of address order (%d after %d)", iter, g, prev)
			}
			if i < len(pt.plan)-1 && !isFresh {
				// Not the last: the whole free run.
				if e := g%granulesPerPage + k; e < granulesPerPage && pt.granFree[pg]&(1<<e) != 0 {
					t.Fatalf("iteration %d: piece at %d stops before the end of its free run", iter, g)
				}
			}
			if !isFresh {
				prev = g
			}
			held += k*granuleSize - pieceHeader
		}
		if freshUsed > fresh {
			t.Fatalf("iteration %d: %d fresh pages used, %d allowed", iter, freshUsed, fresh)
		}
		// The fresh pages taken are the lowest ones, in order.
		f := pt.freshPages.first()
		for _, p := range pt.plan {
			if pg := int(p.g) / granulesPerPage; pt.freshPages.has(pg) {
				if pg != f || int(p.g)%granulesPerPage != 0 {
					t.Fatalf("iteration %d: fresh piece at %d, want the start of page %d", iter, p.g, f)
				}
				f = pt.freshPages.nextAfter(f)
			}
		}
		if last := pt.plan[len(pt.plan)-1]; held < n || held-n >= granuleSize {
			t.Fatalf("iteration %d: the pieces hold %d bytes for %d (last piece %d granules)", iter, held, n, last.k)
		}
		// First fit: no free resident granule below the last resident
		// piece is left out.
		if prev >= 0 {
			taken := make([]uint64, pages)
			for _, p := range pt.plan {
				taken[p.g/granulesPerPage] |= rangeMask(int(p.g)%granulesPerPage, int(p.g)%granulesPerPage+int(p.k))
			}
			for c := 0; c < prev; c++ {
				pg := c / granulesPerPage
				if !pt.freshPages.has(pg) && pt.granFree[pg]&(1<<(c%granulesPerPage)) != 0 && taken[pg]&(1<<(c%granulesPerPage)) == 0 {
					t.Fatalf("iteration %d: free granule %d below the last resident piece %d left out", iter, c, prev)
				}
			}
		}
	}
}

// TestEmptyImageNotKept: an image of no bytes (a custom codec's) is not
// attached; there is nothing to read back.
func TestEmptyImageNotKept(t *testing.T) {
	_, pt := arenaPartition(t)
	withLock(pt, func() {
		di, d := pt.allocDesc(1)
		d.state.Store(stImage)
		if pt.attachImage(di, nil, codec.LZ4, false) {
			t.Error("an empty image was attached")
		}
		pt.retire(di)
	})
}

// TestPartitionBudgetBound: a partition's image arena indexes its granules
// by int32, so a partition may not have more than maxPartitionBudget; the
// default number of partitions grows to respect it, and an explicit one
// that does not is refused rather than crashing once the images grow.
func TestPartitionBudgetBound(t *testing.T) {
	ps := max(testPageSize, osPageSize)
	o := Options{CacheSize: 2*maxPartitionBudget + 2, Partitions: 2}
	if err := o.Validate(ps); err == nil || !strings.Contains(err.Error(), "use more partitions") {
		t.Errorf("2 partitions of %d bytes (bound %d): %v", o.CacheSize/2, maxPartitionBudget, err)
	}
	// A cache that needs 64 partitions: the default must grow to them,
	// whatever GOMAXPROCS starts it at.
	o = Options{CacheSize: 64 * maxPartitionBudget}
	start := 1 << bits.Len(uint(runtime.GOMAXPROCS(0)-1))
	if start >= 64 {
		t.Skipf("GOMAXPROCS %d: the default starts at %d partitions", runtime.GOMAXPROCS(0), start)
	}
	if d := o.withDefaults(); d.Partitions != 64 {
		t.Errorf("default partitions for a %d-byte cache: %d, want 64", o.CacheSize, d.Partitions)
	}
	if err := o.Validate(ps); err != nil {
		t.Errorf("default partitions: %v", err)
	}
}

// TestBitsetNextAfter checks the query planPieces walks up with.
func TestBitsetNextAfter(t *testing.T) {
	s := newBitset(200)
	for _, i := range []int{0, 5, 63, 64, 130, 199} {
		s.add(i)
	}
	for _, c := range []struct{ after, want int }{
		{-1, 0}, {0, 5}, {5, 63}, {62, 63}, {63, 64}, {64, 130}, {129, 130}, {130, 199}, {199, -1}, {250, -1},
	} {
		if got := s.nextAfter(c.after); got != c.want {
			t.Errorf("nextAfter(%d) = %d, want %d", c.after, got, c.want)
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
// the image arena holds a piece of an image being promoted (read
// without mu), so it cannot be emptied. Compaction must empty the next
// lower page it can, instead of failing (its caller then evicted images,
// in CLOCK order, until some OS page happened to empty: many evictions for
// one page), and must not move the promoted image.
func TestCompactionSkipsPageOfPromotion(t *testing.T) {
	p, pt := arenaPartition(t)
	withLock(pt, func() { compactionSkipsPageOfPromotion(t, pt) })
	checkInvariants(t, p)
}

func compactionSkipsPageOfPromotion(t *testing.T, pt *partition) {
	// 16 images of one 16-granule piece: four to an OS page, pages 0-3.
	n := 16*granuleSize - pieceHeader
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
	if got := pt.readImage(moved.imgAt, int(moved.imgLen), nil); !bytes.Equal(got, bytes.Repeat([]byte{10}, n)) {
		t.Error("the moved image's bytes changed")
	}
	if pt.st.movedPieces.Load() != 1 {
		t.Errorf("%d pieces moved, want 1", pt.st.movedPieces.Load())
	}
}

// withLock runs f with pt's mutex held, and releases it however f ends
// (a t.Fatal in f would otherwise leave it held, and the pool's Close in
// the test's cleanup would wait for it forever).
func withLock(pt *partition, f func()) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	f()
}

// TestCompactionSplitsPieces: a piece that no single hole below can take
// moves into several, linked in its place in the image's chain, and its
// OS page goes back to the kernel.
func TestCompactionSplitsPieces(t *testing.T) {
	p, pt := arenaPartition(t)
	withLock(pt, func() { compactionSplitsPieces(t, pt) })
	checkInvariants(t, p)
}

func compactionSplitsPieces(t *testing.T, pt *partition) {
	small, large := 8*granuleSize-pieceHeader, 16*granuleSize-pieceHeader
	var dis []int32
	for i := range 8 { // page 0: eight 8-granule images
		dis = append(dis, attachTestImage(t, pt, PageID(i), small, byte(i)))
	}
	for i := 8; i < 20; i++ { // pages 1-3: four 16-granule images each
		dis = append(dis, attachTestImage(t, pt, PageID(i), large, byte(i)))
	}
	drop := func(i int) {
		pt.dropImage(pt.desc(dis[i]), false)
		pt.retire(dis[i])
	}
	// Three 8-granule holes in page 0 (granules 8, 24, 40); page 3 keeps
	// one image, at granule 192.
	drop(1)
	drop(3)
	drop(5)
	drop(17)
	drop(18)
	drop(19)
	d := pt.desc(dis[16])
	if d.imgAt != 192 {
		t.Fatalf("image 16 at granule %d, want 192", d.imgAt)
	}
	if !pt.emptyOSPage(3) || !pt.freshPages.has(3) {
		t.Fatalf("page 3 not emptied into the holes below (fresh %v)", pt.freshPages.has(3))
	}
	var chain []int32
	for g := d.imgAt; g >= 0; {
		chain = append(chain, g)
		_, next, _ := pt.pieceAt(g)
		g = next
	}
	if want := []int32{8, 24, 40}; !slices.Equal(chain, want) {
		t.Errorf("the moved image's pieces at %v, want %v", chain, want)
	}
	if got := pt.readImage(d.imgAt, int(d.imgLen), nil); !bytes.Equal(got, bytes.Repeat([]byte{16}, large)) {
		t.Error("the moved image's bytes changed")
	}
}

// TestImageArenaModel attaches and drops images of random sizes (one byte
// to two pages), compacts at random, and checks every image's bytes
// against a map and the arena's books against the descriptors.
func TestImageArenaModel(t *testing.T) {
	p, pt := arenaPartition(t)
	rng := rand.New(rand.NewPCG(11, 12))
	model := map[PageID][]byte{}
	dis := map[PageID]int32{}
	next := PageID(0)
	for step := 0; step < 4000; step++ {
		withLock(pt, func() { arenaModelStep(t, pt, rng, step, model, dis, &next) })
		if step%500 == 0 {
			checkInvariants(t, p)
		}
	}
	if len(model) == 0 || pt.st.movedPieces.Load() == 0 {
		t.Fatalf("%d images held at the end, %d pieces moved: the test did not exercise the arena", len(model), pt.st.movedPieces.Load())
	}
}

// arenaModelStep is one step of TestImageArenaModel, with mu held.
func arenaModelStep(t *testing.T, pt *partition, rng *rand.Rand, step int, model map[PageID][]byte, dis map[PageID]int32, next *PageID) {
	{
		switch r := rng.IntN(10); {
		case r < 5 || len(model) == 0:
			img := make([]byte, 1+rng.IntN(2*testPageSize))
			for i := range img {
				img[i] = byte(rng.Uint32())
			}
			di, d := pt.allocDesc(*next)
			d.state.Store(stImage)
			if pt.attachImage(di, img, codec.LZ4, false) {
				model[*next], dis[*next] = img, di
			} else {
				pt.retire(di)
			}
			*next++
		case r < 9:
			for id := range model { // a random one
				pt.dropImage(pt.desc(dis[id]), false)
				pt.retire(dis[id])
				delete(model, id)
				delete(dis, id)
				break
			}
		default:
			pt.compactImages()
		}
		// Images the pool evicted to make room are gone from the model.
		for id, di := range dis {
			if d := pt.desc(di); d.state.Load() != stImage || d.pageID() != id {
				delete(model, id)
				delete(dis, id)
			}
		}
		if step%100 == 0 {
			for id, img := range model {
				d := pt.desc(dis[id])
				if got := pt.readImage(d.imgAt, int(d.imgLen), nil); !bytes.Equal(got, img) {
					t.Fatalf("step %d: page %d's image changed", step, id)
				}
			}
		}
	}
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
	ids := newCleanPages(t, p, n, func(_ int, d []byte) {
		for i := range 760 { // incompressible head, zeros after
			d[i] = byte(rng.Uint32())
		}
	})
	readPages(t, p, ids, 3)
	pt := p.parts[0]
	pt.mu.Lock()
	images := pt.images + pt.redundant
	var imgBytes, pieces int
	for di := int32(0); di < int32(pt.nDescChunks*descChunkLen); di++ {
		if d := pt.desc(di); d.state.Load() != stFree && d.imgAt >= 0 {
			imgBytes += int(d.imgLen)
			for g := d.imgAt; g >= 0; pieces++ {
				_, g, _ = pt.pieceAt(g)
			}
		}
	}
	used, resident := pt.imageUsed(), pt.imageBytes()
	pt.mu.Unlock()
	checkInvariants(t, p)
	if images < 500 {
		t.Fatalf("only %d images held: the test needs the compressed tier full", images)
	}
	mean := imgBytes / images
	t.Logf("%d images of %d bytes on average in %d pieces: %d bytes of granules (%.3f×), %d resident (%.3f×)",
		images, mean, pieces, used, float64(used)/float64(imgBytes), resident, float64(resident)/float64(imgBytes))
	if pieces > 2*images {
		t.Errorf("%d images in %d pieces: more than two each", images, pieces)
	}
	if granuleSize != 64 {
		t.Skipf("granules of %d bytes (OS pages of %d): the bound below is for 64", granuleSize, osPageSize)
	}
	// 512-byte chunks: 1,024 bytes for each of these images, 1.29×.
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
	if p.Stats().MovedPieces == 0 {
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

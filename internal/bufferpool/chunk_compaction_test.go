package bufferpool

import (
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestCompactionSkipsPageOfPromotion: the highest partly used OS page of
// the chunk arena holds a chunk of an image being promoted, so it cannot
// be emptied. Compaction must empty the next lower page that it can,
// instead of failing (its caller then evicted images, in CLOCK order,
// until some OS page happened to empty: many evictions for one page).
func TestCompactionSkipsPageOfPromotion(t *testing.T) {
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
	pt := p.parts[0]
	freed := map[PageID]bool{}
	for round := 0; round < 50; round++ {
		for range 200 { // churn: promotions, demotions, image evictions
			id := PageID(rng.IntN(n))
			if freed[id] {
				continue
			}
			pg, err := p.Get(id, Shared)
			if err != nil {
				t.Fatal(err)
			}
			pg.Release()
		}
		// Holes: free a few pages whose images sit in the arena.
		for range 10 {
			id := PageID(rng.IntN(n))
			if _, st, _, _, _ := stateOf(p, id); st == stImage && !freed[id] {
				if err := p.FreePage(id); err != nil {
					t.Fatal(err)
				}
				freed[id] = true
			}
		}
		pt.mu.Lock()
		top := pt.partialPages.last()
		below := -1
		if top >= 0 {
			free := pt.residentPages*chunksPerOSPage - pt.chunksUsed
			if pg := pt.partialPages.lastBelow(top); pg >= 0 {
				used := int(pt.osPageUsed[pg])
				if free-(chunksPerOSPage-int(pt.osPageUsed[top]))-(chunksPerOSPage-used) >= used {
					below = pg
				}
			}
		}
		if below < 0 {
			pt.mu.Unlock()
			continue
		}
		// A chunk of the top page belongs to an image "being promoted".
		var owner *desc
		for c := top * chunksPerOSPage; c < (top+1)*chunksPerOSPage; c++ {
			if !pt.chunkFree.has(c) {
				owner = pt.desc(pt.chunkOwner[c])
				break
			}
		}
		was := owner.state.Load()
		owner.state.Store(stLoading)
		resident := pt.residentPages
		ok := pt.compactChunks()
		owner.state.Store(was)
		topStill := pt.partialPages.has(top)
		belowGone := !pt.partialPages.has(below) && pt.osPageUsed[below] == 0
		residentAfter := pt.residentPages
		pt.mu.Unlock()
		if !ok {
			t.Fatalf("compaction failed with page %d (below the promotion's page %d) free to empty", below, top)
		}
		if !topStill || !belowGone || residentAfter != resident-1 {
			t.Fatalf("compaction: top page still partly used %v, page %d emptied %v, resident pages %d → %d",
				topStill, below, belowGone, resident, residentAfter)
		}
		checkInvariants(t, p)
		return
	}
	t.Fatal("50 rounds of churn left no arena with two partly used pages to compact")
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

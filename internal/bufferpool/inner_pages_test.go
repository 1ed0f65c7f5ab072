package bufferpool

import (
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestInnerPagesStayInFrames: lookups in an index four times the budget at
// R = 0.95 (about 50 frames): each uses one of 16 inner pages, then a
// random leaf. A leaf promoted from its image enters the frames referenced,
// so with one reference bit an inner page that a sixteenth of the lookups
// use missed the frames on 19% of its uses, each then a decompression:
// promoted leaves enter referenced, and the hand turns every few
// evictions. Marked inner (Page.MarkInner), it stays: at most 0.5% of its
// uses are not frame hits (measured 0.01%).
func TestInnerPagesStayInFrames(t *testing.T) {
	marked := innerFrameMisses(t, true)
	unmarked := innerFrameMisses(t, false)
	t.Logf("inner page uses that were not frame hits: %.2f%% marked inner, %.2f%% unmarked", 100*marked, 100*unmarked)
	if marked > 0.005 {
		t.Errorf("%.2f%% of the inner pages' uses were not frame hits, want at most 0.5%%", 100*marked)
	}
	if unmarked < 4*marked || unmarked < 0.01 {
		t.Errorf("unmarked inner pages missed the frames %.2f%% of their uses (marked %.2f%%): the test no longer shows what the mark does", 100*unmarked, 100*marked)
	}
}

// innerFrameMisses runs the lookups and returns the share of the inner
// pages' uses that were not frame hits.
func innerFrameMisses(t *testing.T, mark bool) float64 {
	const budget = 4 << 20
	const inner = 16
	n := 4 * budget / testPageSize
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	writePages(t, s, n)
	p, err := New(s, poolOptions(budget, 0.95))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pt := p.parts[0]
	rng := rand.New(rand.NewPCG(5, 6))
	get := func(id PageID, isInner bool) bool {
		hits := pt.st.hitsU.Load()
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatal(err)
		}
		if isInner && mark {
			pg.MarkInner()
		}
		pageVersion(t, pg.Data(), id)
		pg.Release()
		return pt.st.hitsU.Load() > hits
	}
	lookups := func(k int) (uses, notHits int) {
		for i := 0; i < k; i++ {
			uses++
			if !get(PageID(rng.IntN(inner)), true) {
				notHits++
			}
			get(PageID(inner+rng.IntN(n-inner)), false)
		}
		return uses, notHits
	}
	warm, measured := 2*n, 20000
	if raceEnabled {
		warm, measured = n/2, 3000 // shares of thousands of uses either way; 97 s under -race otherwise
	}
	lookups(warm) // warm up: the images fill
	uses, notHits := lookups(measured)
	return float64(notHits) / float64(uses)
}

// TestInnerPagesOnlyStillEvict: when every frame holds a protected inner
// page, a load still finds a frame (the first protected page goes) rather
// than waiting for one that never comes.
func TestInnerPagesOnlyStillEvict(t *testing.T) {
	const budget = 256 << 10
	n := 4 * budget / testPageSize
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	writePages(t, s, n)
	p, err := New(s, poolOptions(budget, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 4*n; i++ {
		id := PageID(rng.IntN(n))
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatalf("read %d of page %d: %v", i, id, err)
		}
		pg.MarkInner()
		pageVersion(t, pg.Data(), id)
		pg.Release()
	}
	checkInvariants(t, p)
}

package bufferpool

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestInnerPagesCounted: Stats.InnerPages is the number of cached pages
// marked inner, as pages are marked, leave both tiers and are marked again.
func TestInnerPagesCounted(t *testing.T) {
	ip := newInnerPool(t, 256<<10, 0.95)
	const marked = 8
	for id := PageID(0); id < marked; id++ {
		ip.get(t, id, true)
		ip.get(t, id, true) // marked twice, counted once
	}
	if got := ip.p.Stats().InnerPages; got != marked {
		t.Fatalf("InnerPages %d after marking %d pages, want %d", got, marked, marked)
	}
	// Leaves only, until the marked pages have left both tiers.
	rng := rand.New(rand.NewPCG(9, 10))
	for range 8 * ip.n {
		ip.get(t, PageID(marked+rng.IntN(ip.n-marked)), false)
	}
	cached := cachedInner(ip)
	if got := ip.p.Stats().InnerPages; got != int64(cached) {
		t.Fatalf("InnerPages %d, but %d cached pages are marked inner", got, cached)
	}
	if cached == marked {
		t.Fatalf("no marked page left the pool after %d reads of leaves: the test shows nothing", 8*ip.n)
	}
	for id := PageID(0); id < marked; id++ {
		ip.get(t, id, true)
	}
	if got := ip.p.Stats().InnerPages; got != marked {
		t.Fatalf("InnerPages %d after marking the %d pages again, want %d", got, marked, marked)
	}
	checkInvariants(t, ip.p)
}

// cachedInner counts the pages of ip's store that are cached and marked
// inner.
func cachedInner(ip *innerPool) int {
	pt := ip.pt
	pt.mu.RLock()
	defer pt.mu.RUnlock()
	n := 0
	for id := PageID(0); id < PageID(ip.n); id++ {
		if di, ok := pt.table.lookup(id); ok && pt.desc(di).inner.Load() {
			n++
		}
	}
	return n
}

// TestAutoKeepsFramesForInnerPages: lookups in an index four times the
// budget, on a simulated slow device where images pay (the controller
// raises R towards its maximum): each lookup uses one of 40 inner pages,
// then a random leaf. The inner pages take 16% of the budget; at
// R = 0.95 the frames hold 12 pages, so the inner pages cycle through the
// images and a sixth of their uses are decompressions (measured without
// the ceiling: 16.7%, R 0.95; with it 0.14%, R 0.75). The controller must
// keep R at or below innerCeiling (frames for 1.5× the inner pages), and
// the inner pages' uses must be frame hits.
func TestAutoKeepsFramesForInnerPages(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("the controller reads real codec and device times: not under -short or -race")
	}
	const inner = 40
	p, n := simPool(t, 4, hotSetBudget, -1, 200*time.Microsecond, nil)
	rng := rand.New(rand.NewPCG(11, 12))
	lookup := func() (innerHit bool) {
		id := PageID(rng.IntN(inner))
		pt := p.partFor(id)
		hits := pt.st.hitsU.Load()
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatal(err)
		}
		pg.MarkInner()
		pg.Release()
		innerHit = pt.st.hitsU.Load() > hits
		readSimPage(t, p, PageID(inner+rng.Uint64N(n-inner)))
		return innerHit
	}
	var trace []float64
	for range 20 {
		for range 1000 {
			lookup()
		}
		trace = append(trace, p.Share())
	}
	ph := phase{before: p.Stats()}
	const measured = 10000
	notHits := 0
	for range measured {
		if !lookup() {
			notHits++
		}
	}
	ph.after = p.Stats()
	st := ph.after
	t.Logf("%v; R trace %.2f; ceiling %.2f, inner pages %d; inner uses not frame hits %.2f%%", ph, trace, st.ShareCeiling, st.InnerPages, 100*float64(notHits)/measured)
	if st.InnerPages != inner {
		t.Errorf("InnerPages %d, want %d", st.InnerPages, inner)
	}
	want := 1 - innerMargin*float64(inner*hotSetPageSize)/float64(hotSetBudget)
	if st.ShareCeiling > want+0.03 {
		t.Errorf("ceiling %.2f, want about %.2f", st.ShareCeiling, want)
	}
	if st.Share > st.ShareCeiling+1e-9 {
		t.Errorf("R %.2f above the ceiling %.2f (trace %.2f)", st.Share, st.ShareCeiling, trace)
	}
	// Two partitions and the hash of the pages to them leave some slack.
	if notHits > measured/50 {
		t.Errorf("%d of %d uses of inner pages were not frame hits (%.1f%%), want ≤ 2%%", notHits, measured, 100*float64(notHits)/measured)
	}
	checkInvariants(t, p)
}

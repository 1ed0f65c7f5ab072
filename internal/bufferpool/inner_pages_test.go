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
	const inner = 16
	ip := newInnerPool(t, 4<<20, 0.95)
	n := ip.n
	rng := rand.New(rand.NewPCG(5, 6))
	lookups := func(k int) (uses, notHits int) {
		for i := 0; i < k; i++ {
			uses++
			if !ip.get(t, PageID(rng.IntN(inner)), mark) {
				notHits++
			}
			ip.get(t, PageID(inner+rng.IntN(n-inner)), false)
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
	ip := newInnerPool(t, 256<<10, 0)
	rng := rand.New(rand.NewPCG(7, 8))
	for range 4 * ip.n {
		ip.get(t, PageID(rng.IntN(ip.n)), true)
	}
	checkInvariants(t, ip.p)
}

// innerPool is a one-partition pool at a fixed share R over n pages
// written to the store, four times its budget, for the inner-page tests.
type innerPool struct {
	p  *Pool
	pt *partition
	n  int
}

func newInnerPool(t *testing.T, budget int, share float64) *innerPool {
	t.Helper()
	n := 4 * budget / testPageSize
	s := openStore(t, vfs.NewMem(), "zstd")
	t.Cleanup(func() { s.Close() })
	writePages(t, s, n)
	p, err := New(s, poolOptions(int64(budget), share))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return &innerPool{p: p, pt: p.parts[0], n: n}
}

// get reads page id, marks it inner if asked, checks it, and says whether
// the read was a frame hit.
func (ip *innerPool) get(t *testing.T, id PageID, inner bool) bool {
	t.Helper()
	hits := ip.pt.st.hitsU.Load()
	pg, err := ip.p.Get(id, Shared)
	if err != nil {
		t.Fatal(err)
	}
	if inner {
		pg.MarkInner()
	}
	pageVersion(t, pg.Data(), id)
	pg.Release()
	return ip.pt.st.hitsU.Load() > hits
}

// TestPromotedInnerPageIsProtected: an inner page that fell out of
// the frames (unused for a window) and is then used again comes back by a
// promotion from its image. That use should protect it like any other
// (ARCHITECTURE.md: "passes over a marked page used within the last four
// turnovers"); before beginPromote refreshed usedAt (MarkInner sets it
// only on the first mark), the page was unprotected right after the use
// that brought it back.
func TestPromotedInnerPageIsProtected(t *testing.T) {
	ip := newInnerPool(t, 1<<20, 0.95)
	pt, n := ip.pt, ip.n
	get := func(id PageID, inner bool) { ip.get(t, id, inner) }
	get(0, true)
	// Leaves only, until page 0 has left the frames for its image.
	for i := 0; ; i++ {
		get(PageID(1+i%(n-1)), false)
		pt.mu.RLock()
		di, ok := pt.table.lookup(0)
		if !ok {
			pt.mu.RUnlock()
			t.Skip("page 0 dropped altogether, not kept as an image")
		}
		st := pt.desc(di).state.Load()
		pt.mu.RUnlock()
		if st == stImage {
			break
		}
		if i > 100*n {
			t.Fatal("page 0 never left the frames")
		}
	}
	get(0, true) // used again: promoted from its image
	pt.mu.Lock()
	di, ok := pt.table.lookup(0)
	if !ok {
		pt.mu.Unlock()
		t.Fatal("page 0 not cached after its promotion")
	}
	d := pt.desc(di)
	state, inner, prot := d.state.Load(), d.inner.Load(), pt.innerProtected(d)
	age := pt.frameEvictions.Load() - d.usedAt.Load()
	window := uint32(innerWindow * max(pt.framesUsed, 1))
	pt.mu.Unlock()
	if state != stFrame || !inner {
		t.Fatalf("page 0 after its use: state %d inner %v", state, inner)
	}
	if !prot {
		t.Errorf("inner page 0 just used (promoted) is not protected: last use recorded %d evictions ago, window %d", age, window)
	}
}

// TestRoomForImageKeepsProtectedInnerPages: roomForImage makes room
// for an image with evictFrame(true), and may fall back to evicting an
// image. evictFrame's fallback (the first protected inner page goes "when
// nothing else can") must not apply there: it demoted a protected inner
// page although an image could have been evicted instead.
func TestRoomForImageKeepsProtectedInnerPages(t *testing.T) {
	const inner = 16
	ip := newInnerPool(t, 1<<20, 0.5)
	p, pt, n := ip.p, ip.pt, ip.n
	get := func(id PageID, isInner bool) { ip.get(t, id, isInner) }
	for i := 0; i < 2*n; i++ {
		get(PageID(inner+(i*7919)%(n-inner)), false)
	}
	for i := 0; i < 4*n; i++ {
		get(PageID(i%inner), true)
		get(PageID(inner+(i*7919)%(n-inner)), false)
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	// The protected inner pages get redundant images (as promoted pages
	// keep theirs).
	for f, di := range pt.frameDesc {
		if di < 0 {
			continue
		}
		d := pt.desc(di)
		if d.state.Load() == stFrame && pt.innerProtected(d) && d.imgAt < 0 {
			img, err := p.codec.Compress(nil, pt.frameData(int32(f)))
			if err != nil {
				t.Fatal(err)
			}
			pt.attachImage(di, img, p.codec.ID(), true)
		}
	}
	// Only the protected inner pages keep redundant images in frames.
	protected := 0
	for _, di := range pt.frameDesc {
		if di < 0 {
			continue
		}
		d := pt.desc(di)
		if d.state.Load() != stFrame {
			continue
		}
		if !pt.innerProtected(d) {
			pt.dropImage(d, true)
		} else if d.imgAt >= 0 && !d.dirty.Load() && d.pins.Load() == 0 {
			d.ref.Store(false)
			protected++
		}
	}
	for pt.releaseIdleFrame() {
	}
	for pt.imagesOverShareBy(osPageSize) && pt.evictImage() {
	}
	if protected == 0 || pt.images == 0 || pt.imagesOverShareBy(osPageSize) {
		t.Skipf("setup: %d protected inner frames with images, %d images, over share %v", protected, pt.images, pt.imagesOverShareBy(osPageSize))
	}
	imagesBefore := pt.images
	evBefore := pt.frameEvictions.Load()
	if !pt.roomForImage() {
		t.Fatal("roomForImage found nothing")
	}
	if pt.frameEvictions.Load() != evBefore {
		t.Errorf("roomForImage demoted a protected inner page (%d protected inner frames, %d images that could have gone instead: now %d)", protected, imagesBefore, pt.images)
	}
}

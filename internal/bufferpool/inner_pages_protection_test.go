package bufferpool

import (
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestPromotedInnerPageIsProtected: an inner page that fell out of
// the frames (unused for a window) and is then used again comes back by a
// promotion from its image. That use should protect it like any other
// (ARCHITECTURE.md: "passes over a marked page used within the last four
// turnovers"); before beginPromote refreshed usedAt (MarkInner sets it
// only on the first mark), the page was unprotected right after the use
// that brought it back.
func TestPromotedInnerPageIsProtected(t *testing.T) {
	const budget = 1 << 20
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
	get := func(id PageID, inner bool) {
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatal(err)
		}
		if inner {
			pg.MarkInner()
		}
		pageVersion(t, pg.Data(), id)
		pg.Release()
	}
	get(0, true)
	// Leaves only, until page 0 has left the frames for its image.
	for i := 0; ; i++ {
		get(PageID(1+i%(n-1)), false)
		pt.mu.RLock()
		di, ok := pt.table[0]
		st := pt.desc(di).state.Load()
		pt.mu.RUnlock()
		if !ok {
			t.Skip("page 0 dropped altogether, not kept as an image")
		}
		if st == stImage {
			break
		}
		if i > 100*n {
			t.Fatal("page 0 never left the frames")
		}
	}
	get(0, true) // used again: promoted from its image
	pt.mu.Lock()
	d := pt.desc(pt.table[0])
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
	const budget = 1 << 20
	const inner = 16
	n := 4 * budget / testPageSize
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	writePages(t, s, n)
	p, err := New(s, poolOptions(budget, 0.5))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pt := p.parts[0]
	get := func(id PageID, isInner bool) {
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatal(err)
		}
		if isInner {
			pg.MarkInner()
		}
		pg.Release()
	}
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
		if d.state.Load() == stFrame && pt.innerProtected(d) && d.chunk < 0 {
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
		} else if d.chunk >= 0 && !d.dirty.Load() && d.pins.Load() == 0 {
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

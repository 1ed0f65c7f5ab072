package bufferpool

import (
	"errors"
	"fmt"
	"time"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
)

// Page access: hits, loads (promotion of an image, or a miss read from the
// store), new pages, release, dirtying, dropping and discarding.
//
// Lock rules: a hit takes no partition lock and no pin (tryHit: a TryLock
// of the frame's latch, then a check against the descriptor). get's
// other paths and load take mu themselves (shared to find a page in
// transit, exclusively to load) and return without it, holding the page's
// latch in the caller's mode. The store read, decompression and verification of
// a load run without mu, on a descriptor in state stLoading whose frame
// latch the loader holds exclusively. The helpers named begin*, finish*
// and abortLoad are called with mu held and return with it held.

// access says how get may bring a page in, and whether a hit counts.
type access uint8

const (
	accessRead       access = iota // Get: read the store if need be
	accessCached                   // GetCached counting: memory only
	accessLook                     // GetCached not counting: frames only (an image is not promoted)
	accessWarm                     // Prefetch: read the store if need be, for a use that follows
	accessOverlapped               // PrefetchOverlapped: accessWarm for a use that does not wait for the read
)

// warm says whether acc reads for a use that follows (Prefetch,
// PrefetchOverlapped), which counts as that use.
func (acc access) warm() bool { return acc == accessWarm || acc == accessOverlapped }

// cachedOnly says whether acc must not read the store.
func (acc access) cachedOnly() bool { return acc == accessCached || acc == accessLook }

// countHit counts a frame hit on d by an access that counts (count):
// unless it is the first use of a page Prefetch brought in, whose read
// counted as that use already.
func (pt *partition) countHit(d *desc, count bool) {
	if !count {
		return
	}
	if d.warmed.Load() && d.warmed.CompareAndSwap(true, false) {
		return
	}
	pt.st.hitsU.add(1)
}

// get takes page id in mode, loading it if it is not in a frame. With
// accessCached or accessLook it returns ErrNotCached instead of reading
// the store, or of waiting for another goroutine's load or demotion of the
// page (the caller may hold a lock that goroutine's caller waits for).
// A frame hit counts with accessRead and accessCached only (a prefetch's
// hit leaves the count to the use that follows); a load always counts.
func (pt *partition) get(id PageID, mode Mode, acc access) (Page, error) {
	count := acc == accessRead || acc == accessCached
	if pg, ok := pt.tryHit(id, mode, count); ok {
		return pg, nil
	}
	for {
		pt.mu.RLock()
		if di, ok := pt.table.lookup(id); ok {
			d := pt.desc(di)
			switch d.state.Load() {
			case stFrame:
				// Pinned while in a frame under the mutex: nothing can
				// move it until we unpin.
				d.pins.Add(1)
				if !d.ref.Load() { // no store, no cache line taken, if set
					d.ref.Store(true)
				}
				if d.inner.Load() {
					pt.touchInner(d)
				}
				f := d.frame.Load()
				pt.mu.RUnlock()
				pt.latch(f, mode)
				pt.countHit(d, count)
				return Page{part: pt, d: di, frame: f, mode: mode, id: id, pinned: true}, nil
			case stLoading, stDemoting:
				if acc.cachedOnly() {
					pt.mu.RUnlock()
					return Page{}, ErrNotCached
				}
				// Wait for the load or demotion to finish, then look
				// again. Not on the frame's latch: once a demotion ends the
				// frame may hold another page, whose holder could be
				// waiting for a page we hold.
				pt.waitLoadDone()
				continue
			}
		}
		pt.mu.RUnlock()
		pg, retry, err := pt.load(id, mode, acc)
		if !retry {
			return pg, err
		}
	}
}

// tryHit takes page id if it is in a frame whose latch is free in mode,
// without the partition mutex and without a pin: it finds the descriptor
// in the table, TryLocks the latch of the frame the descriptor names, and
// then checks that the descriptor is still page id's, in that frame.
// Whatever takes a page out of its frame (demote, through evictAt; drop)
// or loads one into it holds the frame's latch exclusively while it does,
// and a descriptor is reused only after its page left its frame, so a page
// found in place under the latch stays there, with that descriptor, until
// it is unlatched: the latch alone keeps it, and a hit writes only the
// latch's reader count (the descriptor's line stays read-only, but for
// the reference bit when it is clear, and the warmed flag on the first
// use of a page Prefetch read). It never waits: when anything does
// not match, it unlatches what it took and get takes the locked path.
// hitRaceHook, when set (by tests only), runs in tryHit between reading
// the page's frame and latching it, and again (latched true) once the
// latch is held: where an eviction or a free that races with the hit
// lands.
var hitRaceHook func(id PageID, latched bool)

func (pt *partition) tryHit(id PageID, mode Mode, count bool) (Page, bool) {
	di, ok := pt.table.lookup(id)
	if !ok {
		return Page{}, false
	}
	d := pt.desc(di)
	if d.state.Load() != stFrame {
		return Page{}, false // in transit or an image
	}
	f := d.frame.Load()
	if hitRaceHook != nil {
		hitRaceHook(id, false)
	}
	if f < 0 || !pt.tryLatch(f, mode) {
		return Page{}, false
	}
	if hitRaceHook != nil {
		hitRaceHook(id, true)
	}
	if d.state.Load() != stFrame || d.frame.Load() != f || d.pageID() != id {
		pt.unlatch(f, mode)
		return Page{}, false
	}
	if !d.ref.Load() { // no store, no cache line taken, if set
		d.ref.Store(true)
	}
	if d.inner.Load() {
		pt.touchInner(d)
	}
	pt.countHit(d, count)
	return Page{part: pt, d: di, frame: f, mode: mode, id: id}, true
}

// load brings page id into a frame: from its compressed image (a compressed
// hit, promoting it) or from the store (a miss; if acc is cached only, it
// returns ErrNotCached instead). With accessWarm the page's next frame hit
// is not counted (countHit). retry means the page's state changed
// meanwhile and the caller should look again.
func (pt *partition) load(id PageID, mode Mode, acc access) (pg Page, retry bool, err error) {
	start := time.Now()
	pt.mu.Lock()
	di, cached := pt.table.lookup(id)
	if cached && pt.desc(di).state.Load() != stImage {
		pt.mu.Unlock()
		return Page{}, true, nil
	}
	if acc.cachedOnly() && (!cached || acc == accessLook) {
		// Not in memory; or an image, which a look does not promote:
		// promoting counts as a use, and the look is not one.
		pt.mu.Unlock()
		return Page{}, false, ErrNotCached
	}
	if cached {
		// The loader's pin: the image cannot be evicted (by allocFrame,
		// making room for its own frame) before it is promoted.
		pt.desc(di).pins.Add(1)
	}
	f, slow, err := pt.allocFrame(acc.cachedOnly())
	if err == nil {
		// allocFrame may have released mu: check nothing changed.
		if di2, ok := pt.table.lookup(id); ok != cached || (ok && (di2 != di || pt.desc(di).state.Load() != stImage)) {
			pt.releaseFrame(f)
			pt.mu.Unlock()
			pt.latches[f].Unlock()
			if cached {
				pt.unpin(di)
			}
			return Page{}, true, nil
		}
	}
	if err != nil {
		pt.mu.Unlock()
		if cached {
			pt.unpin(di)
		}
		if err == ErrNotCached {
			return Page{}, false, err // a promotion that would wait for the cleaner
		}
		return Page{}, false, fmt.Errorf("bufferpool: page %d: %w", id, err)
	}
	var ld loading
	if cached {
		ld = pt.beginPromote(di, f)
	} else {
		ld = pt.beginMiss(id, f)
	}
	pt.mu.Unlock()

	bp := pt.pool.getScratch()
	img, readTime, err := ld.fill(pt, (*bp)[:0])
	if err == nil && pt.pool.opts.Verify != nil && (!ld.promote || ld.readAhead) {
		err = pt.pool.opts.Verify(id, pt.frameData(f))
	}

	pt.mu.Lock()
	if err == nil {
		pt.finishLoad(ld, img)
		pt.desc(ld.di).warmed.Store(acc.warm())
	} else {
		pt.abortLoad(ld)
	}
	pt.mu.Unlock()
	pt.pool.putScratch(bp, img.Data)
	if err != nil {
		pt.latches[f].Unlock()
		pt.unpin(ld.di)
		if ld.promote {
			// Images come from verified disk reads or our own compression,
			// so this is a bug or memory corruption; never hand out the bytes.
			return Page{}, false, fmt.Errorf("bufferpool: page %d: decompress cached image: %w", id, err)
		}
		pt.st.loadErrors.Add(1)
		return Page{}, false, fmt.Errorf("bufferpool: read page %d: %w", id, err)
	}
	if ld.promote {
		if ld.readAhead {
			pt.st.raHits.Add(1) // before hitsC: adjust subtracts it from hitsC
		}
		pt.st.hitsC.Add(1)
		pt.st.promotions.Add(1)
		pt.pool.timing.addHitC(time.Since(start), slow)
	} else {
		pt.st.misses.Add(1)
		whole := time.Since(start)
		if acc == accessOverlapped {
			whole = pt.pool.overlappedMiss(whole, readTime)
		}
		pt.pool.timing.addMiss(whole, slow)
	}
	return pt.handOut(id, ld.di, f, mode), false, nil
}

// loading is a load in progress: descriptor di (stLoading, pinned by the
// loader) into frame f (latched exclusively), from its image or a miss.
type loading struct {
	di, f   int32
	promote bool
	// readAhead: the image was read ahead (readahead.go), this is its
	// first use.
	readAhead bool
	// The image to decompress, for a promotion: it stays in place (and
	// cannot be evicted or moved) while the page is loading.
	imgAt  int32
	imgLen int
	codec  codec.ID
}

// beginPromote marks image di (pinned by the loader) as loading into
// frame f.
func (pt *partition) beginPromote(di, f int32) loading {
	d := pt.desc(di)
	d.state.Store(stLoading)
	d.frame.Store(f)
	d.ref.Store(true)
	if d.inner.Load() {
		d.usedAt.Store(pt.frameEvictions.Load())
	}
	pt.frameDesc[f] = di
	if d.readAhead {
		// Not a hit the compressed tier's share earned: no controller
		// input (adjust leaves its hit out too). The page's entries from
		// an earlier eviction go, as a miss's would, uncounted.
		d.readAhead = false
		id := d.pageID()
		if seq, ok := pt.ghostU.seqOf(id); ok {
			pt.below.drop(uint32(seq))
		}
		pt.ghostU.take(id)
		pt.ghostC.take(id)
		return loading{di: di, f: f, promote: true, readAhead: true, imgAt: d.imgAt, imgLen: int(d.imgLen), codec: d.codec}
	}
	if pt.ghostU.take(d.pageID()) {
		pt.st.ghostUonC.Add(1)
		pt.st.totalGhostU.Add(1)
	}
	pt.countDepth(d.evictedAt)
	if d.compressed {
		pt.st.ctlHitsC.Add(1) // a hit the compressing demotion paid for
	}
	return loading{di: di, f: f, promote: true, imgAt: d.imgAt, imgLen: int(d.imgLen), codec: d.codec}
}

// beginMiss creates the descriptor of page id, loading into frame f.
func (pt *partition) beginMiss(id PageID, f int32) loading {
	di, d := pt.allocDesc(id)
	d.frame.Store(f)
	d.pins.Add(1)
	// A page read for the first time enters cold: the CLOCK hand evicts it
	// on its next pass unless it is used again by then. Pages touched once
	// (a scan) so never push out pages in use (see TestScanResistance).
	d.ref.Store(!coldInsert)
	d.state.Store(stLoading)
	pt.frameDesc[f] = di
	if pt.ghostC.take(id) {
		pt.st.ghostConMiss.Add(1)
		pt.st.totalGhostC.Add(1)
	}
	if seq, ok := pt.ghostU.seqOf(id); ok {
		pt.below.drop(uint32(seq))
	}
	if pt.ghostU.take(id) {
		pt.st.ghostUonMiss.Add(1)
		pt.st.totalGhostU.Add(1)
	}
	return loading{di: di, f: f}
}

// fill fills the frame, without mu: it decompresses the page's image, or
// reads the image from the store into buf and decompresses that. It
// returns the image read from the store (nil Data for a promotion) and
// how long the read took.
func (ld loading) fill(pt *partition, buf []byte) (pagestore.Image, time.Duration, error) {
	frame := pt.frameData(ld.f)
	if ld.promote {
		img := pt.readImage(ld.imgAt, ld.imgLen, buf)
		start := time.Now()
		err := codec.Decompress(ld.codec, frame, img)
		pt.pool.timing.addDecom(ld.codec, time.Since(start))
		return pagestore.Image{}, 0, err
	}
	start := time.Now()
	img, err := pt.pool.store.ReadImage(pt.desc(ld.di).pageID(), buf)
	read := time.Since(start)
	pt.pool.timing.disk.add(read)
	if err != nil {
		return img, read, err
	}
	start = time.Now()
	err = codec.Decompress(img.Codec, frame, img.Data)
	pt.pool.timing.addDecom(img.Codec, time.Since(start))
	return img, read, err
}

// finishLoad makes the loaded page a frame. A promoted page keeps its image
// as a redundant copy (its next demotion is then free) and a page read from
// the store the image it was read from (when frames are under pressure),
// if the images' share can hold a copy of every frame (copiesFit).
func (pt *partition) finishLoad(ld loading, img pagestore.Image) {
	d := pt.desc(ld.di)
	if ld.promote {
		pt.images--
		if pt.imagesOff() || !keepImages || !pt.copiesFit() {
			pt.freeImage(d.imgAt)
			d.imgAt, d.imgLen = -1, 0
			d.hasImage.Store(false)
		} else {
			pt.redundant++
			pt.pushImg(ld.di)
		}
	}
	d.state.Store(stFrame)
	if !ld.promote {
		pt.keepImage(ld.di, img.Data, img.Codec)
	}
	pt.signalLoadDone()
}

// abortLoad undoes a failed load: the frame is freed, the page (and its
// image, if it was being promoted) leave the table, and waiters find the
// descriptor failed and retry. The caller then unlatches the frame and
// drops the loader's pin.
func (pt *partition) abortLoad(ld loading) {
	d := pt.desc(ld.di)
	if ld.promote {
		pt.dropImage(d, false)
	}
	pt.releaseFrame(ld.f)
	d.frame.Store(-1)
	pt.retire(ld.di)
	pt.signalLoadDone()
}

// handOut downgrades the loader's exclusive latch to the caller's mode.
func (pt *partition) handOut(id PageID, di, f int32, mode Mode) Page {
	if mode == Shared {
		pt.latches[f].Unlock()
		pt.latches[f].RLock()
	}
	return Page{part: pt, d: di, frame: f, mode: mode, id: id, pinned: true}
}

// errCached is newPage's error for an id the pool already holds: the id is
// in use, so its caller must not give it back to the store.
var errCached = errors.New("already cached")

func (pt *partition) newPage(id PageID) (Page, error) {
	pt.mu.Lock()
	if _, ok := pt.table.lookup(id); ok {
		pt.mu.Unlock()
		return Page{}, fmt.Errorf("bufferpool: new page %d: %w", id, errCached)
	}
	f, _, err := pt.allocFrame(false)
	if err != nil {
		pt.mu.Unlock()
		return Page{}, fmt.Errorf("bufferpool: new page %d: %w", id, err)
	}
	if _, ok := pt.table.lookup(id); ok {
		pt.releaseFrame(f)
		pt.mu.Unlock()
		pt.latches[f].Unlock()
		return Page{}, fmt.Errorf("bufferpool: new page %d: %w", id, errCached)
	}
	di, d := pt.allocDesc(id)
	d.frame.Store(f)
	d.pins.Add(1)
	d.ref.Store(true)
	d.dirty.Store(true)
	pt.dirty.Add(1)
	d.state.Store(stFrame)
	pt.frameDesc[f] = di
	pt.mu.Unlock()
	clear(pt.frameData(f))
	return Page{part: pt, d: di, frame: f, mode: Exclusive, id: id, pinned: true}, nil
}

func (pt *partition) release(pg Page) {
	pt.unlatch(pg.frame, pg.mode)
	if pg.pinned {
		pt.unpin(pg.d)
	}
}

// markDirty records that page di was modified (its holder has it
// Exclusive). Its redundant image, if any, no longer matches: dropped.
func (pt *partition) markDirty(di int32) {
	d := pt.desc(di)
	if d.dirty.Swap(true) {
		return
	}
	pt.dirty.Add(1)
	if d.hasImage.Load() {
		pt.mu.Lock()
		if d.state.Load() == stFrame {
			pt.dropImage(d, true)
		}
		pt.mu.Unlock()
	}
}

// drop removes page id from the partition (for FreePage). It releases mu
// and takes it again while it waits for a pin or a transit to end.
func (pt *partition) drop(id PageID) error {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	di, ok := pt.table.lookup(id)
	if !ok {
		return nil
	}
	d := pt.desc(di)
	// The page cleaner pins pages for a moment while it writes them;
	// give such a pin time to go before calling the page in use.
	start := time.Now()
	userWait := start // since when the page has been held by a user
	for {
		idle, f := pt.latchIdle(d)
		if idle {
			pt.dropIdle(di, f)
			return nil
		}
		// The cleaner's write-back and pages in transit are waited for
		// (up to 10 s); a user's hold gets 100 ms from then on (counted
		// from the cleaner's end, so that the moment between its flag
		// and its pin going is not taken for a user's pin held all along).
		if d.flushers.Load() > 0 || d.state.Load() != stFrame {
			userWait = time.Now()
			if userWait.Sub(start) > 10*time.Second {
				return fmt.Errorf("bufferpool: free page %d: %w", id, ErrPinned)
			}
		} else if time.Since(userWait) > 100*time.Millisecond {
			return fmt.Errorf("bufferpool: free page %d: %w", id, ErrPinned)
		}
		pt.mu.Unlock()
		time.Sleep(50 * time.Microsecond)
		pt.mu.Lock()
		if di, ok = pt.table.lookup(id); !ok {
			return nil
		}
		d = pt.desc(di)
	}
}

// discard drops page id if it is idle and clean (Pool.Discard), without
// waiting, and reports whether the page stays. Called without mu.
func (pt *partition) discard(id PageID) (kept bool) {
	if _, cached := pt.table.lookup(id); !cached {
		return false // most old copies were evicted already: no lock
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	di, ok := pt.table.lookup(id)
	if !ok {
		return false
	}
	d := pt.desc(di)
	idle, f := pt.latchIdle(d)
	if !idle {
		return true
	}
	if d.dirty.Load() {
		if f >= 0 {
			pt.latches[f].Unlock()
		}
		return true
	}
	pt.dropIdle(di, f)
	pt.st.discards.Add(1)
	return false
}

// latchIdle reports whether page d is idle: unpinned and not in transit.
// A page in a frame is idle only with its frame latched exclusively (a
// tryHit holds the latch, not a pin): it returns that frame, latched, or
// -1. Called with mu held.
func (pt *partition) latchIdle(d *desc) (idle bool, f int32) {
	if d.pins.Load() > 0 {
		return false, -1
	}
	switch d.state.Load() {
	case stLoading, stDemoting:
		return false, -1
	case stFrame:
		f = d.frame.Load()
		if !pt.latches[f].TryLock() {
			return false, -1
		}
		return true, f
	}
	return true, -1
}

// dropIdle removes idle page di (latchIdle), in frame f (latched
// exclusively; unlatched here) or an image. Called with mu held.
func (pt *partition) dropIdle(di, f int32) {
	d := pt.desc(di)
	switch d.state.Load() {
	case stFrame:
		if d.dirty.Swap(false) {
			pt.dirty.Add(-1)
		}
		pt.dropImage(d, true)
		pt.releaseFrame(f)
		d.frame.Store(-1)
	case stImage:
		pt.dropImage(d, false)
	}
	pt.retire(di)
	if f >= 0 {
		pt.latches[f].Unlock()
	}
}

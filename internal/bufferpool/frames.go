package bufferpool

import (
	"fmt"
	"runtime"
	"time"
)

// The uncompressed tier: frame allocation and frame replacement (CLOCK).
//
// Lock rules: called with mu held, and returning with it held. allocFrame
// releases mu and takes it again while it compresses a victim (demote.go,
// through evictFrame and evictAt: evictFrame(true) never compresses), while
// it yields to a goroutine still holding a freed frame's latch, and while it
// waits for the page cleaner (not with noWait); the others never release it.

// allocFrame returns a free frame, latched exclusively, making room in the
// budget if there is none: the images give way if they hold more than their
// share, or give back an arena page they do not use if they are sparse
// while demotions do not compress (imagesSparse), the frames otherwise (a
// frame is demoted to an image or dropped).
// It may release mu meanwhile; callers check the table again afterwards.
// slow is how long it compressed demotions and waited for the cleaner.
// With noWait (a cached-only access: its caller may hold a lock that
// writers need) it returns ErrNotCached where it would wait for the
// cleaner: every frame pinned or dirty.
func (pt *partition) allocFrame(noWait bool) (f int32, slow time.Duration, err error) {
	var waitStart time.Time
	for {
		if len(pt.freeDescs) == 0 {
			pt.growDescs() // before choosing, so the eviction below pays for it
			pt.payGrowth() // what it can before anything releases mu
		}
		// Resident above the budget (the metadata grew, or frames were
		// just evicted for it): free frames' memory goes first.
		pt.shedToBudget()
		f, busy := pt.takeFrame()
		if f >= 0 {
			return f, slow + pt.noteWait(waitStart), nil
		}
		if busy {
			// A goroutine that waited on this frame's previous page,
			// or a hit that looked at a descriptor out of date (tryHit),
			// still holds the latch for a moment.
			pt.mu.Unlock()
			runtime.Gosched()
			pt.mu.Lock()
			continue
		}
		// The budget is full: images first if they hold more than their
		// share, or if their arena is sparse and compacting it gives a
		// page back (memory the images hold but do not use, with no
		// compressing demotion to fill it), else a frame.
		if pt.imagesOverShare() && pt.shrinkImages(pt.ps) {
			continue
		}
		if pt.imagesSparse() && pt.compactImages() {
			continue
		}
		evicted, dirty, comp := pt.evictFrame(false)
		slow += comp
		if evicted {
			continue
		}
		// No frame can go. If some are dirty, the page cleaner will make
		// them clean: wait for it (the images keep their share). If they
		// are all pinned, only the images can give memory.
		if !dirty && pt.shrinkImages(pt.ps) {
			continue
		}
		// Every frame is pinned or dirty: a free buffer wait, unless the
		// dirty frames cannot be written (the store failed): then no wait
		// frees one, and the write error says why.
		if werr := pt.writeErr.Load(); dirty && werr != nil {
			pt.pool.kickCleaner() // to retry the writes, at its back-off pace
			return -1, slow + pt.noteWait(waitStart), fmt.Errorf("%w: dirty pages cannot be written back: %w", ErrNoFrame, *werr)
		}
		if noWait {
			return -1, slow, ErrNotCached
		}
		if waitStart.IsZero() {
			waitStart = time.Now()
			pt.st.fbWaits.Add(1)
		} else if waited := time.Since(waitStart); waited > FrameWaitLimit {
			return -1, slow + pt.noteWait(waitStart), fmt.Errorf("%w: every frame pinned or dirty for %v", ErrNoFrame, waited.Round(time.Second))
		}
		ch := pt.cleaned
		pt.waiting.Add(1)
		pt.pool.kickCleaner()
		pt.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(5 * time.Millisecond):
		}
		pt.mu.Lock()
		pt.waiting.Add(-1)
	}
}

// takeFrame takes a free frame within the budget: one still backed by
// memory, or else a new one if the budget has room. It returns the frame
// latched exclusively, or -1 with busy set if the frame's latch was busy
// (the caller yields and tries again), or -1 if the budget is full.
func (pt *partition) takeFrame() (f int32, busy bool) {
	if pt.resident() > pt.avail {
		return -1, false
	}
	slot := pt.frameIdle.first()
	if slot >= 0 {
		pt.frameIdle.remove(slot)
		pt.frameFree.take(slot)
	} else {
		if pt.resident()+pt.ps > pt.avail {
			return -1, false
		}
		if slot = pt.frameFree.alloc(); slot < 0 {
			return -1, false
		}
		pt.frameResident[slot] = true
		pt.residentFrames++
	}
	if !pt.latches[slot].TryLock() {
		pt.frameFree.release(slot)
		pt.frameIdle.add(slot)
		return -1, true
	}
	pt.framesUsed++
	pt.touchGap.Store(uint32(innerWindow * pt.framesUsed / 16))
	pt.frameDesc[slot] = -1
	pt.sinceEviction++
	return int32(slot), false
}

func (pt *partition) noteWait(start time.Time) time.Duration {
	if start.IsZero() {
		return 0
	}
	waited := time.Since(start)
	pt.st.fbWaitNanos.Add(int64(waited))
	return waited
}

// releaseFrame returns frame f to the free set (its latch stays as it is).
// Its memory stays resident for the next frame, until the images need it
// (releaseIdleFrame).
func (pt *partition) releaseFrame(f int32) {
	pt.frameFree.release(int(f))
	pt.framesUsed--
	pt.touchGap.Store(uint32(innerWindow * max(pt.framesUsed, 1) / 16))
	pt.frameDesc[f] = -1
	if pt.frameResident[f] {
		pt.frameIdle.add(int(f))
	}
}

// evictFrame runs the frame CLOCK until it finds a clean, unpinned frame
// whose reference bit is clear and that is not a protected inner page
// (innerProtected), and evicts it: demoted to the compressed tier or
// dropped (demote). If it finds only protected inner pages, or passes over
// maxInnerSkips of them, it evicts the first of them rather than none (not
// with onlyFree, which makes room for an image: an image can go instead). With onlyFree it takes only a frame that
// has a redundant image (its demotion compresses nothing and never
// releases mu), and turns the hand at most once around. It reports
// whether a frame was freed, whether it passed dirty frames, and how long
// the demotion compressed.
func (pt *partition) evictFrame(onlyFree bool) (evicted, sawDirty bool, comp time.Duration) {
	n := len(pt.frameDesc)
	turns := 2 * n
	if onlyFree {
		turns = n
	}
	spare := int32(-1) // the first protected inner page passed over
	skipped := 0       // protected inner pages passed over
	for i := 0; i < turns; i++ {
		f := int32(pt.hand)
		pt.hand++
		if pt.hand == n {
			pt.hand = 0
		}
		di := pt.frameDesc[f]
		if di < 0 {
			continue
		}
		d := pt.desc(di)
		if d.state.Load() != stFrame || d.pins.Load() > 0 {
			continue
		}
		// Referenced or dirty: passed over without taking the latch (its
		// bits are atomic; passOver looks again under the latch). A write
		// workload whose frames are few and mostly dirty spent 11% of its
		// CPU latching and unlatching the frames the hand passed over (data
		// 1× the memory, R 0.9, docs/BENCHMARKS.md, twenty-second session).
		var dirty bool
		if pt.passOver(d, onlyFree, &dirty) {
			// A dirty page latched exclusively (a writer changing it) is
			// not counted as waiting for the cleaner, which cannot write
			// it until it is released: allocFrame would wait for the
			// cleaner instead of taking memory from the images.
			if _, free := pt.latches[f].version(); dirty && free {
				sawDirty = true
			}
			continue
		}
		// In use: a hit holds the latch without a pin (tryHit). Such a
		// page is passed over as a pinned one is (its reference bit, if
		// set, was cleared above).
		if !pt.latches[f].TryLock() {
			continue
		}
		if pt.passOver(d, onlyFree, &sawDirty) {
			pt.latches[f].Unlock()
			continue
		}
		if pt.innerProtected(d) {
			pt.latches[f].Unlock()
			if spare < 0 {
				spare = f
			}
			// More protected pages than the frames can keep (a tree whose
			// used branches outnumber the frames): the first one goes, in
			// CLOCK order, before the sweep grows long under mu.
			if skipped++; skipped > maxInnerSkips && !onlyFree {
				break
			}
			continue
		}
		return true, sawDirty, pt.evictLatched(f)
	}
	if spare >= 0 && !onlyFree {
		if spareHook != nil {
			spareHook(pt, spare)
		}
		if ok, comp := pt.evictAt(spare); ok {
			return true, sawDirty, comp
		}
	}
	if sawDirty {
		pt.pool.kickCleaner()
	}
	return false, sawDirty, 0
}

// spareHook, when set (by tests only), runs before the sweep evicts its
// spare, with mu held: where a hit that changes the spare page lands.
var spareHook func(pt *partition, f int32)

// maxInnerSkips is how many protected inner pages one eviction passes over
// before it takes the first of them: a bound on the sweep's length under
// the partition mutex when inner pages fill most of the frames.
const maxInnerSkips = 32

// passOver says whether the CLOCK hand passes over page d: referenced
// (the bit is cleared: a second chance; only if set, so that a look takes
// no cache line when it is not), dirty (noted in sawDirty), or, with
// onlyFree, without a redundant image. Called with mu held, before the
// frame's latch is taken and again once it is (a hit may have referenced
// the page meanwhile, a writer dirtied it).
func (pt *partition) passOver(d *desc, onlyFree bool, sawDirty *bool) bool {
	if d.ref.Load() && d.ref.Swap(false) {
		return true
	}
	if d.dirty.Load() {
		*sawDirty = true
		return true
	}
	return onlyFree && (d.imgAt < 0 || pt.imagesOff())
}

// evictAt demotes the page in frame f, the sweep's spare, if its latch is
// free and the page still clean, unpinned and in its frame, and returns
// how long the demotion compressed. The sweep unlatched the frame after it
// looked: a hit (which takes neither mu nor a pin) may have dirtied the
// page since, and a dirty page must not be demoted.
func (pt *partition) evictAt(f int32) (bool, time.Duration) {
	if !pt.latches[f].TryLock() {
		return false, 0
	}
	di := pt.frameDesc[f]
	if di < 0 {
		pt.latches[f].Unlock()
		return false, 0
	}
	if d := pt.desc(di); d.state.Load() != stFrame || d.pins.Load() > 0 || d.dirty.Load() {
		pt.latches[f].Unlock()
		return false, 0
	}
	return true, pt.evictLatched(f)
}

// evictLatched demotes the page in frame f, whose latch the caller took
// exclusively (and which it releases), and returns how long the demotion
// compressed.
func (pt *partition) evictLatched(f int32) time.Duration {
	pt.sinceEviction = 0
	pt.frameEvictions.Add(1)
	pt.st.ctlFrameEvictions.Add(1)
	comp := pt.demote(pt.frameDesc[f], f)
	pt.latches[f].Unlock()
	return comp
}

// innerProtected says whether d is an inner page used within the last
// innerWindow turnovers of the frames in use. Called with mu held.
func (pt *partition) innerProtected(d *desc) bool {
	return d.inner.Load() && pt.frameEvictions.Load()-d.usedAt.Load() < uint32(innerWindow*max(pt.framesUsed, 1))
}

// touchInner records a use of inner page d: its usedAt is brought up to
// date when it is a sixteenth of the window old (touchGap). Called with or
// without mu.
func (pt *partition) touchInner(d *desc) {
	if now := pt.frameEvictions.Load(); now-d.usedAt.Load() > pt.touchGap.Load() {
		d.usedAt.Store(now)
	}
}

package bufferpool

import (
	"time"

	"github.com/stratadb/strata/internal/codec"
)

// Demotion: what happens to a clean frame the frame CLOCK evicts.
//
//   - It has a redundant image (the bytes it was read from or written as):
//     the page becomes that image. Nothing is compressed.
//   - It has none, the images have a share and compressing demotions pay
//     (the controller's gate): it is compressed with the pool's codec
//     into a new image, outside mu.
//   - Otherwise (also while payGrowth pays for metadata, which must not
//     release mu) it is dropped.
//
// Lock rules: demote is called with mu held and the frame's latch held
// exclusively (TryLocked by evictFrame, which releases it afterwards), and
// returns with both held. To compress it releases mu and takes it again;
// the page is stDemoting meanwhile, so no one else touches it, and those
// who want it wait on loadDone. The frame is free when demote returns;
// no one can take it before evictFrame releases its latch, since taking a
// frame needs mu and a TryLock of its latch.

// demote evicts clean frame f of descriptor di (see above); the frame is
// free afterwards. It returns how long it compressed (0 if it did not).
func (pt *partition) demote(di, f int32) time.Duration {
	d := pt.desc(di)
	pt.ghostU.add(d.pageID())
	d.evictedAt = pt.below.push()
	pt.st.evictFrames.Add(1)
	switch {
	case d.imgAt >= 0 && !pt.imagesOff():
		pt.imageFromFrame(di, f)
		pt.redundant--
		pt.images++
		pt.pushImg(di)
		pt.st.demotions.Add(1)
		pt.st.freeDemotions.Add(1)
		return 0
	case pt.imagesOff():
	case pt.dropping:
		pt.ghostC.add(d.pageID()) // as below: its image would have been kept
	case !pt.pool.compressing.Load():
		// Compressing demotions do not pay (the controller's gate):
		// remember the page as if it had been demoted and evicted, so that
		// compressed-ghost hits keep measuring what they would earn.
		pt.ghostC.add(d.pageID())
		pt.st.ctlSkipped.Add(1)
	default:
		return pt.compressDemote(di, f)
	}
	pt.offerFrame(d, f)
	pt.dropImage(d, true)
	pt.releaseFrame(f)
	d.frame.Store(-1)
	pt.retire(di)
	return 0
}

// imageFromFrame turns page di, whose image is in place, from frame f
// into that image alone: the frame is freed. The caller counts the image
// and puts it in the ring.
func (pt *partition) imageFromFrame(di, f int32) {
	d := pt.desc(di)
	d.frame.Store(-1)
	d.ref.Store(false) // enters the image CLOCK cold
	d.state.Store(stImage)
	pt.releaseFrame(f)
}

// compressDemote compresses frame f of page di into a new image, releasing
// mu while it compresses, and drops the page if the image does not fit or
// the page does not compress. It returns how long it compressed.
func (pt *partition) compressDemote(di, f int32) time.Duration {
	d := pt.desc(di)
	d.state.Store(stDemoting)
	if pt.ghostC.take(d.pageID()) {
		// A larger compressed tier would still have held this page's
		// image: this compression is what it would have saved.
		pt.st.ghostConComp.Add(1)
		pt.st.totalGhostC.Add(1)
	}
	pt.mu.Unlock()
	bp := pt.pool.getScratch()
	img, used, literal, took, err := pt.pool.compressDemotion((*bp)[:0], pt.frameData(f))
	pt.pool.timing.comp.add(took)
	pt.mu.Lock()
	// The bytes are in img: the frame is not needed any more, and its
	// memory may go to the image.
	d.frame.Store(-1)
	pt.releaseFrame(f)
	if err == nil && used != codec.None && !pt.imagesOff() && pt.attachImage(di, img, used, false) {
		d.compressed = true
		d.state.Store(stImage)
		pt.st.demotions.Add(1)
		pt.st.ctlDemotions.Add(1)
		if literal {
			pt.pool.coding.coded.Add(1)
		}
	} else {
		if err == nil {
			pt.offerBytes(d.pageID(), used, img) // leaves memory: the image did not fit, or the page does not compress
		}
		pt.retire(di)
	}
	pt.pool.putScratch(bp, img)
	pt.signalLoadDone()
	return took
}

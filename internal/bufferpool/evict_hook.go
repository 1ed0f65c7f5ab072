package bufferpool

import "github.com/stratadb/strata/internal/codec"

// The eviction hook: clean pages leaving the pool's memory are offered to
// a second-level cache below it (a flash cache), which the pool finds as
// its Store implementing EvictionSink. The miss path needs no hook: such a
// store serves ReadImage from its cache before the device.
//
// A page leaves memory when its sole image is evicted (evictImage), when
// its frame is dropped without becoming an image (demote), or when the
// image a compressing demotion made cannot be kept (compressDemote); it is
// clean then (only clean frames are evicted, and images are always clean).
// A page freed (FreePage) or discarded (Discard: replaced, no reader wants
// it) is offered nothing.
// The sink gets the image's bytes, or the frame's for a frame without an
// image (codec.None, frame set), which it may compress in the background.
//
// Lock rules: called with mu held (and, for a frame, its latch held
// exclusively), like the evictions that call them; the sink must neither
// block nor call back into the pool, and copies what it keeps.

// EvictionSink receives the clean pages leaving the pool's memory.
type EvictionSink interface {
	// WantsEvicted reports whether the sink would take page id's image of
	// n bytes now; the pool assembles the image only if so.
	WantsEvicted(id PageID, n int) bool
	// OfferEvicted hands the sink the image of clean page id (codec c),
	// or with frame the uncompressed page; data is valid only during the
	// call.
	OfferEvicted(id PageID, c codec.ID, data []byte, frame bool)
}

// offerImage offers the sole image of page d, about to be dropped.
func (pt *partition) offerImage(d *desc) {
	sink := pt.pool.sink
	if sink == nil || d.imgAt < 0 || !sink.WantsEvicted(d.pageID(), int(d.imgLen)) {
		return
	}
	bp := pt.pool.getScratch()
	sink.OfferEvicted(d.pageID(), d.codec, pt.readImage(d.imgAt, int(d.imgLen), *bp), false)
	pt.pool.putScratch(bp, nil)
}

// offerBytes offers img (codec c), the image of clean page id just made by
// a compressing demotion that could not keep it.
func (pt *partition) offerBytes(id PageID, c codec.ID, img []byte) {
	if sink := pt.pool.sink; sink != nil && len(img) > 0 && sink.WantsEvicted(id, len(img)) {
		sink.OfferEvicted(id, c, img, false)
	}
}

// offerFrame offers the clean page in frame f, about to be dropped: its
// redundant image if it has one, else the frame.
func (pt *partition) offerFrame(d *desc, f int32) {
	if pt.pool.sink == nil {
		return
	}
	if d.imgAt >= 0 {
		pt.offerImage(d)
		return
	}
	if pt.pool.sink.WantsEvicted(d.pageID(), pt.ps) {
		pt.pool.sink.OfferEvicted(d.pageID(), codec.None, pt.frameData(f), true)
	}
}

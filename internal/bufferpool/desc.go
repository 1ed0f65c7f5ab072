package bufferpool

import (
	"sync/atomic"
	"unsafe"

	"github.com/stratadb/strata/internal/codec"
)

// Descriptors: one per cached page, and the partition's table of them.
//
// Lock rules: a descriptor's state, id and frame change, and its
// non-atomic fields (imgAt, imgLen, codec, gen, compressed) are read and
// written, only under the partition mutex, with one exception: the
// goroutine that loads a page (state stLoading) reads the pieces of its
// image without the mutex, and nothing frees or moves them meanwhile. The
// atomic fields are read without the mutex by hits (state, id, frame,
// ref; see tryHit) and changed by page holders (dirty, and pins when they
// unpin), by hits (warmed, cleared by the first counted hit after a
// Prefetch; set under the mutex by load) and the page cleaner (flushers). Every function here
// is called with the mutex held, except unpin, which takes it.

// pageState is where a cached page is.
type pageState = uint32

const (
	stFree     pageState = iota // descriptor unused
	stLoading                   // frame assigned, being filled; its latch is held exclusively by the loader
	stFrame                     // uncompressed, in a frame (and maybe also a redundant image)
	stDemoting                  // frame being compressed into an image; latch held exclusively
	stImage                     // compressed image only
	stFailed                    // out of the table; freed when the last pin goes
)

// desc describes one cached page. Descriptors live in chunks of a slice of
// structs without pointers, addressed by int32: nothing here for the garbage
// collector to scan, whatever the number of pages.
//
// A page in a frame may also have an image (imgAt ≥ 0): a redundant copy,
// the compressed bytes it was read from or written as while it is
// unmodified, so that demoting it compresses nothing. MarkDirty drops it.
type desc struct {
	// id is the page's id (pageID), atomic because tryHit reads it
	// without mu to check that a descriptor it found is still the page's.
	id    atomic.Uint64
	state atomic.Uint32
	pins  atomic.Int32
	ref   atomic.Bool // CLOCK reference bit (of the frame, or of the image when there is no frame)
	// inner: the caller said the page is an inner node of its index
	// (Page.MarkInner); usedAt is the partition's frameEvictions at its
	// last use, give or take a sixteenth of the protection window (a hit
	// writes it only when it is that old, so that the root's descriptor is
	// not written by every lookup). See innerProtected.
	inner  atomic.Bool
	usedAt atomic.Uint32
	dirty  atomic.Bool
	// warmed: Pool.Prefetch loaded the page and counted the load as the
	// use that follows; that use's frame hit is not counted (countHit).
	warmed atomic.Bool
	// flushers: how many write-backs (the page cleaner, FlushPages,
	// FlushAll) hold a pin to write the page back; a count, as two may
	// write the same page at once.
	flushers atomic.Int32
	// hasImage mirrors imgAt ≥ 0, so that MarkDirty knows without the
	// mutex whether it must drop a redundant image. Written under mu.
	hasImage atomic.Bool
	codec    codec.ID
	// compressed: the image was made by a compressing demotion (not read
	// from or written to the store), for the controller's on/off gate.
	compressed bool
	// readAhead: the image was read ahead (readahead.go) and not used yet.
	readAhead bool
	frame     atomic.Int32 // frame index, or -1; atomic for tryHit
	imgAt     int32        // granule of the image's first piece (image_arena.go), or -1
	imgLen    int32
	gen       uint32 // bumped each time the image enters the image ring (see imgRing)
	// evictedAt is the partition's count of frame evictions when the page
	// last left its frame: at an image hit, the evictions since are how
	// far below the frames the page was (the controller's depth histogram).
	evictedAt uint32
}

// innerWindow is how recently, in frame evictions per frame in use, an
// inner page must have been used for the frame replacement to pass over it
// (innerProtected). An index's inner pages are on the path of every lookup:
// with few frames (R near 1), leaves promoted from their images enter the
// frames referenced and the CLOCK hand turns every few evictions, so a
// branch that one lookup in sixteen uses still missed the frames on 19% of
// its uses (TestInnerPagesStayInFrames), each then a decompression. Inner
// pages are a small share of the pages (one per few hundred leaves), and
// one unused for four turnovers of the frames loses the protection.
const innerWindow = 4

// coldInsert makes misses enter the frame CLOCK with the reference bit
// clear. A variable only so the scan-resistance test can measure the
// alternative.
var coldInsert = true

const (
	descChunkLen = 256
	descBytes    = int(unsafe.Sizeof(desc{}))
)

// pageID is the id of the page d describes.
func (d *desc) pageID() PageID { return PageID(d.id.Load()) }

func (pt *partition) desc(i int32) *desc {
	return &pt.descChunks[i/descChunkLen].Load()[i%descChunkLen]
}

// allocDesc returns a free descriptor for page id, in the table, with no
// frame and no image; allocFrame has made sure there is one.
func (pt *partition) allocDesc(id PageID) (int32, *desc) {
	if len(pt.freeDescs) == 0 {
		// Another load took the descriptors allocFrame grew while it
		// released mu: nothing after this pays for them.
		pt.growDescs()
		pt.payGrowth()
	}
	n := len(pt.freeDescs)
	di := pt.freeDescs[n-1]
	pt.freeDescs = pt.freeDescs[:n-1]
	d := pt.desc(di)
	d.id.Store(uint64(id))
	d.frame.Store(-1)
	d.imgAt, d.imgLen = -1, 0
	d.compressed = false
	d.readAhead = false
	d.inner.Store(false)
	d.hasImage.Store(false)
	d.dirty.Store(false)
	d.warmed.Store(false)
	pt.table.insert(id, di)
	return di, d
}

// growDescs adds a chunk of descriptors. The metadata grows, so the memory
// left for pages shrinks; callers then evict to fit.
func (pt *partition) growDescs() {
	if pt.nDescChunks == len(pt.descChunks) {
		panic("bufferpool: descriptor chunks exhausted") // cannot happen: sized for every frame and image (maxImages)
	}
	pt.descChunks[pt.nDescChunks].Store(new([descChunkLen]desc))
	pt.nDescChunks++
	if n := tableSlotsFor(pt.nDescChunks * descChunkLen); n*slotBytes > pt.table.bytes() {
		pt.table.resize(n)
	}
	base := int32((pt.nDescChunks - 1) * descChunkLen)
	for i := int32(descChunkLen - 1); i >= 0; i-- {
		pt.freeDescs = append(pt.freeDescs, base+i)
	}
	pt.retarget()
}

// retire removes descriptor di, which holds neither frame nor image any
// more, from the table; it is reused once unpinned.
func (pt *partition) retire(di int32) {
	d := pt.desc(di)
	pt.table.remove(d.pageID(), di)
	if d.inner.Swap(false) {
		pt.innerPages.Add(-1)
	}
	// Failed first, pins second: unpin drops its pin first (without mu)
	// and looks at the state second, so one of the two sees the other
	// and the descriptor is freed exactly once.
	d.state.Store(stFailed)
	if d.pins.Load() == 0 {
		d.state.Store(stFree)
		pt.freeDescs = append(pt.freeDescs, di)
	}
}

// unpin drops one pin of descriptor di. Called without the mutex; takes it
// to free a failed descriptor whose last pin this was.
func (pt *partition) unpin(di int32) {
	d := pt.desc(di)
	if d.pins.Add(-1) == 0 && d.state.Load() == stFailed {
		pt.mu.Lock()
		if d.pins.Load() == 0 && d.state.Load() == stFailed {
			d.state.Store(stFree)
			pt.freeDescs = append(pt.freeDescs, di)
		}
		pt.mu.Unlock()
	}
}

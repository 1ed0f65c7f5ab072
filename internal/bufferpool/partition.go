package bufferpool

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// A partition: its state, its construction, its metadata and the split of
// its memory.
//
// Lock rules (for the whole package):
//   - mu guards changes to the table, the descriptors' state and
//     non-atomic fields, the arenas' bookkeeping (bitmaps, counters,
//     rings) and the ghosts. It is held exclusively to change what is
//     cached and shared to wait for a page in transit; a hit on a frame
//     does not take it (tryHit, access.go: the table and the fields it
//     reads are atomic, and the frame's latch is what holds the page).
//   - A frame's latch guards the page bytes in that frame, and which page
//     the frame holds: both change only under it held exclusively, which
//     moves its version (latch.go), so optimistic readers (peek.go), who
//     take no lock, can tell afterwards whether they read a page whole. A goroutine
//     holding mu only ever TryLocks a latch (never waits for one); a
//     goroutine holding a latch may take mu. So the two never deadlock.
//   - Work that takes time (store reads and writes, compression,
//     decompression) runs without mu, on a page marked in transit
//     (stLoading, stDemoting) whose frame latch the worker holds; others
//     wait for such a page on loadDone, never on its latch.
//   - Functions return holding exactly the locks they were called with.
//     A few (allocFrame, and the loops in flush and drop) release mu and
//     take it again while they wait or compress; they say so, and their
//     callers look at the table again afterwards.
//   - The controller's mutex (Pool.ctl.mu) is taken before a partition's
//     mu, never after.

// partition is an independent slice of the pool: its own table, frames,
// images, CLOCK hands, ghosts and mutex. Pages map to partitions by a hash of
// their id (Pool.partFor), so no lock is shared by all pages (document
// 002's lesson).
type partition struct {
	pool   *Pool
	ps     int
	budget int // bytes: resident frames + resident image pages + metadata

	mu    sync.RWMutex
	table pageTable // lookups without mu; see table.go
	// descChunks has a slot for every descriptor chunk the partition
	// could ever need (each cached page holds a frame or is one of at
	// most maxImages images),
	// filled as needed: the slice itself never changes, so descriptors
	// can be found without the mutex.
	descChunks  []atomic.Pointer[[descChunkLen]desc]
	nDescChunks int // chunks allocated; guarded by mu
	freeDescs   []int32

	// Uncompressed tier (frames.go).
	frames         *arena
	frameDesc      []int32 // frame → descriptor, or -1
	latches        []frameLatch
	frameFree      freeBitmap // free frames
	frameIdle      bitset     // free frames still backed by memory
	framesUsed     int
	frameResident  []bool
	residentFrames int
	hand           int
	cleanHand      int // the page cleaner's position, independent of eviction
	// sinceEviction counts frame loads since a frame was last evicted: the
	// frames are under pressure while it is below the number of frames
	// (see underPressure).
	sinceEviction int
	// dropping makes demotions drop pages instead of compressing them
	// (which releases mu): set by payGrowth while it evicts, under mu.
	dropping bool
	// frameEvictions counts frame evictions: the clock of inner pages'
	// protection (desc.usedAt, frames.go). Written under mu, read
	// without it by Page.MarkInner.
	frameEvictions atomic.Uint32
	// touchGap is how old an inner page's usedAt must be for a hit to
	// bring it up to date: a sixteenth of innerWindow turnovers of the
	// frames in use (see touchInner). Written with framesUsed under mu,
	// read by hits without it.
	touchGap atomic.Uint32
	// innerPages counts the cached pages (frame or image) marked inner
	// (Page.MarkInner): incremented by the mark, decremented by retire.
	// The controller keeps frames for them (innerCeiling).
	innerPages atomic.Int64

	// Compressed tier (images.go): each image in pieces of granules of
	// the image arena (image_arena.go).
	imgArena      *arena
	granFree      []uint64 // per OS page of the arena: bit g set = granule g free
	granStart     []uint64 // per OS page: bit g set = a piece starts at granule g
	granulesUsed  int
	partialPages  bitset // resident OS pages with a free granule
	freshPages    bitset // OS pages not backed by memory (every granule free)
	residentPages int
	plan          []piece  // planPieces' result
	maxImages     int      // images the ring and descriptor slots are sized for
	imgRing       []imgRef // CLOCK order of images; stale entries skipped lazily
	imgHead       int      // index of the oldest entry
	imgLen        int      // entries in the ring
	images        int      // pages held as an image only
	redundant     int      // images of pages that are also in a frame

	// The split (memory.go).
	avail      int // budget − metadata: what resident frames and image pages may take
	imageShare int // bytes the images keep under pressure: R × avail
	ghostU     *ghost
	below      *belowStack // frame evictions not loaded since (depth.go)
	ghostC     *ghost

	dirty   atomic.Int64
	cleaned chan struct{} // closed when the cleaner made frames clean; guarded by mu
	// writeErr is the error of the last flush that failed to write a page
	// back (nil once a flush writes again): a free buffer wait behind dirty
	// frames that cannot be written returns it instead of waiting.
	writeErr atomic.Pointer[error]
	loadDone chan struct{} // closed when a load or demotion finishes; guarded by mu
	// loadWaiters counts the goroutines waiting on loadDone (registered
	// under mu, shared or exclusive; they deregister after waking): a load
	// that finishes with none replaces no channel.
	loadWaiters atomic.Int32
	waiting     atomic.Int32

	st partStats
}

type partStats struct {
	hitsU                                 stripedCounter // every frame hit
	hitsC, misses                         atomic.Int64
	evictFrames, demotions, promotions    atomic.Int64
	freeDemotions, keptImages             atomic.Int64
	evictImages, evictRedundant           atomic.Int64
	movedPieces, loadErrors               atomic.Int64
	fbWaits, fbWaitNanos, flushes         atomic.Int64
	checkpointWrites                      atomic.Int64
	discards                              atomic.Int64 // clean pages dropped by Discard
	hotSkips                              atomic.Int64 // dirty hot pages the background cleaner left (hotDirty)
	raReads, raPages, raHits, raUnused    atomic.Int64 // read-ahead (readahead.go)
	ghostUonC, ghostUonMiss, ghostConMiss atomic.Int64 // controller inputs, reset each interval
	ghostConComp                          atomic.Int64 // controller input: compressions a larger image tier would have saved
	totalGhostU, totalGhostC              atomic.Int64
	ctlDemotions, ctlHitsC, ctlSkipped    atomic.Int64 // controller inputs (compressing demotions, hits on their images, demotions skipped)
	ctlImageEvictions, ctlFrameEvictions  atomic.Int64 // controller inputs: is each tier under pressure
	// depth counts image hits by how far below the frames the page was
	// (see countDepth); controller input, reset each interval.
	depth [depthBuckets]atomic.Int64
}

// imgRef is an entry of the image ring: a descriptor and the generation its
// image had when it entered the ring.
type imgRef struct {
	d   int32
	gen uint32
}

func newPartition(p *Pool, budget int) (*partition, error) {
	ps := p.pageSize
	maxFrames := budget / ps
	osPages := budget / osPageSize
	maxImages := budget / maxImageBytes
	pt := &partition{
		pool:          p,
		ps:            ps,
		budget:        budget,
		frameDesc:     make([]int32, maxFrames),
		latches:       make([]frameLatch, maxFrames),
		frameFree:     newFreeBitmap(maxFrames),
		frameIdle:     newBitset(maxFrames),
		frameResident: make([]bool, maxFrames),
		sinceEviction: math.MaxInt32,
		granFree:      make([]uint64, osPages),
		granStart:     make([]uint64, osPages),
		maxImages:     maxImages,
		partialPages:  newBitset(osPages),
		freshPages:    newBitset(osPages),
		cleaned:       make(chan struct{}),
		loadDone:      make(chan struct{}),
		descChunks:    make([]atomic.Pointer[[descChunkLen]desc], 2*(maxFrames+maxImages)/descChunkLen+2),
		// Room for every image the partition may hold (maxImages), and
		// an eighth more for stale entries beyond the images there are
		// (pushRef squeezes them out when it is full, a pass over the
		// ring: the slack keeps that rare): sized once, so its memory is
		// fixed metadata.
		imgRing: make([]imgRef, maxImages+maxImages/8+16),
	}
	for i := range pt.frameDesc {
		pt.frameDesc[i] = -1
	}
	pt.table.resize(tableSlotsFor(0))
	for pg := 0; pg < osPages; pg++ {
		pt.granFree[pg] = ^uint64(0)
		pt.freshPages.add(pg)
	}
	var err error
	if pt.frames, err = newArena(maxFrames * ps); err != nil {
		return nil, err
	}
	if pt.imgArena, err = newArena(osPages * osPageSize); err != nil {
		pt.frames.close()
		return nil, err
	}
	// Each ghost covers a tenth of the budget: its hits estimate what
	// the next tenth given to its tier would earn.
	// The uncompressed ghost's window covers a tenth of the budget (the
	// hill climb's view); it remembers more, up to the depth histogram's
	// ring or 1% of the budget in bookkeeping, so that a page loaded by a
	// miss leaves the below stack (depth.go).
	pt.below = newBelowStack(maxFrames)
	pt.ghostU = newGhost(max(budget/10/ps, min(len(pt.below.live), budget/100/ghostEntryBytes)))
	pt.ghostC = newGhost(budget / 10 / 1024)
	pt.retarget()
	return pt, nil
}

func (pt *partition) unmap() error {
	err := pt.frames.close()
	if e := pt.imgArena.close(); err == nil {
		err = e
	}
	return err
}

func (pt *partition) frameData(f int32) []byte {
	off := int(f) * pt.ps
	return pt.frames.mem[off : off+pt.ps : off+pt.ps]
}

// metaBytes is the memory of the partition's bookkeeping, charged to its
// budget. Called with mu held (or before the partition is shared).
func (pt *partition) metaBytes() int {
	// Counted at capacity (every descriptor with a table entry and a
	// free-list slot), so metadata changes only when a descriptor chunk
	// is added, and allocFrame accounts for that before it allocates.
	ndesc := pt.nDescChunks * descChunkLen
	return ndesc*(descBytes+4) + pt.table.bytes() +
		len(pt.frameDesc)*(4+int(unsafe.Sizeof(frameLatch{}))+1) +
		len(pt.granFree)*8 + len(pt.granStart)*8 +
		pt.frameFree.bytes() + pt.frameIdle.bytes() +
		pt.partialPages.bytes() + pt.freshPages.bytes() +
		len(pt.imgRing)*8 +
		pt.ghostU.bytes() + pt.ghostC.bytes() + pt.below.bytes()
}

// retarget recomputes the memory left for pages and the images' share of
// it from the pool's R and the current metadata size. Called with mu held
// (or before the partition is shared).
func (pt *partition) retarget() {
	pt.avail = pt.budget - pt.metaBytes()
	pt.imageShare = int(pt.pool.Share() * float64(pt.avail))
	// The compressed ghost covers a tenth of the budget in images of the
	// current mean size.
	if n := pt.images + pt.redundant; n > 0 {
		mean := max(pt.imageUsed()/n, maxImageBytes)
		pt.ghostC.setWindow(pt.budget / 10 / mean)
	} else {
		pt.ghostC.setWindow(pt.budget / 10 / max(pt.ps/2, maxImageBytes))
	}
	pt.ghostU.setWindow(pt.budget / 10 / pt.ps)
}

// signalLoadDone wakes the goroutines waiting for a page in transit.
// Called with mu held.
func (pt *partition) signalLoadDone() {
	if pt.loadWaiters.Load() == 0 {
		return // nobody registered under mu before this: nobody to wake
	}
	close(pt.loadDone)
	pt.loadDone = make(chan struct{})
}

// waitLoadDone waits until a load or demotion finishes (or a short while:
// the caller looks again either way). Called with mu held shared; returns
// without it.
func (pt *partition) waitLoadDone() {
	ch := pt.loadDone
	pt.loadWaiters.Add(1)
	pt.mu.RUnlock()
	t := time.NewTimer(10 * time.Millisecond)
	select {
	case <-ch:
	case <-t.C:
	}
	t.Stop()
	pt.loadWaiters.Add(-1)
}

func (pt *partition) latch(f int32, m Mode) {
	if m == Exclusive {
		pt.latches[f].Lock()
	} else {
		pt.latches[f].RLock()
	}
}

// tryLatch latches frame f in mode m if it is free to, without waiting.
func (pt *partition) tryLatch(f int32, m Mode) bool {
	if m == Exclusive {
		return pt.latches[f].TryLock()
	}
	return pt.latches[f].TryRLock()
}

func (pt *partition) unlatch(f int32, m Mode) {
	if m == Exclusive {
		pt.latches[f].Unlock()
	} else {
		pt.latches[f].RUnlock()
	}
}

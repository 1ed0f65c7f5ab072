package bufferpool

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/stratadb/strata/internal/codec"
)

// pageState is where a cached page is. Transitions happen under the
// partition mutex; reads may be lock-free.
type pageState = uint32

const (
	stFree     pageState = iota // descriptor unused
	stLoading                   // frame assigned, being filled; its latch is held exclusively by the loader
	stFrame                     // uncompressed, in a frame
	stDemoting                  // frame being compressed into an image; latch held exclusively
	stImage                     // compressed image only
	stFailed                    // out of the table; freed when the last pin goes
)

// desc describes one cached page. Descriptors live in chunks of a slice of
// structs without pointers, addressed by int32: nothing here for the garbage
// collector to scan, whatever the number of pages.
type desc struct {
	id    PageID
	state atomic.Uint32
	pins  atomic.Int32
	ref   atomic.Bool // CLOCK reference bit
	dirty atomic.Bool
	// flushing: the page cleaner holds a pin to write the page back.
	flushing atomic.Bool
	codec    codec.ID
	frame    int32 // frame index, or -1
	chunk    int32 // first chunk of the image, or -1
	imgLen   int32
	gen      uint32 // bumped each time the page becomes an image (see imgQueue)
}

// coldInsert makes misses enter the frame CLOCK with the reference bit
// clear. A variable only so the scan-resistance test can measure the
// alternative.
var coldInsert = true

const (
	descChunkLen   = 256
	descBytes      = int(unsafe.Sizeof(desc{}))
	tableEntrySize = 40 // approximate bytes per entry of a map[uint64]int32
)

type imgRef struct {
	d   int32
	gen uint32
}

// partition is an independent slice of the pool: its own table, frames,
// images, CLOCK hands, ghosts and mutex. Pages map to partitions by a hash of
// their id, so no lock is shared by all pages (document 002's lesson).
type partition struct {
	pool   *Pool
	ps     int
	budget int // bytes: frames + chunks + metadata

	mu    sync.RWMutex
	table map[PageID]int32
	// descChunks has a slot for every descriptor chunk the partition
	// could ever need (each cached page holds a frame or an image chunk),
	// filled as needed: the slice itself never changes, so descriptors
	// can be found without the mutex.
	descChunks  []atomic.Pointer[[descChunkLen]desc]
	nDescChunks int // chunks allocated; guarded by mu
	freeDescs   []int32

	// Uncompressed tier.
	frames         *arena
	frameDesc      []int32 // frame → descriptor, or -1
	latches        []sync.RWMutex
	frameFree      freeBitmap
	framesUsed     int
	frameResident  []bool
	residentFrames int
	hand           int
	cleanHand      int // the page cleaner's position, independent of eviction

	// Compressed tier: images as chains of chunks.
	chunks         *arena
	chunkNext      []int32
	chunkFree      freeBitmap
	chunksUsed     int
	osPageUsed     []uint16
	osPageResident []bool
	residentPages  int
	imgQueue       []imgRef // ring, CLOCK order of images; stale entries skipped lazily
	imgHead        int      // index of the oldest entry
	imgLen         int      // entries in the ring
	images         int

	avail       int // budget − metadata
	frameTarget int // frames
	chunkTarget int // chunks
	slack       int // resident memory a tier may keep above its target before releasing
	ghostU      *ghost
	ghostC      *ghost

	dirty    atomic.Int64
	cleaned  chan struct{} // closed when the cleaner made frames clean; guarded by mu
	loadDone chan struct{} // closed when a load or demotion finishes; guarded by mu
	waiting  atomic.Int32

	st partStats
}

type partStats struct {
	hitsU, hitsC, misses                  atomic.Int64
	evictFrames, demotions, promotions    atomic.Int64
	evictImages, loadErrors               atomic.Int64
	fbWaits, fbWaitNanos, flushes         atomic.Int64
	checkpointWrites                      atomic.Int64
	ghostUonC, ghostUonMiss, ghostConMiss atomic.Int64 // controller inputs, reset each interval
	totalGhostU, totalGhostC              atomic.Int64
	ctlDemotions, ctlHitsC, ctlSkipped    atomic.Int64 // controller inputs, reset each interval
}

func newPartition(p *Pool, budget int) (*partition, error) {
	ps := p.pageSize
	maxFrames := budget / ps
	maxChunks := budget / chunkSize
	pt := &partition{
		pool:           p,
		ps:             ps,
		budget:         budget,
		table:          make(map[PageID]int32),
		frameDesc:      make([]int32, maxFrames),
		latches:        make([]sync.RWMutex, maxFrames),
		frameFree:      newFreeBitmap(maxFrames),
		frameResident:  make([]bool, maxFrames),
		chunkNext:      make([]int32, maxChunks),
		chunkFree:      newFreeBitmap(maxChunks),
		osPageUsed:     make([]uint16, (maxChunks*chunkSize+osPageSize-1)/osPageSize),
		osPageResident: make([]bool, (maxChunks*chunkSize+osPageSize-1)/osPageSize),
		slack:          max(budget/64, 4*ps),
		cleaned:        make(chan struct{}),
		loadDone:       make(chan struct{}),
		descChunks:     make([]atomic.Pointer[[descChunkLen]desc], 2*(maxFrames+maxChunks)/descChunkLen+2),
		// One entry per possible image (each takes at least a chunk) plus
		// stale ones: sized once, so its memory is fixed metadata.
		imgQueue: make([]imgRef, 2*maxChunks+16),
	}
	for i := range pt.frameDesc {
		pt.frameDesc[i] = -1
	}
	var err error
	if pt.frames, err = newArena(maxFrames * ps); err != nil {
		return nil, err
	}
	if pt.chunks, err = newArena(maxChunks * chunkSize); err != nil {
		pt.frames.close()
		return nil, err
	}
	// Each ghost covers a tenth of the budget: its hits estimate what
	// the next tenth given to its tier would earn.
	pt.ghostU = newGhost(budget / 10 / ps)
	pt.ghostC = newGhost(budget / 10 / 1024)
	pt.retarget()
	return pt, nil
}

func (pt *partition) unmap() error {
	err := pt.frames.close()
	if e := pt.chunks.close(); err == nil {
		err = e
	}
	return err
}

func (pt *partition) desc(i int32) *desc {
	return &pt.descChunks[i/descChunkLen].Load()[i%descChunkLen]
}

func (pt *partition) frameData(f int32) []byte {
	off := int(f) * pt.ps
	return pt.frames.mem[off : off+pt.ps : off+pt.ps]
}

// metaBytes is the memory of the partition's bookkeeping, charged to its budget.
func (pt *partition) metaBytes() int {
	// Counted at capacity (every descriptor with a table entry and a
	// free-list slot), so metadata changes only when a descriptor chunk or
	// the image queue grows, and allocFrame/allocChain account for that
	// before they allocate.
	ndesc := pt.nDescChunks * descChunkLen
	return ndesc*(descBytes+tableEntrySize+4) +
		len(pt.frameDesc)*(4+int(unsafe.Sizeof(sync.RWMutex{}))+1) +
		len(pt.chunkNext)*4 + len(pt.osPageUsed)*3 +
		pt.frameFree.bytes() + pt.chunkFree.bytes() +
		len(pt.imgQueue)*8 +
		pt.ghostU.bytes() + pt.ghostC.bytes()
}

// retarget recomputes the tiers' targets from the pool's share R and the
// current metadata size. Called with mu held (or before the partition is shared).
func (pt *partition) retarget() {
	r := pt.pool.Share()
	pt.avail = pt.budget - pt.metaBytes()
	pt.chunkTarget = int(r * float64(pt.avail) / chunkSize)
	pt.frameTarget = max((pt.avail-pt.chunkTarget*chunkSize)/pt.ps, 4)
	if pt.frameTarget*pt.ps+pt.chunkTarget*chunkSize > pt.avail {
		pt.chunkTarget = max(0, (pt.avail-pt.frameTarget*pt.ps)/chunkSize)
	}
	// The compressed ghost covers a tenth of the budget in images of the
	// current mean size.
	if pt.images > 0 {
		mean := max(pt.chunksUsed*chunkSize/pt.images, chunkSize)
		pt.ghostC.setWindow(pt.budget / 10 / mean)
	} else {
		pt.ghostC.setWindow(pt.budget / 10 / max(pt.ps/2, chunkSize))
	}
	pt.ghostU.setWindow(pt.budget / 10 / pt.ps)
}

func (pt *partition) used() int { return pt.framesUsed*pt.ps + pt.chunksUsed*chunkSize }

// allocDesc returns a free descriptor; allocFrame has made sure there is one.
func (pt *partition) allocDesc() int32 {
	if len(pt.freeDescs) == 0 {
		pt.growDescs()
	}
	n := len(pt.freeDescs)
	i := pt.freeDescs[n-1]
	pt.freeDescs = pt.freeDescs[:n-1]
	return i
}

// growDescs adds a chunk of descriptors. The metadata grows, so the tiers'
// targets shrink; callers then evict to fit.
func (pt *partition) growDescs() {
	if pt.nDescChunks == len(pt.descChunks) {
		panic("bufferpool: descriptor chunks exhausted") // cannot happen: sized for every frame and chunk
	}
	pt.descChunks[pt.nDescChunks].Store(new([descChunkLen]desc))
	pt.nDescChunks++
	base := int32((pt.nDescChunks - 1) * descChunkLen)
	for i := int32(descChunkLen - 1); i >= 0; i-- {
		pt.freeDescs = append(pt.freeDescs, base+i)
	}
	pt.retarget()
}

// retire removes descriptor di from the table; it is reused once unpinned.
// Called with mu held.
func (pt *partition) retire(di int32) {
	d := pt.desc(di)
	if cur, ok := pt.table[d.id]; ok && cur == di {
		delete(pt.table, d.id)
	}
	if d.pins.Load() == 0 {
		d.state.Store(stFree)
		pt.freeDescs = append(pt.freeDescs, di)
	} else {
		d.state.Store(stFailed)
	}
}

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

func (pt *partition) latch(f int32, m Mode) {
	if m == Exclusive {
		pt.latches[f].Lock()
	} else {
		pt.latches[f].RLock()
	}
}

func (pt *partition) unlatch(f int32, m Mode) {
	if m == Exclusive {
		pt.latches[f].Unlock()
	} else {
		pt.latches[f].RUnlock()
	}
}

// Locking rules: a goroutine holding mu only ever TryLocks a frame latch;
// a goroutine holding a latch may take mu. So the two never deadlock. Only
// a page's pinner waits on its frame's latch; a page in transit (loading,
// demoting) is waited for on loadDone.

// signalLoadDone wakes the goroutines waiting for a page in transit.
// Called with mu held.
func (pt *partition) signalLoadDone() {
	close(pt.loadDone)
	pt.loadDone = make(chan struct{})
}

func (pt *partition) get(id PageID, mode Mode) (Page, error) {
	for {
		pt.mu.RLock()
		if di, ok := pt.table[id]; ok {
			d := pt.desc(di)
			switch d.state.Load() {
			case stFrame:
				// Pinned while in a frame under the mutex: nothing can
				// move it until we unpin.
				d.pins.Add(1)
				d.ref.Store(true)
				f := d.frame
				pt.mu.RUnlock()
				pt.latch(f, mode)
				pt.st.hitsU.Add(1)
				return Page{part: pt, d: di, frame: f, mode: mode, id: id}, nil
			case stLoading, stDemoting:
				// Wait for the load or demotion to finish, then look
				// again. Not on the frame's latch: once a demotion ends the
				// frame may hold another page, whose holder could be
				// waiting for a page we hold.
				ch := pt.loadDone
				pt.mu.RUnlock()
				select {
				case <-ch:
				case <-time.After(10 * time.Millisecond):
				}
				continue
			}
		}
		pt.mu.RUnlock()
		pg, retry, err := pt.load(id, mode)
		if !retry {
			return pg, err
		}
	}
}

// load brings page id into a frame: from its compressed image (a compressed
// hit, promoting it) or from the store (a miss). retry means the page's
// state changed meanwhile and the caller should look again.
func (pt *partition) load(id PageID, mode Mode) (pg Page, retry bool, err error) {
	pt.mu.Lock()
	di, cached := pt.table[id]
	if cached && pt.desc(di).state.Load() != stImage {
		pt.mu.Unlock()
		return Page{}, true, nil
	}
	f, err := pt.allocFrame()
	if err != nil {
		pt.mu.Unlock()
		return Page{}, false, fmt.Errorf("bufferpool: page %d: %w", id, err)
	}
	// allocFrame may have released mu: check nothing changed.
	if di2, ok := pt.table[id]; ok != cached || (ok && (di2 != di || pt.desc(di).state.Load() != stImage)) {
		pt.releaseFrame(f)
		pt.mu.Unlock()
		pt.latches[f].Unlock()
		return Page{}, true, nil
	}
	if cached {
		return pt.promote(id, di, f, mode)
	}
	return pt.miss(id, f, mode)
}

// promote decompresses image di into frame f. Called with mu held; returns
// with it released.
func (pt *partition) promote(id PageID, di int32, f int32, mode Mode) (Page, bool, error) {
	d := pt.desc(di)
	d.state.Store(stLoading)
	d.frame = f
	d.pins.Add(1)
	d.ref.Store(true)
	pt.frameDesc[f] = di
	if pt.ghostU.take(id) {
		pt.st.ghostUonC.Add(1)
		pt.st.totalGhostU.Add(1)
	}
	first, n, c := d.chunk, int(d.imgLen), d.codec
	pt.mu.Unlock()

	// The image's chunks belong to d, which no one else can evict while it
	// is loading, so they are read without the mutex.
	bp := pt.pool.scratch.Get().(*[]byte)
	img := pt.readChain(first, n, (*bp)[:n])
	start := time.Now()
	err := codec.Decompress(c, pt.frameData(f), img)
	pt.pool.timing.addDecom(c, time.Since(start))
	pt.pool.scratch.Put(bp)
	if err == nil && pt.pool.opts.Verify != nil {
		err = pt.pool.opts.Verify(id, pt.frameData(f))
	}

	pt.mu.Lock()
	pt.freeChain(first)
	d.chunk, d.imgLen = -1, 0
	pt.images--
	if err != nil {
		// Images come from verified disk reads or our own compression,
		// so this is a bug or memory corruption; never hand out the bytes.
		pt.abortLoad(di, f)
		return Page{}, false, fmt.Errorf("bufferpool: page %d: decompress cached image: %w", id, err)
	}
	d.state.Store(stFrame)
	pt.signalLoadDone()
	pt.mu.Unlock()
	pt.st.hitsC.Add(1)
	pt.st.ctlHitsC.Add(1)
	pt.st.promotions.Add(1)
	return pt.handOut(id, di, f, mode), false, nil
}

// miss reads page id from the store into frame f. Called with mu held;
// returns with it released.
func (pt *partition) miss(id PageID, f int32, mode Mode) (Page, bool, error) {
	di := pt.allocDesc()
	d := pt.desc(di)
	d.id = id
	d.frame = f
	d.chunk, d.imgLen = -1, 0
	d.pins.Store(1)
	// A page read for the first time enters cold: the CLOCK hand evicts it
	// on its next pass unless it is used again by then. Pages touched once
	// (a scan) so never push out pages in use (see TestScanResistance).
	d.ref.Store(!coldInsert)
	d.dirty.Store(false)
	d.state.Store(stLoading)
	pt.table[id] = di
	pt.frameDesc[f] = di
	if pt.ghostC.take(id) {
		pt.st.ghostConMiss.Add(1)
		pt.st.totalGhostC.Add(1)
	}
	if pt.ghostU.take(id) {
		pt.st.ghostUonMiss.Add(1)
		pt.st.totalGhostU.Add(1)
	}
	pt.mu.Unlock()

	bp := pt.pool.scratch.Get().(*[]byte)
	start := time.Now()
	img, err := pt.pool.store.ReadImage(id, (*bp)[:0])
	pt.pool.timing.disk.add(time.Since(start))
	if err == nil {
		start = time.Now()
		err = codec.Decompress(img.Codec, pt.frameData(f), img.Data)
		pt.pool.timing.addDecom(img.Codec, time.Since(start))
	}
	if err == nil && pt.pool.opts.Verify != nil {
		err = pt.pool.opts.Verify(id, pt.frameData(f))
	}
	if img.Data != nil && cap(img.Data) <= cap(*bp) {
		*bp = img.Data[:0]
	}
	pt.pool.scratch.Put(bp)
	if err != nil {
		pt.st.loadErrors.Add(1)
		pt.mu.Lock()
		pt.abortLoad(di, f)
		return Page{}, false, fmt.Errorf("bufferpool: read page %d: %w", id, err)
	}
	pt.mu.Lock()
	d.state.Store(stFrame)
	pt.signalLoadDone()
	pt.mu.Unlock()
	pt.st.misses.Add(1)
	return pt.handOut(id, di, f, mode), false, nil
}

// abortLoad undoes a failed load of descriptor di into frame f: the frame
// is freed, the page leaves the table, and waiters (who hold pins) find the
// descriptor failed and retry. Called with mu held; releases it.
func (pt *partition) abortLoad(di, f int32) {
	pt.frameDesc[f] = -1
	pt.releaseFrame(f)
	pt.desc(di).frame = -1
	pt.retire(di)
	pt.signalLoadDone()
	pt.mu.Unlock()
	pt.latches[f].Unlock()
	pt.unpin(di)
}

// handOut turns the loader's exclusive latch into the caller's mode.
func (pt *partition) handOut(id PageID, di, f int32, mode Mode) Page {
	if mode == Shared {
		pt.latches[f].Unlock()
		pt.latches[f].RLock()
	}
	return Page{part: pt, d: di, frame: f, mode: mode, id: id}
}

func (pt *partition) newPage(id PageID) (Page, error) {
	pt.mu.Lock()
	if _, ok := pt.table[id]; ok {
		pt.mu.Unlock()
		return Page{}, fmt.Errorf("bufferpool: new page %d is already cached", id)
	}
	f, err := pt.allocFrame()
	if err != nil {
		pt.mu.Unlock()
		return Page{}, fmt.Errorf("bufferpool: new page %d: %w", id, err)
	}
	if _, ok := pt.table[id]; ok {
		pt.releaseFrame(f)
		pt.mu.Unlock()
		pt.latches[f].Unlock()
		return Page{}, fmt.Errorf("bufferpool: new page %d is already cached", id)
	}
	di := pt.allocDesc()
	d := pt.desc(di)
	d.id = id
	d.frame = f
	d.chunk, d.imgLen = -1, 0
	d.pins.Store(1)
	d.ref.Store(true)
	d.dirty.Store(true)
	pt.dirty.Add(1)
	d.state.Store(stFrame)
	pt.table[id] = di
	pt.frameDesc[f] = di
	pt.mu.Unlock()
	clear(pt.frameData(f))
	return Page{part: pt, d: di, frame: f, mode: Exclusive, id: id}, nil
}

func (pt *partition) release(pg Page) {
	pt.unlatch(pg.frame, pg.mode)
	pt.unpin(pg.d)
}

// drop removes page id from the partition (for FreePage).
func (pt *partition) drop(id PageID) error {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	di, ok := pt.table[id]
	if !ok {
		return nil
	}
	d := pt.desc(di)
	// The page cleaner pins pages for a moment while it writes them;
	// give such a pin time to go before calling the page in use.
	for start := time.Now(); d.pins.Load() > 0 || d.state.Load() == stLoading || d.state.Load() == stDemoting; {
		// A user's pin gets 100 ms to go; the cleaner's write-back and
		// pages in transit are waited for (up to 10 s).
		patience := 100 * time.Millisecond
		if d.flushing.Load() || d.state.Load() != stFrame {
			patience = 10 * time.Second
		}
		if time.Since(start) > patience {
			return fmt.Errorf("bufferpool: free page %d: %w", id, ErrPinned)
		}
		pt.mu.Unlock()
		time.Sleep(50 * time.Microsecond)
		pt.mu.Lock()
		if di, ok = pt.table[id]; !ok {
			return nil
		}
		d = pt.desc(di)
	}
	switch d.state.Load() {
	case stFrame:
		if d.dirty.Swap(false) {
			pt.dirty.Add(-1)
		}
		pt.frameDesc[d.frame] = -1
		pt.releaseFrame(d.frame)
		d.frame = -1
	case stImage:
		pt.freeChain(d.chunk)
		d.chunk = -1
		pt.images--
	}
	pt.retire(di)
	return nil
}

// allocFrame returns a free frame, latched exclusively, evicting to make
// room if its tier is at its target. Called with mu held; may release and
// retake it (to demote, or to wait for the page cleaner).
func (pt *partition) allocFrame() (int32, error) {
	var waitStart time.Time
	for {
		if len(pt.freeDescs) == 0 {
			pt.growDescs() // before choosing, so the eviction below pays for it
		}
		if pt.framesUsed < pt.frameTarget && pt.used()+pt.ps <= pt.avail {
			f := pt.frameFree.alloc()
			if f >= 0 {
				if !pt.latches[f].TryLock() {
					// A goroutine that waited on this frame's previous page
					// still holds the latch for a moment.
					pt.frameFree.release(f)
					pt.mu.Unlock()
					runtime.Gosched()
					pt.mu.Lock()
					continue
				}
				pt.framesUsed++
				if !pt.frameResident[f] {
					pt.frameResident[f] = true
					pt.residentFrames++
				}
				pt.frameDesc[f] = -1
				pt.noteWait(waitStart)
				return int32(f), nil
			}
		}
		// Make room: images first if they hold more than their share of
		// the budget, else a frame.
		if pt.framesUsed < pt.frameTarget && pt.evictImage() {
			continue
		}
		if pt.evictFrame() {
			continue
		}
		// Every frame is pinned or dirty: a free buffer wait.
		if waitStart.IsZero() {
			waitStart = time.Now()
			pt.st.fbWaits.Add(1)
		} else if time.Since(waitStart) > 10*time.Second {
			pt.noteWait(waitStart)
			return -1, ErrNoFrame
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

func (pt *partition) noteWait(start time.Time) {
	if !start.IsZero() {
		pt.st.fbWaitNanos.Add(int64(time.Since(start)))
	}
}

// releaseFrame returns frame f to the free set (its latch stays as it is),
// giving its memory back to the kernel if the frame tier is resident above
// its target. Called with mu held.
func (pt *partition) releaseFrame(f int32) {
	pt.frameFree.release(int(f))
	pt.framesUsed--
	if pt.frameResident[f] && pt.residentFrames*pt.ps > pt.frameTarget*pt.ps+pt.slack {
		pt.frames.release(int(f)*pt.ps, pt.ps)
		pt.frameResident[f] = false
		pt.residentFrames--
	}
}

// evictFrame runs the frame CLOCK until it finds a clean, unpinned frame
// whose reference bit is clear, and demotes it to the compressed tier (or
// drops it). It reports whether a frame was freed. Called with mu held; may
// release and retake it.
func (pt *partition) evictFrame() bool {
	n := len(pt.frameDesc)
	sawDirty := false
	for i := 0; i < 2*n; i++ {
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
		if d.ref.Swap(false) {
			continue
		}
		if d.dirty.Load() {
			sawDirty = true
			continue
		}
		if !pt.latches[f].TryLock() {
			continue
		}
		pt.demote(di, f)
		return true
	}
	if sawDirty {
		pt.pool.kickCleaner()
	}
	return false
}

// demote moves clean frame f (latched exclusively by the caller) of
// descriptor di to the compressed tier, compressing it with the store's
// codec outside the mutex, or drops it if the compressed tier has no room
// or the page does not compress. The frame is freed and unlatched. Called
// with mu held; releases and retakes it when compressing.
func (pt *partition) demote(di, f int32) {
	d := pt.desc(di)
	pt.ghostU.add(d.id)
	pt.st.evictFrames.Add(1)
	if !pt.pool.demoting.Load() {
		// The compressed tier is off (demotion cost more than it saved):
		// remember the page as if it had been demoted and evicted, so that
		// compressed-ghost hits keep measuring what the tier would earn.
		pt.ghostC.add(d.id)
		pt.st.ctlSkipped.Add(1)
	} else if pt.chunkTarget*chunkSize >= 2*pt.ps {
		d.state.Store(stDemoting)
		pt.mu.Unlock()
		bp := pt.pool.scratch.Get().(*[]byte)
		start := time.Now()
		img, used, err := codec.EncodePage(pt.pool.store.Codec(), (*bp)[:0], pt.frameData(f))
		pt.pool.timing.comp.add(time.Since(start))
		pt.mu.Lock()
		if err == nil && used != codec.None {
			if first := pt.allocChain(len(img), pt.ps); first >= 0 {
				pt.writeChain(first, img)
				d.chunk, d.imgLen, d.codec = first, int32(len(img)), used
				d.frame = -1
				d.gen++
				d.ref.Store(false) // enters the image CLOCK cold
				d.state.Store(stImage)
				pt.pushImg(imgRef{di, d.gen})
				pt.images++
				pt.frameDesc[f] = -1
				pt.releaseFrame(f)
				pt.latches[f].Unlock()
				pt.signalLoadDone()
				pt.st.demotions.Add(1)
				pt.st.ctlDemotions.Add(1)
				pt.pool.scratch.Put(bp)
				return
			}
		}
		pt.pool.scratch.Put(bp)
	}
	pt.frameDesc[f] = -1
	pt.releaseFrame(f)
	d.frame = -1
	pt.retire(di)
	pt.latches[f].Unlock()
	pt.signalLoadDone()
}

// evictImage runs the image CLOCK and drops one image. It reports whether
// it freed one. Called with mu held.
func (pt *partition) evictImage() bool {
	for tries := 2 * pt.imgLen; tries > 0 && pt.imgLen > 0; tries-- {
		r := pt.popImg()
		d := pt.desc(r.d)
		if d.state.Load() != stImage || d.gen != r.gen {
			continue // stale: promoted or dropped since
		}
		if d.pins.Load() > 0 || d.ref.Swap(false) {
			pt.pushImg(r) // second chance
			continue
		}
		pt.freeChain(d.chunk)
		d.chunk, d.imgLen = -1, 0
		pt.images--
		pt.ghostC.add(d.id)
		pt.retire(r.d)
		pt.st.evictImages.Add(1)
		return true
	}
	return false
}

func (pt *partition) popImg() imgRef {
	r := pt.imgQueue[pt.imgHead]
	pt.imgHead++
	if pt.imgHead == len(pt.imgQueue) {
		pt.imgHead = 0
	}
	pt.imgLen--
	return r
}

// pushImg appends r to the image ring. The ring has room for twice the
// most images the partition can hold; if stale entries fill it anyway,
// they are squeezed out first.
func (pt *partition) pushImg(r imgRef) {
	if pt.imgLen == len(pt.imgQueue) {
		for n := pt.imgLen; n > 0; n-- {
			e := pt.popImg()
			if d := pt.desc(e.d); d.state.Load() == stImage && d.gen == e.gen {
				pt.pushImg(e)
			}
		}
	}
	pt.imgQueue[(pt.imgHead+pt.imgLen)%len(pt.imgQueue)] = r
	pt.imgLen++
}

// allocChain allocates a chain of chunks for an image of n bytes, evicting
// images to stay within the compressed tier's target and the budget. credit
// is memory that will be freed right after (the frame being demoted). It
// returns the first chunk, or -1. Called with mu held.
func (pt *partition) allocChain(n, credit int) int32 {
	need := (n + chunkSize - 1) / chunkSize
	for pt.chunksUsed+need > pt.chunkTarget || pt.used()-credit+need*chunkSize > pt.avail {
		if !pt.evictImage() {
			return -1
		}
	}
	first, prev := int32(-1), int32(-1)
	for i := 0; i < need; i++ {
		c := int32(pt.chunkFree.alloc())
		pg := int(c) * chunkSize / osPageSize
		if pt.osPageUsed[pg] == 0 && !pt.osPageResident[pg] {
			pt.osPageResident[pg] = true
			pt.residentPages++
		}
		pt.osPageUsed[pg]++
		pt.chunkNext[c] = -1
		if prev >= 0 {
			pt.chunkNext[prev] = c
		} else {
			first = c
		}
		prev = c
	}
	pt.chunksUsed += need
	return first
}

func (pt *partition) freeChain(c int32) {
	for c >= 0 {
		next := pt.chunkNext[c]
		pt.chunkFree.release(int(c))
		pt.chunksUsed--
		pg := int(c) * chunkSize / osPageSize
		pt.osPageUsed[pg]--
		if pt.osPageUsed[pg] == 0 && pt.residentPages*osPageSize > pt.chunkTarget*chunkSize+pt.slack {
			pt.chunks.release(pg*osPageSize, osPageSize)
			pt.osPageResident[pg] = false
			pt.residentPages--
		}
		c = next
	}
}

func (pt *partition) writeChain(c int32, img []byte) {
	for len(img) > 0 {
		off := int(c) * chunkSize
		n := copy(pt.chunks.mem[off:off+chunkSize], img)
		img = img[n:]
		c = pt.chunkNext[c]
	}
}

func (pt *partition) readChain(c int32, n int, dst []byte) []byte {
	out := dst[:n]
	for p := out; len(p) > 0; c = pt.chunkNext[c] {
		off := int(c) * chunkSize
		k := copy(p, pt.chunks.mem[off:off+chunkSize])
		p = p[k:]
	}
	return out
}

// cleanIfNeeded writes dirty frames back when more than the dirty limit of
// frames are dirty or a reader is waiting for a clean frame.
func (pt *partition) cleanIfNeeded() error {
	pt.mu.RLock()
	frames := pt.frameTarget
	pt.mu.RUnlock()
	limit := int64(pt.pool.opts.DirtyLimit * float64(frames))
	if pt.dirty.Load() <= limit && pt.waiting.Load() == 0 {
		return nil
	}
	return pt.flush(false, max(16, frames/8))
}

// flush writes up to limit (all if limit < 0) dirty frames to the store,
// starting at the cleaner's own hand and moving on, a few frames at a time
// so that its pins are short. With wait (FlushAll) it waits for writers
// holding a page, and goes on until no dirty frame is left; without
// (background cleaning) it skips pages in use. The caller must not hold a
// page of the pool when wait is set.
func (pt *partition) flush(wait bool, limit int) error {
	type target struct{ f, d int32 }
	const batch = 16
	written := 0
	var err error
	for passes := 0; err == nil && (limit < 0 || written < limit); {
		var todo []target
		pt.mu.Lock()
		n := len(pt.frameDesc)
		scanned := 0
		for ; scanned < n && len(todo) < batch; scanned++ {
			f := int32(pt.cleanHand)
			pt.cleanHand = (pt.cleanHand + 1) % n
			di := pt.frameDesc[f]
			if di < 0 {
				continue
			}
			d := pt.desc(di)
			if d.state.Load() != stFrame || !d.dirty.Load() || (!wait && d.pins.Load() > 0) {
				continue
			}
			d.pins.Add(1)
			d.flushing.Store(true)
			todo = append(todo, target{f, di})
		}
		pt.mu.Unlock()
		for _, t := range todo {
			d := pt.desc(t.d)
			if err == nil {
				if wait {
					pt.latches[t.f].RLock()
				} else if !pt.latches[t.f].TryRLock() {
					d.flushing.Store(false)
					pt.unpin(t.d)
					continue
				}
				// Pinned, the page cannot be evicted; latched shared, it
				// cannot be modified: what we write is what the frame holds.
				if d.dirty.Load() {
					if _, _, werr := pt.pool.store.WritePage(d.id, pt.frameData(t.f)); werr != nil {
						err = fmt.Errorf("bufferpool: write back page %d: %w", d.id, werr)
					} else {
						if d.dirty.Swap(false) {
							pt.dirty.Add(-1)
						}
						if wait {
							pt.st.checkpointWrites.Add(1)
						} else {
							pt.st.flushes.Add(1)
						}
						written++
					}
				}
				pt.latches[t.f].RUnlock()
			}
			d.flushing.Store(false)
			pt.unpin(t.d)
		}
		if len(todo) < batch {
			// A whole revolution found fewer than a batch.
			passes++
			if !wait || pt.dirty.Load() == 0 || passes > 1000 {
				break
			}
		}
	}
	pt.mu.Lock()
	close(pt.cleaned)
	pt.cleaned = make(chan struct{})
	pt.mu.Unlock()
	return err
}

package bufferpool

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// hookStore wraps a page store so tests can stop the pool at chosen points:
// in the middle of a demotion (Compress of its codec), of a miss
// (ReadImage) or of a write-back (WritePage).
type hookStore struct {
	*pagestore.Store
	c hookCodec

	readHook  atomic.Pointer[func(PageID) error]
	writeHook atomic.Pointer[func(PageID)]
	// failWrite, if set, makes the writes of the pages it returns true for
	// fail (the store itself stays healthy: a transient failure).
	failWrite atomic.Pointer[func(PageID) bool]
}

// injectedWriteError is the hookStore's error for a failed write.
var injectedWriteError = errors.New("hookStore: injected write error")

func (h *hookStore) writeFails(id PageID) bool {
	f := h.failWrite.Load()
	return f != nil && (*f)(id)
}

func newHookStore(s *pagestore.Store) *hookStore {
	h := &hookStore{Store: s}
	h.c.Codec = s.Codec()
	return h
}

func (h *hookStore) Codec() codec.Codec { return &h.c }

func (h *hookStore) ReadImage(id PageID, dst []byte) (pagestore.Image, error) {
	if f := h.readHook.Load(); f != nil {
		if err := (*f)(id); err != nil {
			return pagestore.Image{}, err
		}
	}
	return h.Store.ReadImage(id, dst)
}

func (h *hookStore) WritePage(id PageID, page []byte) (codec.ID, int, error) {
	if f := h.writeHook.Load(); f != nil {
		(*f)(id)
	}
	if h.writeFails(id) {
		return 0, 0, injectedWriteError
	}
	return h.Store.WritePage(id, page)
}

func (h *hookStore) WritePageImage(id PageID, page []byte, c codec.Codec, dst []byte) (pagestore.Image, error) {
	if f := h.writeHook.Load(); f != nil {
		(*f)(id)
	}
	if h.writeFails(id) {
		return pagestore.Image{}, injectedWriteError
	}
	return h.Store.WritePageImage(id, page, c, dst)
}

// hookCodec is the store's codec with an optional hook in Compress, which
// the pool calls to demote a frame (and to write one back, when it is the
// pool's Options.Codec).
type hookCodec struct {
	codec.Codec
	hook atomic.Pointer[func(dst, src []byte) ([]byte, error)]
}

func (c *hookCodec) Compress(dst, src []byte) ([]byte, error) {
	if f := c.hook.Load(); f != nil {
		return (*f)(dst, src)
	}
	return c.Codec.Compress(dst, src)
}

// checkInvariants recounts every counter of every partition from the
// descriptors, frames and image pieces. The pool must be quiescent.
func checkInvariants(t *testing.T, p *Pool) {
	t.Helper()
	for pi, pt := range p.parts {
		pt.mu.Lock()
		ndesc := pt.nDescChunks * descChunkLen
		free := make(map[int32]bool)
		for _, di := range pt.freeDescs {
			if free[di] {
				t.Errorf("part %d: descriptor %d twice on the free list", pi, di)
			}
			free[di] = true
		}
		var frames, images, redundant, granules, dirty, failed, inner int
		owned := map[int32]int32{}
		for di := int32(0); di < int32(ndesc); di++ {
			d := pt.desc(di)
			st := d.state.Load()
			if free[di] != (st == stFree) {
				t.Errorf("part %d: descriptor %d state %d, on free list %v", pi, di, st, free[di])
			}
			if st == stFree {
				continue
			}
			if d.pins.Load() != 0 && d.flushers.Load() == 0 { // the background cleaner's pins are transient
				t.Errorf("part %d: descriptor %d (page %d) still pinned %d", pi, di, d.pageID(), d.pins.Load())
			}
			if d.inner.Load() {
				inner++
			}
			if d.dirty.Load() {
				dirty++
				if d.imgAt >= 0 {
					t.Errorf("part %d: dirty page %d kept an image", pi, d.pageID())
				}
			}
			if d.hasImage.Load() != (d.imgAt >= 0) {
				t.Errorf("part %d: page %d hasImage %v, imgAt %d", pi, d.pageID(), d.hasImage.Load(), d.imgAt)
			}
			if d.imgAt >= 0 {
				held := 0
				for g, n := d.imgAt, 0; g >= 0; n++ {
					if n > 1000 {
						t.Errorf("part %d: page %d's pieces loop", pi, d.pageID())
						break
					}
					owner, next, bytes := pt.pieceAt(g)
					if owner != di {
						t.Errorf("part %d: piece %d of page %d owned by descriptor %d", pi, g, d.pageID(), owner)
					}
					if pt.granStart[g/granulesPerPage]&(1<<(g%granulesPerPage)) == 0 {
						t.Errorf("part %d: page %d's piece at %d has no start bit", pi, d.pageID(), g)
					}
					k := pieceGranules(bytes)
					if int(g)%granulesPerPage+k > granulesPerPage {
						t.Errorf("part %d: page %d's piece at %d (%d granules) crosses an OS page", pi, d.pageID(), g, k)
					}
					for c := int(g); c < int(g)+k; c++ {
						granules++
						if pt.granFree[c/granulesPerPage]&(1<<(c%granulesPerPage)) != 0 {
							t.Errorf("part %d: page %d's image uses free granule %d", pi, d.pageID(), c)
						}
						if c > int(g) && pt.granStart[c/granulesPerPage]&(1<<(c%granulesPerPage)) != 0 {
							t.Errorf("part %d: page %d's piece at %d overlaps the piece at %d", pi, d.pageID(), g, c)
						}
						if o, dup := owned[int32(c)]; dup {
							t.Errorf("part %d: granule %d in the images of descriptors %d and %d", pi, c, o, di)
						}
						owned[int32(c)] = di
					}
					held += bytes
					g = next
				}
				if held != int(d.imgLen) {
					t.Errorf("part %d: page %d's pieces hold %d bytes of its %d-byte image", pi, d.pageID(), held, d.imgLen)
				}
			}
			switch st {
			case stFrame:
				frames++
				if pt.frameDesc[d.frame.Load()] != di {
					t.Errorf("part %d: page %d frame %d maps to descriptor %d", pi, d.pageID(), d.frame.Load(), pt.frameDesc[d.frame.Load()])
				}
				if d.imgAt >= 0 {
					redundant++
				}
			case stImage:
				images++
				if d.imgAt < 0 {
					t.Errorf("part %d: page %d is an image without pieces", pi, d.pageID())
				}
			case stFailed:
				failed++
				t.Errorf("part %d: descriptor %d (page %d) failed and unpinned: leaked", pi, di, d.pageID())
			default:
				t.Errorf("part %d: descriptor %d (page %d) in transient state %d", pi, di, d.pageID(), st)
			}
			if st != stFailed {
				if cur, ok := pt.table.lookup(d.pageID()); !ok || cur != di {
					t.Errorf("part %d: live descriptor %d (page %d) not in the table", pi, di, d.pageID())
				}
			}
		}
		entries, dead := len(tableEntries(pt)), 0
		for i := range *pt.table.slots.Load() {
			if (*pt.table.slots.Load())[i].Load() == slotDead {
				dead++
			}
		}
		if entries != frames+images || pt.table.live != entries || pt.table.dead != dead {
			t.Errorf("part %d: table has %d entries (counted %d) and %d tombstones (counted %d), %d frames + %d images",
				pi, entries, pt.table.live, dead, pt.table.dead, frames, images)
		}
		if pt.framesUsed != frames || pt.frameFree.free != len(pt.frameDesc)-frames {
			t.Errorf("part %d: framesUsed %d, free %d, counted %d frames of %d", pi, pt.framesUsed, pt.frameFree.free, frames, len(pt.frameDesc))
		}
		resident, idle := 0, 0
		for f := range pt.frameDesc {
			if pt.frameResident[f] {
				resident++
			}
			if pt.frameIdle.has(f) {
				idle++
				if !pt.frameResident[f] || !pt.frameFree.isFree(f) {
					t.Errorf("part %d: idle frame %d resident %v free %v", pi, f, pt.frameResident[f], pt.frameFree.isFree(f))
				}
			} else if pt.frameResident[f] && pt.frameFree.isFree(f) {
				t.Errorf("part %d: free resident frame %d not idle", pi, f)
			}
		}
		if resident != pt.residentFrames {
			t.Errorf("part %d: residentFrames %d, counted %d", pi, pt.residentFrames, resident)
		}
		if int64(inner) != pt.innerPages.Load() {
			t.Errorf("part %d: innerPages %d, counted %d live descriptors marked inner", pi, pt.innerPages.Load(), inner)
		}
		if pt.images != images || pt.redundant != redundant || pt.granulesUsed != granules {
			t.Errorf("part %d: images %d redundant %d granulesUsed %d, counted %d images, %d redundant, %d granules", pi, pt.images, pt.redundant, pt.granulesUsed, images, redundant, granules)
		}
		if images+redundant > pt.maxImages {
			t.Errorf("part %d: %d images, more than maxImages %d", pi, images+redundant, pt.maxImages)
		}
		pages := 0
		for pg, w := range pt.granFree {
			n := 0 // used granules, from the descriptors
			for c := pg * granulesPerPage; c < (pg+1)*granulesPerPage; c++ {
				if _, ok := owned[int32(c)]; ok {
					n++
				}
			}
			if used := granulesPerPage - bits.OnesCount64(w); used != n {
				t.Errorf("part %d: OS page %d has %d granules marked used, %d in images", pi, pg, used, n)
			}
			for c := pg * granulesPerPage; c < (pg+1)*granulesPerPage; c++ {
				if _, ok := owned[int32(c)]; !ok && pt.granStart[pg]&(1<<(c%granulesPerPage)) != 0 {
					t.Errorf("part %d: start bit at free granule %d", pi, c)
				}
			}
			if pt.freshPages.has(pg) == (n > 0) || pt.partialPages.has(pg) != (n > 0 && n < granulesPerPage) {
				t.Errorf("part %d: OS page %d with %d granules used: fresh %v partial %v", pi, pg, n, pt.freshPages.has(pg), pt.partialPages.has(pg))
			}
			if n > 0 {
				pages++
			}
		}
		if pages != pt.residentPages {
			t.Errorf("part %d: residentPages %d, counted %d", pi, pt.residentPages, pages)
		}
		// The dirty flag and counter change in two steps outside the
		// mutex (MarkDirty, the cleaner): allow the page cleaner's batch.
		if diff := int(pt.dirty.Load()) - dirty; diff < -16 || diff > 16 {
			t.Errorf("part %d: dirty counter %d, counted %d", pi, pt.dirty.Load(), dirty)
		}
		if pt.resident()+pt.metaBytes() > pt.budget {
			t.Errorf("part %d: %d bytes resident + %d metadata > budget %d", pi, pt.resident(), pt.metaBytes(), pt.budget)
		}
		pt.mu.Unlock()
	}
}

// waitDone waits up to d for ch; it reports whether ch delivered.
func waitDone[T any](ch <-chan T, d time.Duration) (T, bool) {
	select {
	case v := <-ch:
		return v, true
	case <-time.After(d):
		var zero T
		return zero, false
	}
}

// TestReviewMinimumCacheSize: validate accepts CacheSize = partitions ×
// (8 pages + 64 KiB), but with 4 KiB pages the first descriptor chunk alone
// (1024 × ~84 bytes) plus the rest of the metadata is more than the whole
// partition budget: avail becomes negative, frameTarget is clamped to 4
// although not one frame fits, and every Get/NewPage fails with ErrNoFrame
// after a 10 s free buffer wait.
func TestReviewMinimumCacheSize(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	minSize := int64(8*testPageSize + 64<<10)
	p, err := New(s, Options{CacheSize: minSize, Partitions: 1, FixedShare: true})
	if err != nil {
		return // rejecting the size is a fine fix
	}
	pt := p.parts[0]
	pt.mu.Lock()
	if len(pt.freeDescs) == 0 {
		pt.growDescs() // what the first allocFrame does
	}
	avail := pt.avail - pt.resident()
	pt.mu.Unlock()
	if target := 4; avail < target*testPageSize {
		// Do not close: NewPage would spin for 10 s. Leak the pool.
		t.Fatalf("CacheSize %d accepted, but after the first descriptor chunk avail = %d bytes for frameTarget %d frames of %d: no page can ever be loaded (ErrNoFrame after 10 s)",
			minSize, avail, target, testPageSize)
	}
	done := make(chan error, 1)
	go func() {
		pg, err := p.NewPage()
		if err == nil {
			pg.Release()
		}
		done <- err
	}()
	if err, ok := waitDone(done, 3*time.Second); !ok || err != nil {
		t.Fatalf("NewPage on a minimum-size pool: done %v err %v", ok, err)
	}
	p.Close()
}

// stateOf returns page id's descriptor index, state, frame and pins.
func stateOf(p *Pool, id PageID) (di int32, st pageState, frame int32, pins int32, ok bool) {
	pt := p.partFor(id)
	pt.mu.RLock()
	defer pt.mu.RUnlock()
	di, ok = pt.table.lookup(id)
	if !ok {
		return -1, stFree, -1, 0, false
	}
	d := pt.desc(di)
	return di, d.state.Load(), d.frame.Load(), d.pins.Load(), true
}

// TestReviewStaleLatchDeadlock: a Get that finds its page stDemoting pins
// it and blocks on the latch of the frame being demoted. When the demotion
// finishes, that frame goes back to the free set and is unlatched; the
// demoting goroutine's own allocFrame TryLocks it straight away (it is the
// lowest free frame) and loads an unrelated page Z into it, handing it out
// Exclusive. The waiter is now blocked on Z's latch although it never
// asked for Z. Two goroutines that latch pages in a consistent order
// (Z < P < X: B holds P and wants X, D holds Z and wants P) deadlock.
func TestReviewStaleLatchDeadlock(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	hs := newHookStore(s)
	// Demotions must compress (through the hook): no kept images.
	keepImages = false
	defer func() { keepImages = true }()
	p, err := New(hs, Options{CacheSize: 256 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.5, Codec: &hs.c})
	if err != nil {
		t.Fatal(err)
	}
	const n = 80
	populate(t, p, n)
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	// P: a page in a frame, held Exclusive by B for the whole test.
	const P = PageID(n - 1)
	bHolds := make(chan struct{})
	bGetX := make(chan PageID)
	bDone := make(chan error, 1)
	go func() {
		pg, err := p.Get(P, Exclusive)
		if err != nil {
			bDone <- err
			return
		}
		close(bHolds)
		x := <-bGetX
		px, err := p.Get(x, Exclusive)
		if err == nil {
			px.Release()
		}
		pg.Release()
		bDone <- err
	}()
	<-bHolds
	// Z: a page not in a frame. Loading it evicts a frame: the demotion
	// stops in Compress until released.
	var Z PageID = math.MaxUint64
	for id := PageID(0); id < n; id++ {
		if _, st, _, _, _ := stateOf(p, id); st != stFrame {
			Z = id
			break
		}
	}
	if Z == math.MaxUint64 {
		t.Fatal("every page is in a frame")
	}
	inCompress := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	hook := func(dst, src []byte) ([]byte, error) {
		once.Do(func() { close(inCompress); <-release })
		return hs.c.Codec.Compress(dst, src)
	}
	hs.c.hook.Store(&hook)
	dGotZ := make(chan int32, 1)
	dGetP := make(chan struct{})
	dDone := make(chan error, 1)
	go func() {
		pz, err := p.Get(Z, Exclusive)
		if err != nil {
			dGotZ <- -1
			dDone <- err
			return
		}
		dGotZ <- pz.frame
		<-dGetP
		pp, err := p.Get(P, Exclusive)
		if err == nil {
			pp.Release()
		}
		pz.Release()
		dDone <- err
	}()
	if _, ok := waitDone(inCompress, 2*time.Second); !ok {
		t.Fatal("loading Z did not demote a frame")
	}
	hs.c.hook.Store(nil)
	// X: the page being demoted.
	X, fx := PageID(math.MaxUint64), int32(-1)
	pt := p.parts[0]
	pt.mu.RLock()
	for id, di := range tableEntries(pt) {
		if d := pt.desc(di); d.state.Load() == stDemoting {
			X, fx = id, d.frame.Load()
		}
	}
	pt.mu.RUnlock()
	if fx < 0 {
		t.Fatal("no page is demoting")
	}
	bGetX <- X
	time.Sleep(50 * time.Millisecond) // B is now waiting for X's demotion to end
	close(release)
	fz, ok := waitDone(dGotZ, 2*time.Second)
	if !ok {
		t.Fatal("loading Z did not finish")
	}
	if fz < 0 {
		t.Fatalf("get Z: %v", <-dDone)
	}
	t.Logf("X=%d was demoted from frame %d; Z=%d loaded into frame %d; B holds P=%d and waits for X", X, fx, Z, fz, P)
	close(dGetP)
	errB, okB := waitDone(bDone, 2*time.Second)
	errD, okD := waitDone(dDone, 10*time.Millisecond)
	if !okB || !okD {
		// Leak the pool: its goroutines are stuck for good.
		t.Fatalf("deadlock: B (holds P, Get X) done=%v, D (holds Z in X's old frame %d, Get P) done=%v; B is parked on the latch of frame %d, which now belongs to Z",
			okB, fx, okD, fz)
	}
	if errB != nil || errD != nil {
		t.Fatal(errB, errD)
	}
	checkInvariants(t, p)
	p.Close()
	s.Close()
}

// fillDirty creates pages through NewPage until the partition's frames are
// all in use (all dirty), releasing them, and returns their ids in frame order.
func fillDirty(t *testing.T, p *Pool) []PageID {
	t.Helper()
	pt := p.parts[0]
	var ids []PageID
	for {
		pt.mu.RLock()
		full := pt.frameIdle.n == 0 && pt.resident()+pt.ps > pt.avail
		pt.mu.RUnlock()
		if full {
			return ids
		}
		pg, err := p.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		fillPage(pg.Data(), pg.ID(), 1)
		ids = append(ids, pg.ID())
		pg.Release()
	}
}

// TestReviewCleanerStuckOnLatchedPages: when a reader waits for a free
// frame, the cleaner runs flush(false, max(16, frames/8)): it takes the
// first `limit` dirty frames from the CLOCK hand, pins them and skips those
// it cannot TryRLock. Skipped frames still count toward the limit, and a
// failed evictFrame turns the hand 2n times, back to where it was. So if the
// 16 dirty frames at the hand are latched Exclusive by their users, the
// cleaner never writes any other dirty frame, and the waiter gets ErrNoFrame
// after 10 s although dozens of unpinned dirty frames could be cleaned.
func TestReviewCleanerStuckOnLatchedPages(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	// DirtyLimit 1: the cleaner runs only for waiters.
	p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0, DirtyLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	// A writer holds 16 new pages Exclusive (frames 0..15, at the hand).
	var held []Page
	for i := 0; i < 16; i++ {
		pg, err := p.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, pg)
	}
	others := fillDirty(t, p)
	if len(others) < 16 {
		t.Fatalf("only %d other frames", len(others))
	}
	done := make(chan error, 1)
	go func() {
		pg, err := p.NewPage()
		if err == nil {
			pg.Release()
		}
		done <- err
	}()
	_, ok := waitDone(done, 2*time.Second)
	st := p.Stats()
	for _, pg := range held {
		pg.Release()
	}
	if !ok {
		err, _ := waitDone(done, 15*time.Second)
		t.Fatalf("NewPage waited > 2 s for a frame while %d unpinned dirty frames could be cleaned (flushes %d, dirty %d); after the 16 held pages were released: err %v",
			len(others), st.Flushes, st.DirtyPages, err)
	}
	checkInvariants(t, p)
	p.Close()
}

// TestReviewFlushAllPinsEverything: flush(wait=true) pins every dirty frame
// of the partition up front and then waits for each latch in turn. While it
// waits for one page that a writer holds, every other dirty page stays
// pinned — even after the background cleaner has written it — so nothing can
// be evicted. The writer, which holds one page and reads another (B-tree
// lock coupling), waits for a frame that FlushAll's pins keep, FlushAll
// waits for the writer's page: the writer gets ErrNoFrame after 10 s.
func TestReviewFlushAllPinsEverything(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0, DirtyLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	ids := fillDirty(t, p)
	if err := p.FlushAll(); err != nil { // all in the store, so any can be read back
		t.Fatal(err)
	}
	for _, id := range ids { // dirty again
		pg, err := p.Get(id, Exclusive)
		if err != nil {
			t.Fatal(err)
		}
		pg.MarkDirty()
		pg.Release()
	}
	extra, err := p.NewPage() // a page in the store but not in a frame
	if err != nil {
		t.Fatal(err)
	}
	fillPage(extra.Data(), extra.ID(), 1)
	extra.Release()
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids { // dirty again, and not the extra page
		pg, err := p.Get(id, Exclusive)
		if err != nil {
			t.Fatal(err)
		}
		pg.MarkDirty()
		pg.Release()
	}
	var missing PageID = math.MaxUint64
	for _, id := range append(ids, extra.ID()) {
		if _, _, _, _, ok := stateOf(p, id); !ok {
			missing = id
		}
	}
	if missing == math.MaxUint64 {
		t.Fatal("every page is cached")
	}
	// The writer holds the page at the CLOCK hand (the first FlushAll visits).
	pt := p.parts[0]
	pt.mu.RLock()
	var first PageID
	for i := 0; i < len(pt.frameDesc); i++ {
		if di := pt.frameDesc[(pt.hand+i)%len(pt.frameDesc)]; di >= 0 {
			first = pt.desc(di).pageID()
			break
		}
	}
	pt.mu.RUnlock()
	wHolds := make(chan struct{})
	wGo := make(chan struct{})
	wDone := make(chan error, 1)
	go func() {
		pg, err := p.Get(first, Exclusive)
		if err != nil {
			wDone <- err
			return
		}
		pg.MarkDirty()
		close(wHolds)
		<-wGo
		other, err := p.Get(missing, Shared)
		if err == nil {
			other.Release()
		}
		pg.Release()
		wDone <- err
	}()
	<-wHolds
	fDone := make(chan error, 1)
	go func() { fDone <- p.FlushAll() }()
	// Let FlushAll start (it now pins a few pages at a time).
	time.Sleep(50 * time.Millisecond)
	close(wGo)
	werr, ok := waitDone(wDone, 2*time.Second)
	if !ok {
		st := p.Stats()
		// Leak: the writer returns ErrNoFrame after 10 s, then FlushAll ends.
		t.Fatalf("writer holding page %d and reading page %d is stuck behind FlushAll (flushes by cleaner %d, dirty %d): FlushAll's pins keep every cleaned frame from eviction", first, missing, st.Flushes, st.DirtyPages)
	}
	if werr != nil {
		t.Fatal(werr)
	}
	if err, _ := waitDone(fDone, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	p.Close()
}

// TestReviewFreePageDuringFlush: drop gives a page the cleaner has pinned
// 100 ms to be unpinned, then reports ErrPinned. But flush pins all its
// targets up front and writes them one by one, so a page near the end of a
// FlushAll (or of a cleaner batch on a slow device) stays pinned for the
// whole batch: FreePage of a page nobody uses fails with ErrPinned.
func TestReviewFreePageDuringFlush(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	hs := newHookStore(s)
	p, err := New(hs, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, DirtyLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const n = 12
	populate(t, p, n)
	slow := func(PageID) { time.Sleep(15 * time.Millisecond) } // a slow device
	hs.writeHook.Store(&slow)
	fDone := make(chan error, 1)
	go func() { fDone <- p.FlushAll() }()
	// FlushAll visits frames from the hand (0): page n-1 is written last.
	victim := PageID(n - 1)
	for start := time.Now(); time.Since(start) < 2*time.Second; time.Sleep(100 * time.Microsecond) {
		if _, _, _, pins, _ := stateOf(p, victim); pins > 0 {
			break // FlushAll is writing it
		}
	}
	err = p.FreePage(victim)
	if ferr := <-fDone; ferr != nil {
		t.Fatal(ferr)
	}
	hs.writeHook.Store(nil)
	if err != nil {
		t.Fatalf("FreePage of an unused page during FlushAll: %v", err)
	}
}

// imageHits reads, k times, a page that is currently a compressed image,
// so the pool promotes and demotes but never misses.
func imageHits(t *testing.T, p *Pool, k int) {
	t.Helper()
	pt := p.parts[0]
	for i := 0; i < k; i++ {
		var id PageID
		found := false
		pt.mu.RLock()
		for pid, di := range tableEntries(pt) {
			if pt.desc(di).state.Load() == stImage {
				id, found = pid, true
				break
			}
		}
		pt.mu.RUnlock()
		if !found {
			t.Fatalf("no image to hit after %d: %+v", i, p.Stats())
		}
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatal(err)
		}
		pg.Release()
	}
}

// fillImageTier creates pages until the compressed tier holds pages and has
// started evicting images (it is full). Nothing is ever read from the store.
func fillImageTier(t *testing.T, p *Pool) {
	t.Helper()
	for i := 0; i < 5000; i++ {
		pg, err := p.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		fillPage(pg.Data(), pg.ID(), 1)
		pg.Release()
		if st := p.Stats(); st.ImageEvictions > 0 && st.Images > 50 {
			return
		}
	}
	t.Fatalf("the compressed tier never filled: %+v", p.Stats())
}

// TestReviewGateWithoutDiskTiming: the on/off gate compares
// hits × T_disk_read with demotions × T_comp, but unlike decide it never
// checks that T_disk_read has been measured. A pool whose pages were
// created with NewPage and are all served from its two tiers has never read
// the store: T_disk_read is 0, so every compressed hit is judged worthless
// and the tier is switched off (R = 0), sending the pages it held to disk.
func TestReviewGateWithoutDiskTiming(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 1, ControllerInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	fillImageTier(t, p)
	imageHits(t, p, 400)
	p.adjust()
	st := p.Stats()
	if st.Misses != 0 {
		t.Fatalf("%d misses", st.Misses)
	}
	t.Logf("hitsC %d demotions %d images %d TDiskRead %v TComp %v R %.2f", st.HitsCompressed, st.Demotions, st.Images, st.TDiskRead, st.TComp, st.Share)
	if !p.compressing.Load() {
		t.Fatalf("compressed tier switched off (R=%.2f) after %d compressed hits and no miss, judged with T_disk_read unmeasured (%v)", st.Share, st.HitsCompressed, st.TDiskRead)
	}
}

// TestReviewSetShareAfterGateOff: when the gate switches the compressed
// tier off it clears p.compressing; only the auto-mode gate sets it again. A
// later SetShare(R) fixes R and turns auto off, so demoting stays false for
// good: R of the budget is reserved for images that demote never creates
// (it drops every evicted frame), and the frames are capped at 1−R.
func TestReviewSetShareAfterGateOff(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 1, ControllerInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// What adjust does when it switches the tier off.
	p.compressing.Store(false)
	p.setShare(0)
	p.retargetAll()
	p.SetShare(0.5)
	populate(t, p, 300)
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 600; i++ {
		pg, err := p.Get(PageID(i%300), Shared)
		if err != nil {
			t.Fatal(err)
		}
		pg.Release()
	}
	st := p.Stats()
	if st.Demotions == 0 {
		t.Fatalf("SetShare(0.5) after the tier was switched off: %d evictions, 0 demotions, %d images; frames capped at %d (%d bytes reserved for images)",
			st.Evictions, st.Images, st.FrameTarget, st.ImageTargetBytes)
	}
}

// TestReviewNaNShare: validate and SetShare let NaN through (every
// comparison with NaN is false, and math.Min/Max return NaN), so R is NaN:
// Stats reports it, the controller's decide keeps it NaN forever, and
// int(NaN × avail) is an implementation-defined image target.
func TestReviewNaNShare(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	if p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: math.NaN()}); err == nil {
		p.Close()
		t.Error("Options.CompressedShare = NaN accepted")
	}
	p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.SetShare(math.NaN())
	if r := p.Share(); math.IsNaN(r) {
		t.Errorf("SetShare(NaN): R = %v (image target %d bytes)", r, p.Stats().ImageTargetBytes)
	}
}

// TestReviewLoadErrorWithWaiters: a miss whose store read fails while other
// goroutines wait on the loading page (pinned, parked on its latch): every
// Get reports the error, and the descriptor, frame and counters all come
// back (the waiters free the failed descriptor when they unpin).
func TestReviewLoadErrorWithWaiters(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	hs := newHookStore(s)
	p, err := New(hs, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	populate(t, p, 200)
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	var target PageID = math.MaxUint64
	for id := PageID(0); id < 200; id++ {
		if _, _, _, _, ok := stateOf(p, id); !ok {
			target = id
			break
		}
	}
	if target == math.MaxUint64 {
		t.Fatal("every page cached")
	}
	errInjected := errors.New("injected read error")
	entered := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	hook := func(id PageID) error {
		if id != target {
			return nil
		}
		first := false
		once.Do(func() { first = true; close(entered); <-release })
		if first {
			return errInjected
		}
		return nil
	}
	hs.readHook.Store(&hook)
	const waiters = 6
	errs := make(chan error, waiters+1)
	get := func(mode Mode) {
		pg, err := p.Get(target, mode)
		if err == nil {
			pageVersion(t, pg.Data(), target)
			pg.Release()
		}
		errs <- err
	}
	go get(Exclusive)
	<-entered
	for i := 0; i < waiters; i++ {
		go get(Mode(i % 2))
	}
	time.Sleep(50 * time.Millisecond) // the waiters are waiting for the load
	close(release)
	var failed int
	for i := 0; i < waiters+1; i++ {
		if err := <-errs; err != nil {
			if !errors.Is(err, errInjected) {
				t.Fatal(err)
			}
			failed++
		}
	}
	hs.readHook.Store(nil)
	if failed != 1 {
		t.Errorf("%d Gets failed, want the loader's only (waiters retry)", failed)
	}
	checkInvariants(t, p)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReviewCorruptImage: a demoted image that fails to decompress (here
// the codec produces garbage) fails the promoting Get and its waiters
// retry; the image is dropped and the page is read again from the store.
func TestReviewCorruptImage(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	hs := newHookStore(s)
	// Every demotion must compress (with the garbage codec below), not
	// reuse the image a page was read from or written as.
	keepImages = false
	defer func() { keepImages = true }()
	p, err := New(hs, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.5, Codec: &hs.c})
	if err != nil {
		t.Fatal(err)
	}
	const n = 150
	populate(t, p, n)
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	garbage := func(dst, src []byte) ([]byte, error) {
		dst = append(dst[:0], make([]byte, len(src)/4)...)
		for i := range dst {
			dst[i] = 0xff
		}
		return dst, nil
	}
	hs.c.hook.Store(&garbage)
	// Reading the first pages demotes the later ones, with garbage images
	// (all of them would find the garbage they made themselves).
	for id := PageID(0); id < n/3; id++ {
		pg, err := p.Get(id, Shared)
		if err != nil {
			if !errors.Is(err, codec.ErrCorrupt) {
				t.Fatal(err)
			}
			continue
		}
		pg.Release()
	}
	hs.c.hook.Store(nil)
	var wg sync.WaitGroup
	var bad atomic.Int64
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := PageID(0); id < n; id++ {
				pg, err := p.Get(id, Mode(g%2))
				if err != nil {
					if !errors.Is(err, codec.ErrCorrupt) {
						t.Error(err)
					}
					bad.Add(1)
					continue
				}
				pageVersion(t, pg.Data(), id)
				pg.Release()
			}
		}()
	}
	wg.Wait()
	if bad.Load() == 0 {
		t.Fatal("no corrupt image was promoted")
	}
	for id := PageID(0); id < n; id++ { // all readable from the store again
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatal(err)
		}
		pageVersion(t, pg.Data(), id)
		pg.Release()
	}
	checkInvariants(t, p)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReviewInvariantsUnderChurn: concurrent Get/MarkDirty/NewPage/
// FreePage/FlushAll/SetShare through a small two-partition pool; afterwards
// every counter matches a recount, and no update was lost (in the pool and
// in the store after Close and reopen).
func TestReviewInvariantsUnderChurn(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs, "snappy")
	p, err := New(s, Options{CacheSize: 384 << 10, Partitions: 2, ControllerInterval: 2e6})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	populate(t, p, n)
	// Each goroutine owns a set of pages (ids mod G, then the ones it
	// creates), so its model of their versions is exact.
	const G = 6
	locals := make([]map[PageID]uint64, G)
	var wg sync.WaitGroup
	for g := 0; g < G; g++ {
		local := map[PageID]uint64{}
		for id := PageID(g); id < n; id += G {
			local[id] = 1
		}
		locals[g] = local
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 77))
			var mine []PageID
			for id := range local {
				mine = append(mine, id)
			}
			for i := 0; i < 2000; i++ {
				r := rng.IntN(40)
				if len(mine) == 0 {
					r = 38
				}
				var k int
				var id PageID
				if len(mine) > 0 {
					k = rng.IntN(len(mine))
					id = mine[k]
				}
				switch {
				case r < 24:
					pg, err := p.Get(id, Shared)
					if err != nil {
						t.Error(err)
						return
					}
					if v := pageVersion(t, pg.Data(), id); v != local[id] {
						t.Errorf("page %d version %d, want %d", id, v, local[id])
					}
					pg.Release()
				case r < 34:
					pg, err := p.Get(id, Exclusive)
					if err != nil {
						t.Error(err)
						return
					}
					local[id]++
					fillPage(pg.Data(), id, local[id])
					pg.MarkDirty()
					pg.Release()
				case r < 37:
					if err := p.FreePage(id); err != nil {
						if errors.Is(err, ErrPinned) {
							continue // see TestReviewFreePageDuringFlush
						}
						t.Error(err)
						return
					}
					delete(local, id)
					mine[k] = mine[len(mine)-1]
					mine = mine[:len(mine)-1]
				case r < 39:
					pg, err := p.NewPage()
					if err != nil {
						t.Error(err)
						return
					}
					id := pg.ID()
					if _, dup := local[id]; dup {
						t.Errorf("NewPage returned live page %d", id)
					}
					local[id] = 1
					fillPage(pg.Data(), id, 1)
					pg.Release()
					mine = append(mine, id)
				default:
					if g == 0 {
						if err := p.FlushAll(); err != nil {
							t.Error(err)
							return
						}
					}
				}
			}
		}(g)
	}
	stop := make(chan struct{})
	changed := make(chan struct{})
	go func() { // R changes under the load
		defer close(changed)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			p.SetShare([]float64{0, 0.3, 0.9}[i%3])
		}
	}()
	wg.Wait()
	close(stop)
	<-changed
	if t.Failed() {
		return
	}
	checkInvariants(t, p)
	ver := map[PageID]uint64{}
	for _, local := range locals {
		for id, v := range local {
			if _, dup := ver[id]; dup {
				t.Fatalf("page %d owned twice", id)
			}
			ver[id] = v
		}
	}
	for id, v := range ver {
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatal(err)
		}
		if got := pageVersion(t, pg.Data(), id); got != v {
			t.Fatalf("page %d version %d, want %d", id, got, v)
		}
		pg.Release()
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openStore(t, fs, "snappy")
	defer s.Close()
	buf := make([]byte, testPageSize)
	for id, v := range ver {
		if err := s.ReadPage(id, buf); err != nil {
			t.Fatal(err)
		}
		if got := pageVersion(t, buf, id); got != v {
			t.Fatalf("reopened: page %d version %d, want %d", id, got, v)
		}
	}
}

// TestReviewFreeUnwrittenPageLeaksID: NewPage allocates an id that the
// store reserves only in memory; FreePage before the page was ever written
// back makes store.Free return ErrNotFound, which FreePage ignores — and
// the id never reaches the store's free list, so it is never reused (a
// hole in the dense id space, and 12 bytes of page map, until a restart).
// The same page freed after a flush is reused at once.
func TestReviewFreeUnwrittenPageLeaksID(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 1, DirtyLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	reused := func(flush bool) bool {
		pg, err := p.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		id := pg.ID()
		pg.Release()
		if flush {
			if err := p.FlushAll(); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.FreePage(id); err != nil {
			t.Fatal(err)
		}
		pg, err = p.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		defer pg.Release()
		return pg.ID() == id
	}
	if !reused(true) {
		t.Fatal("a freed, written page's id is not reused")
	}
	if !reused(false) {
		t.Error("the id of a page freed before its first write-back is never reused")
	}
}

// TestReviewSetShareLostToController: adjust reads "auto" once at the
// start and applies its R at the end, without SetShare synchronising with
// it. A SetShare that lands in between is overwritten, yet auto stays off:
// R is stuck at the controller's value instead of the one asked for.
func TestReviewSetShareLostToController(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 1, ControllerInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// Evidence that frames would earn more: adjust will lower R.
	p.timing.disk.add(100 * time.Microsecond)
	p.timing.decom.add(10 * time.Microsecond)
	p.parts[0].st.ghostUonMiss.Add(100)
	pt := p.parts[0]
	pt.mu.Lock() // adjust will stop in imageFill, after reading auto
	adjusted := make(chan struct{})
	go func() { p.adjust(); close(adjusted) }()
	time.Sleep(50 * time.Millisecond)
	set := make(chan struct{})
	go func() { p.SetShare(0.7); close(set) }()
	time.Sleep(50 * time.Millisecond)
	pt.mu.Unlock()
	<-adjusted
	<-set
	if r := p.Share(); r != 0.7 {
		t.Fatalf("SetShare(0.7) during a controller step: R = %.4f, auto %v", r, p.Stats().Auto)
	}
}

// memStore is a minimal in-memory Store, for page sizes the page store
// does not support.
type memStore struct {
	mu    sync.Mutex
	ps    int
	c     codec.Codec
	imgs  map[PageID]pagestore.Image
	next  PageID
	freed []PageID
}

func newMemStore(ps int) *memStore {
	c, _ := codec.New(codec.LZ4, 0)
	return &memStore{ps: ps, c: c, imgs: map[PageID]pagestore.Image{}}
}

func (m *memStore) PageSize() int      { return m.ps }
func (m *memStore) Codec() codec.Codec { return m.c }
func (m *memStore) Sync() error        { return nil }
func (m *memStore) Release(PageID)     {}

func (m *memStore) ReadImage(id PageID, dst []byte) (pagestore.Image, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	img, ok := m.imgs[id]
	if !ok {
		return pagestore.Image{}, fmt.Errorf("mem: page %d: %w", id, pagestore.ErrNotFound)
	}
	return pagestore.Image{Codec: img.Codec, Data: append(dst[:0], img.Data...)}, nil
}

func (m *memStore) WritePage(id PageID, page []byte) (codec.ID, int, error) {
	img, used, err := codec.EncodePage(m.c, nil, page)
	if err != nil {
		return 0, 0, err
	}
	m.mu.Lock()
	m.imgs[id] = pagestore.Image{Codec: used, Data: img}
	m.mu.Unlock()
	return used, len(img), nil
}

func (m *memStore) Free(id PageID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.imgs[id]; !ok {
		return pagestore.ErrNotFound
	}
	delete(m.imgs, id)
	m.freed = append(m.freed, id)
	return nil
}

func (m *memStore) Allocate() (PageID, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := len(m.freed); n > 0 {
		id := m.freed[n-1]
		m.freed = m.freed[:n-1]
		return id, nil
	}
	m.next++
	return m.next - 1, nil
}

// TestReviewReleaseFrameSmallerThanOSPage: releaseFrame gives a frame back
// with madvise(MADV_DONTNEED) on [f·ps, f·ps+ps). The kernel rounds the
// length up to whole OS pages, so when the page size is smaller than the
// OS page (4–16 KiB pages, the default 4 KiB among them, on a 64 KiB-page
// arm64/ppc64le kernel, or 4–8 KiB pages on a 16 KiB-page kernel) and f·ps is OS-page
// aligned, the neighbouring frames f+1.. are zeroed while they hold pages:
// silent corruption, and lost updates for dirty ones. (When f·ps is not
// aligned the call fails with EINVAL, ignored, and the RSS accounting is
// wrong.) On amd64 the same happens with a 1 KiB-page store, which New
// accepts.
func TestReviewReleaseFrameSmallerThanOSPage(t *testing.T) {
	const ps = 1024
	ms := newMemStore(ps)
	p, err := New(ms, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0})
	if err != nil {
		return // rejecting page sizes below the OS page is a fine fix
	}
	defer p.Close()
	const n = 200
	populate(t, p, n)
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	// A larger compressed share: the frame tier is now resident far above
	// its target, so frames freed from now on are given back to the kernel.
	p.SetShare(0.9)
	for i := 0; i < 40; i++ { // demote some frames
		pg, err := p.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		fillPage(pg.Data(), pg.ID(), 1)
		pg.Release()
	}
	want := make([]byte, ps)
	bad := 0
	for id := PageID(0); id < n; id++ {
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatal(err)
		}
		fillPage(want, id, 1)
		if string(pg.Data()) != string(want) {
			bad++
		}
		pg.Release()
	}
	if bad > 0 {
		t.Fatalf("%d of %d pages read back corrupt: madvise of a %d-byte frame zeroed its neighbours (OS page %d)", bad, n, ps, osPageSize)
	}
}

// tableEntries returns partition pt's page table as a map. Called with mu
// held.
func tableEntries(pt *partition) map[PageID]int32 {
	m := make(map[PageID]int32)
	slots := *pt.table.slots.Load()
	for i := range slots {
		if w := slots[i].Load(); w != slotEmpty && w != slotDead {
			m[PageID(w>>32)] = int32(uint32(w))
		}
	}
	return m
}

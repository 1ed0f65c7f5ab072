package bufferpool

import (
	"errors"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// What the pool does when a compression or a write-back fails, and after:
// scratch buffers stay whole, a transient write failure ends by itself,
// one partition's failure does not hold back the others' pages, and a page
// id that could not get a frame goes back to the store.

// newHookPool opens a pool with opts over a hookStore on a fresh in-memory
// store, compressing through the hook's codec if hookCodec; the store is
// closed when the test ends.
func newHookPool(t *testing.T, opts Options, hookCodec bool) (*hookStore, *Pool) {
	t.Helper()
	s := openStore(t, vfs.NewMem(), "lz4")
	t.Cleanup(func() { s.Close() })
	hs := newHookStore(s)
	if hookCodec {
		opts.Codec = &hs.c
	}
	p, err := New(hs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return hs, p
}

// newPageOnceWritable creates a new page, retrying while the pool has no
// frame for it (ErrNoFrame) for up to 5 s: the time the cleaner gets to
// write back the dirty pages of a store that works again.
func newPageOnceWritable(t *testing.T, p *Pool) Page {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		pg, err := p.NewPage()
		if err == nil {
			return pg
		}
		if !errors.Is(err, ErrNoFrame) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after the store recovered, new pages still fail: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFailedCompressionKeepsScratchBuffers: demotions whose compression
// fails return no buffer. The scratch buffer they took must go back to the
// pool whole: a nil one there made the next promotion that took it panic
// (slicing the image out of a zero-capacity buffer).
func TestFailedCompressionKeepsScratchBuffers(t *testing.T) {
	keepImages = false // every demotion compresses
	defer func() { keepImages = true }()
	hs, p := newHookPool(t, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.5}, true)
	const n = 150
	populate(t, p, n)
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	fail := func(dst, src []byte) ([]byte, error) { return nil, errors.New("injected compression failure") }
	hs.c.hook.Store(&fail)
	failed := p.Stats().Demotions
	for id := PageID(0); id < n; id++ { // demotions that fail
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatal(err)
		}
		pg.Release()
	}
	if p.Stats().Demotions != failed {
		t.Fatal("a demotion succeeded with a failing codec")
	}
	hs.c.hook.Store(nil)
	for round := 0; round < 3; round++ { // demotions, then promotions
		for id := PageID(0); id < n; id++ {
			pg, err := p.Get(id, Shared)
			if err != nil {
				t.Fatal(err)
			}
			pageVersion(t, pg.Data(), id)
			pg.Release()
		}
	}
	if st := p.Stats(); st.Promotions == 0 {
		t.Fatalf("no promotion ran (stats %+v)", st)
	}
	checkInvariants(t, p)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTransientWriteFailureEnds: a write-back fails once (FlushAll) and
// the store then works again. Every frame is pinned or dirty, with fewer
// dirty pages than the dirty limit, so a page that needs a frame fails at
// once while the write error stands. The cleaner must retry the writes by
// itself: before, it only wrote back for a waiting reader (the failing one
// does not wait) or above the dirty limit, so the error stood, and every
// new page failed, until the next checkpoint.
func TestTransientWriteFailureEnds(t *testing.T) {
	hs, p := newHookPool(t, Options{CacheSize: 256 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0}, false)
	defer p.Close()
	var held []Page
	defer func() {
		for _, pg := range held {
			pg.Release()
		}
	}()
	// Fill the frames with clean pages.
	var ids []PageID
	for {
		pg, err := p.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		fillPage(pg.Data(), pg.ID(), 1)
		ids = append(ids, pg.ID())
		pg.Release()
		if err := p.FlushAll(); err != nil {
			t.Fatal(err)
		}
		if p.Stats().Evictions > 0 {
			break
		}
	}
	var inFrames []PageID
	for _, id := range ids {
		if _, st, _, _, _ := stateOf(p, id); st == stFrame {
			inFrames = append(inFrames, id)
		}
	}
	dirty := len(inFrames) / 8 // under the 25% dirty limit
	if dirty < 2 {
		t.Fatalf("%d frames: too few", len(inFrames))
	}
	for i, id := range inFrames {
		pg, err := p.Get(id, Exclusive)
		if err != nil {
			t.Fatal(err)
		}
		if i < dirty {
			fillPage(pg.Data(), id, 2)
			pg.MarkDirty()
			pg.Release()
			continue
		}
		held = append(held, pg) // pinned for the rest of the test
	}
	always := func(PageID) bool { return true }
	hs.failWrite.Store(&always)
	if err := p.FlushAll(); !errors.Is(err, injectedWriteError) {
		t.Fatalf("FlushAll with failing writes: %v", err)
	}
	hs.failWrite.Store(nil) // the store works again
	newPageOnceWritable(t, p).Release()
}

// TestWriteErrorOfFreedPagesEnds: the pages whose write-back failed are
// freed, so no dirty page is left. The write error must not stand: it
// kept the cleaner scanning every frame each tick for pages to retry,
// and would fail the next allocation that finds every frame dirty at
// once, though the store works.
func TestWriteErrorOfFreedPagesEnds(t *testing.T) {
	hs, p := newHookPool(t, Options{CacheSize: 256 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0}, false)
	defer p.Close()
	var ids []PageID
	for range 4 {
		pg, err := p.NewPage() // dirty
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, pg.ID())
		pg.Release()
	}
	always := func(PageID) bool { return true }
	hs.failWrite.Store(&always)
	if err := p.FlushAll(); !errors.Is(err, injectedWriteError) {
		t.Fatalf("FlushAll with failing writes: %v", err)
	}
	hs.failWrite.Store(nil)
	for _, id := range ids {
		if err := p.FreePage(id); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for p.writeFailed() {
		if time.Now().After(deadline) {
			t.Fatal("2 s after the pages that failed were freed, their write error still stands")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFlushAllTriesEveryPartition: one partition's pages cannot be
// written. FlushAll reports that, and still writes back the other
// partitions' dirty pages (it used to stop at the first failing partition,
// and Close then dropped the rest unwritten).
func TestFlushAllTriesEveryPartition(t *testing.T) {
	hs, p := newHookPool(t, Options{CacheSize: 1 << 20, Partitions: 4}, false)
	defer p.Close()
	populate(t, p, 64) // new pages are dirty
	first := p.parts[0]
	inFirst := func(id PageID) bool { return p.partFor(id) == first }
	hs.failWrite.Store(&inFirst)
	if err := p.FlushAll(); !errors.Is(err, injectedWriteError) {
		t.Fatalf("FlushAll: %v, want the injected write error", err)
	}
	var others, firstDirty int
	for id := PageID(0); id < 64; id++ {
		di, st, _, _, ok := stateOf(p, id)
		if !ok || st != stFrame {
			continue
		}
		d := p.partFor(id).desc(di)
		switch {
		case inFirst(id) && d.dirty.Load():
			firstDirty++
		case !inFirst(id) && d.dirty.Load():
			others++
		}
	}
	if firstDirty == 0 {
		t.Fatal("no page of the failing partition stayed dirty: the test proves nothing")
	}
	if others > 0 {
		t.Errorf("%d dirty pages of the other partitions were not written back", others)
	}
	hs.failWrite.Store(nil)
}

// TestNewPageWithoutFrameReleasesID: a new page that cannot get a frame
// (every frame dirty, and the writes failing) gives its id back to the
// store, which hands it out again; each such failure used to leave a hole
// in the id space until a restart.
func TestNewPageWithoutFrameReleasesID(t *testing.T) {
	hs, p := newHookPool(t, Options{CacheSize: 128 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0}, false)
	defer p.Close()
	always := func(PageID) bool { return true }
	hs.failWrite.Store(&always)
	var last PageID
	for n := 0; ; n++ {
		pg, err := p.NewPage() // dirty, and never written
		if err != nil {
			if !errors.Is(err, ErrNoFrame) || !errors.Is(err, injectedWriteError) {
				t.Fatal(err)
			}
			break
		}
		last = pg.ID()
		pg.Release()
		if n > 1000 {
			t.Fatal("1000 unwritable new pages in a 128 KiB pool")
		}
	}
	for range 3 { // more failures: the same id each time
		if _, err := p.NewPage(); !errors.Is(err, ErrNoFrame) {
			t.Fatalf("NewPage with every frame dirty and unwritable: %v", err)
		}
	}
	hs.failWrite.Store(nil) // the cleaner can now make frames clean
	pg := newPageOnceWritable(t, p)
	if pg.ID() != last+1 {
		t.Errorf("the next new page got id %d, want %d (the ids of the failed ones given back)", pg.ID(), last+1)
	}
	pg.Release()
}

package bufferpool

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// countingTestPages is the number of pages of newCountingTestPool.
const countingTestPages = 600

// newCountingTestPool returns a pool of countingTestPages clean pages,
// some 5 times its cache: pages in frames, images and only on disk. No
// controller probe reads the store during a test.
func newCountingTestPool(t *testing.T) (*Pool, *pagestore.Store) {
	t.Helper()
	s := openStore(t, vfs.NewMem(), "lz4")
	t.Cleanup(func() { s.Close() })
	return newCountingTestPoolOn(t, s), s
}

// newCountingTestPoolOn is newCountingTestPool on store s (a store wrapped
// by a test).
func newCountingTestPoolOn(t *testing.T, s Store) *Pool {
	t.Helper()
	p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.5, ControllerInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	populate(t, p, countingTestPages)
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGetCachedReadsNothing: GetCached hands out a page in a frame, and
// promotes one held as an image, like Get; for a page in neither it
// returns ErrNotCached without reading the store or counting a miss.
// After Get reads that page, GetCached finds it.
func TestGetCachedReadsNothing(t *testing.T) {
	p, s := newCountingTestPool(t)
	const n = countingTestPages
	where := func(id PageID) pageState {
		_, st, _, _, _ := stateOf(p, id) // stFree if not cached
		return st
	}
	// Pages in frames first, then images, then the others: promoting or
	// reading a page evicts others.
	var order []PageID
	for _, state := range []pageState{stFrame, stImage, stFree} {
		for id := PageID(0); id < n; id++ {
			if where(id) == state {
				order = append(order, id)
			}
		}
	}
	seen := map[pageState]int{}
	for _, id := range order {
		state := where(id)
		seen[state]++
		before, reads := p.Stats(), s.Stats().DiskReads
		pg, err := p.GetCached(id, Shared, true)
		switch state {
		case stFree:
			if !errors.Is(err, ErrNotCached) {
				t.Fatalf("page %d, not in memory: GetCached returned %v", id, err)
			}
			if after := p.Stats(); after.Misses != before.Misses || s.Stats().DiskReads != reads {
				t.Fatalf("page %d: GetCached read the store (misses %d -> %d)", id, before.Misses, after.Misses)
			}
			if pg, err = p.Get(id, Shared); err != nil {
				t.Fatal(err)
			}
			pg.Release()
			if pg, err = p.GetCached(id, Shared, true); err != nil {
				t.Fatalf("page %d, just read: GetCached returned %v", id, err)
			}
		case stFrame, stImage:
			if err != nil {
				t.Fatalf("page %d, in state %d: GetCached returned %v", id, state, err)
			}
			if state == stImage && where(id) != stFrame {
				t.Fatalf("page %d: an image GetCached handed out was not promoted", id)
			}
		default:
			t.Fatalf("page %d in state %d with nothing running", id, state)
		}
		if v := pageVersion(t, pg.Data(), id); v != 1 {
			t.Fatalf("page %d: version %d", id, v)
		}
		pg.Release()
	}
	if seen[stFree] == 0 || seen[stFrame] == 0 || seen[stImage] == 0 {
		t.Fatalf("pages by state %v: the test needs pages in frames, images and on disk only", seen)
	}
	t.Logf("pages by state: %v", seen)
}

// TestPrefetchCountsOnce: a page Prefetch reads counts as one miss, and
// the Get that follows (the use the prefetch was for) is not counted
// again; later Gets count as hits. GetCached without count counts nothing.
func TestPrefetchCountsOnce(t *testing.T) {
	p, _ := newCountingTestPool(t)
	var id PageID
	for id = 0; id < countingTestPages; id++ { // a page not in memory
		if _, ok := p.parts[0].table.lookup(id); !ok {
			break
		}
	}
	counts := func() [2]int64 { st := p.Stats(); return [2]int64{st.HitsUncompressed, st.Misses} }
	get := func(count bool) {
		t.Helper()
		var pg Page
		var err error
		if count {
			pg, err = p.Get(id, Shared)
		} else {
			pg, err = p.GetCached(id, Shared, false)
		}
		if err != nil {
			t.Fatal(err)
		}
		pageVersion(t, pg.Data(), id)
		pg.Release()
	}
	c0 := counts()
	if err := p.Prefetch(id); err != nil {
		t.Fatal(err)
	}
	if c := counts(); c != [2]int64{c0[0], c0[1] + 1} {
		t.Fatalf("after Prefetch: hits, misses %v, want %v", c, [2]int64{c0[0], c0[1] + 1})
	}
	get(false)
	get(true) // the use the prefetch counted
	if c := counts(); c != [2]int64{c0[0], c0[1] + 1} {
		t.Fatalf("after the prefetched page's use: hits, misses %v, want %v", c, [2]int64{c0[0], c0[1] + 1})
	}
	get(true)
	if c := counts(); c != [2]int64{c0[0] + 1, c0[1] + 1} {
		t.Fatalf("after a second use: hits, misses %v, want %v", c, [2]int64{c0[0] + 1, c0[1] + 1})
	}
	if err := p.Prefetch(id); err != nil { // in a frame: nothing counted, nothing marked
		t.Fatal(err)
	}
	get(true)
	if c := counts(); c != [2]int64{c0[0] + 2, c0[1] + 1} {
		t.Fatalf("after a prefetch of a cached page and a use: hits, misses %v, want %v", c, [2]int64{c0[0] + 2, c0[1] + 1})
	}
}

// TestPrefetchCountsOnceFromAnImage: Prefetch of a page held as an image
// promotes it, counted as one compressed hit, and the use that follows is
// not counted again; a look (GetCached without count) neither promotes an
// image nor counts.
func TestPrefetchCountsOnceFromAnImage(t *testing.T) {
	p, _ := newCountingTestPool(t)
	pt := p.parts[0]
	var id PageID
	found := false
	for i := PageID(0); i < countingTestPages && !found; i++ {
		if di, ok := pt.table.lookup(i); ok && pt.desc(di).state.Load() == stImage {
			id, found = i, true
		}
	}
	if !found {
		t.Fatal("no page held as an image")
	}
	counts := func() [3]int64 {
		st := p.Stats()
		return [3]int64{st.HitsUncompressed, st.HitsCompressed, st.Misses}
	}
	c0 := counts()
	if _, err := p.GetCached(id, Shared, false); !errors.Is(err, ErrNotCached) {
		t.Fatalf("a look at an image: %v, want ErrNotCached", err)
	}
	if c := counts(); c != c0 {
		t.Fatalf("a look at an image counted: %v -> %v", c0, c)
	}
	if err := p.Prefetch(id); err != nil {
		t.Fatal(err)
	}
	pg, err := p.Get(id, Shared)
	if err != nil {
		t.Fatal(err)
	}
	pageVersion(t, pg.Data(), id)
	pg.Release()
	if c, want := counts(), [3]int64{c0[0], c0[1] + 1, c0[2]}; c != want {
		t.Fatalf("Prefetch of an image and its use: hits, compressed hits, misses %v, want %v", c, want)
	}
}

// TestGetCachedDoesNotWaitForCleaner: every frame dirty, the store's
// writes held up: GetCached of a page held as an image, which needs a
// frame to promote it, returns ErrNotCached at once instead of waiting for
// the cleaner to free one (its caller may hold a lock that writers need),
// and Get waits and succeeds once the writes go through.
func TestGetCachedDoesNotWaitForCleaner(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	t.Cleanup(func() { s.Close() })
	h := newHookStore(s)
	p := newCountingTestPoolOn(t, h)
	pt := p.parts[0]
	var frames []PageID
	image := PageID(0)
	found := false
	pt.mu.RLock()
	for id := PageID(0); id < countingTestPages; id++ {
		if di, ok := pt.table.lookup(id); ok {
			switch pt.desc(di).state.Load() {
			case stFrame:
				frames = append(frames, id)
			case stImage:
				image, found = id, true
			}
		}
	}
	pt.mu.RUnlock()
	if !found || len(frames) == 0 {
		t.Fatalf("%d pages in frames, image found %v: want both", len(frames), found)
	}
	gate := make(chan struct{})
	opened := false
	open := func() {
		if !opened {
			opened = true
			close(gate)
		}
	}
	defer open()
	hook := func(PageID) { <-gate }
	h.writeHook.Store(&hook)
	for _, id := range frames {
		pg, err := p.Get(id, Exclusive)
		if err != nil {
			t.Fatal(err)
		}
		pg.MarkDirty()
		pg.Release()
	}
	// New pages (dirty) until one waits for a frame: then every frame is
	// dirty or pinned.
	waits := p.Stats().FreeBufferWaits
	var stop atomic.Bool
	filled := make(chan error, 1)
	go func() {
		for !stop.Load() {
			pg, err := p.NewPage()
			if err != nil {
				filled <- err
				return
			}
			fillPage(pg.Data(), pg.ID(), 1)
			pg.Release()
		}
		filled <- nil
	}()
	defer func() {
		stop.Store(true)
		open()
		if err := <-filled; err != nil {
			t.Errorf("new pages: %v", err)
		}
	}()
	for deadline := time.Now().Add(5 * time.Second); p.Stats().FreeBufferWaits == waits; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("new dirty pages with the writes held: no free buffer wait in 5 s")
		}
	}
	waits = p.Stats().FreeBufferWaits
	// An image still in memory now (the new pages may have evicted the
	// one found before): ErrNotCached must come from the wait, not from
	// a page gone.
	found = false
	pt.mu.RLock()
	for id := PageID(0); id < countingTestPages && !found; id++ {
		if di, ok := pt.table.lookup(id); ok && pt.desc(di).state.Load() == stImage {
			image, found = id, true
		}
	}
	pt.mu.RUnlock()
	if !found {
		t.Fatal("no image left once every frame is dirty")
	}
	done := make(chan error, 1)
	go func() {
		pg, err := p.GetCached(image, Shared, true)
		if err == nil {
			pg.Release()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotCached) {
			t.Fatalf("GetCached of an image, every frame dirty: %v, want ErrNotCached", err)
		}
	case <-time.After(5 * time.Second):
		open()
		t.Fatalf("GetCached of an image, every frame dirty and the writes held: still waiting after 5 s (returned %v once the writes went)", <-done)
	}
	if w := p.Stats().FreeBufferWaits; w != waits {
		t.Errorf("GetCached counted %d free buffer waits", w-waits)
	}
	go func() {
		pg, err := p.Get(image, Shared)
		if err == nil {
			pg.Release()
		}
		done <- err
	}()
	open()
	if err := <-done; err != nil {
		t.Fatalf("Get of the image once the writes go through: %v", err)
	}
}

package bufferpool

import (
	"errors"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// TestCleanerLeavesHotPagesDirty: background cleaning writes dirty leaves,
// used lately or not, and leaves hot inner pages (protected from eviction)
// dirty, since their next change would make the write garbage; a reader
// waiting for a clean frame gets every dirty page written.
func TestCleanerLeavesHotPagesDirty(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 4 << 20, Partitions: 1, DirtyLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const n = 40
	populate(t, p, n) // dirty, under the dirty limit: the cleaner leaves them
	pt := p.parts[0]
	descOf := func(id PageID) *desc {
		pt.mu.RLock()
		defer pt.mu.RUnlock()
		di, ok := pt.table.lookup(id)
		if !ok {
			t.Fatalf("page %d not cached", id)
		}
		return pt.desc(di)
	}
	used := func(id PageID) bool { return id%4 == 0 } // CLOCK bit set: written all the same
	var firstID PageID = PageID(n)                    // the lowest id populate made
	for i := range n {
		id := PageID(i)
		pt.mu.RLock()
		_, ok := pt.table.lookup(id)
		pt.mu.RUnlock()
		if ok {
			firstID = min(firstID, id)
		}
	}
	for id := firstID; id < firstID+n; id++ {
		d := descOf(id)
		d.ref.Store(used(id))
		if id%4 == 1 {
			d.usedAt.Store(pt.frameEvictions.Load()) // protected: just used
			if d.inner.CompareAndSwap(false, true) {
				pt.innerPages.Add(1)
			}
		}
	}
	if err := pt.flush(false, -1); err != nil {
		t.Fatal(err)
	}
	for id := firstID; id < firstID+n; id++ {
		wantDirty := id%4 == 1
		if got := descOf(id).dirty.Load(); got != wantDirty {
			t.Fatalf("after background cleaning: page %d (used %v, inner %v) dirty %v, want %v", id, used(id), id%4 == 1, got, wantDirty)
		}
	}
	if st := p.Stats(); st.Flushes != 3*n/4 || st.HotSkips < n/4 {
		t.Fatalf("Flushes %d, HotSkips %d; want %d, and at least %d skips", st.Flushes, st.HotSkips, 3*n/4, n/4)
	}
	// A reader waits for a clean frame: inner pages too. The background
	// cleaner, seeing the reader, may be writing some of them meanwhile
	// (pinned, they are passed over here): flush until none is left.
	pt.waiting.Add(1)
	defer pt.waiting.Add(-1)
	for try := 0; ; try++ {
		if err := pt.flush(false, -1); err != nil {
			t.Fatal(err)
		}
		dirty := 0
		for id := firstID; id < firstID+n; id++ {
			if descOf(id).dirty.Load() {
				dirty++
			}
		}
		if dirty == 0 {
			break
		}
		if try == 100 {
			t.Fatalf("with a reader waiting: %d pages still dirty", dirty)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestCleanerWritesHotPagesAfterWriteError: while a write error stands
// nobody waits for a clean frame (allocations fail at once), and the
// cleaner's retries write hot inner pages too, so that a retry that
// succeeds clears the error.
func TestCleanerWritesHotPagesAfterWriteError(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 4 << 20, Partitions: 1, DirtyLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pg, err := p.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	fillPage(pg.Data(), pg.ID(), 1)
	pg.MarkInner()
	id := pg.ID()
	pg.Release()
	pt := p.partFor(id)
	failed := errors.New("earlier write failed")
	pt.writeErr.Store(&failed)
	if err := pt.cleanIfNeeded(); err != nil {
		t.Fatal(err)
	}
	if pt.writeErr.Load() != nil {
		t.Fatal("the retry wrote nothing: the write error stands")
	}
	pt.mu.RLock()
	di, _ := pt.table.lookup(id)
	dirty := pt.desc(di).dirty.Load()
	pt.mu.RUnlock()
	if dirty {
		t.Fatal("hot inner page still dirty after the retry")
	}
}

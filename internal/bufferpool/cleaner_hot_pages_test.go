package bufferpool

import (
	"errors"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// cleanerPool is a one-partition pool whose cleaner writes nothing on its
// own (dirty limit 1), with n new dirty pages; it returns the pool and
// the pages' ids.
func cleanerPool(t *testing.T, n int) (*Pool, []PageID) {
	t.Helper()
	s := openStore(t, vfs.NewMem(), "zstd")
	t.Cleanup(func() { s.Close() })
	p, err := New(s, Options{CacheSize: 4 << 20, Partitions: 1, DirtyLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ids := make([]PageID, n)
	for i := range ids {
		pg, err := p.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		fillPage(pg.Data(), pg.ID(), 1)
		ids[i] = pg.ID()
		pg.Release()
	}
	return p, ids
}

// descOf is page id's descriptor in partition pt.
func descOf(t *testing.T, pt *partition, id PageID) *desc {
	t.Helper()
	pt.mu.RLock()
	defer pt.mu.RUnlock()
	di, ok := pt.table.lookup(id)
	if !ok {
		t.Fatalf("page %d not cached", id)
	}
	return pt.desc(di)
}

// TestCleanerLeavesHotPagesDirty: background cleaning writes dirty leaves,
// used lately or not, and leaves hot inner pages (protected from eviction)
// dirty, since their next change would make the write garbage; a reader
// waiting for a clean frame gets every dirty page written.
func TestCleanerLeavesHotPagesDirty(t *testing.T) {
	const n = 40
	p, ids := cleanerPool(t, n)
	pt := p.parts[0]
	inner := func(i int) bool { return i%4 == 1 }
	for i, id := range ids {
		d := descOf(t, pt, id)
		d.ref.Store(i%4 == 0) // used lately: written all the same
		if inner(i) {
			d.usedAt.Store(pt.frameEvictions.Load()) // protected: just used
			if d.inner.CompareAndSwap(false, true) {
				pt.innerPages.Add(1)
			}
		}
	}
	if err := pt.flush(false, -1); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if got := descOf(t, pt, id).dirty.Load(); got != inner(i) {
			t.Fatalf("after background cleaning: page %d (inner %v) dirty %v, want %v", id, inner(i), got, inner(i))
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
		for _, id := range ids {
			if descOf(t, pt, id).dirty.Load() {
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
	p, ids := cleanerPool(t, 1)
	pt := p.partFor(ids[0])
	pg, err := p.Get(ids[0], Shared)
	if err != nil {
		t.Fatal(err)
	}
	pg.MarkInner()
	pg.Release()
	failed := errors.New("earlier write failed")
	pt.writeErr.Store(&failed)
	if err := pt.cleanIfNeeded(); err != nil {
		t.Fatal(err)
	}
	if pt.writeErr.Load() != nil {
		t.Fatal("the retry wrote nothing: the write error stands")
	}
	if descOf(t, pt, ids[0]).dirty.Load() {
		t.Fatal("hot inner page still dirty after the retry")
	}
}

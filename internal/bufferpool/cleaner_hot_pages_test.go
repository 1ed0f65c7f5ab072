package bufferpool

import (
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestCleanerLeavesHotPagesDirty: background cleaning writes the dirty
// pages near eviction (CLOCK bit clear) and leaves hot ones (bit set, or
// protected inner pages) dirty, since their next change would make the
// write garbage; a reader waiting for a clean frame, and FlushAll, get
// every dirty page written.
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
	hot := func(id PageID) bool { return id%4 == 0 }
	var firstID PageID = PageID(n) // the lowest id populate made
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
		d.ref.Store(hot(id))
		if id%4 == 1 {
			d.inner.Store(true) // protected: just used
			d.usedAt.Store(pt.frameEvictions.Load())
		}
	}
	if err := pt.flush(false, -1); err != nil {
		t.Fatal(err)
	}
	for id := firstID; id < firstID+n; id++ {
		wantDirty := hot(id) || id%4 == 1
		if got := descOf(id).dirty.Load(); got != wantDirty {
			t.Fatalf("after background cleaning: page %d (hot %v, inner %v) dirty %v, want %v", id, hot(id), id%4 == 1, got, wantDirty)
		}
	}
	if st := p.Stats(); st.Flushes != n/2 || st.HotSkips < n/2 {
		t.Fatalf("Flushes %d, HotSkips %d; want %d, and at least as many skips", st.Flushes, st.HotSkips, n/2)
	}
	pt.waiting.Add(1) // a reader waits for a clean frame: hot pages too
	err = pt.flush(false, -1)
	pt.waiting.Add(-1)
	if err != nil {
		t.Fatal(err)
	}
	for id := firstID; id < firstID+n; id++ {
		if descOf(id).dirty.Load() {
			t.Fatalf("with a reader waiting: page %d still dirty", id)
		}
	}
}

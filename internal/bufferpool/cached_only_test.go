package bufferpool

import (
	"errors"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestGetCachedReadsNothing: GetCached hands out a page in a frame, and
// promotes one held as an image, like Get; for a page in neither it
// returns ErrNotCached without reading the store or counting a miss.
// After Get reads that page, GetCached finds it.
func TestGetCachedReadsNothing(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const n = 600 // ~5× the cache: pages in frames, images and only on disk
	populate(t, p, n)
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	pt := p.parts[0]
	where := func(id PageID) pageState {
		pt.mu.RLock()
		defer pt.mu.RUnlock()
		di, ok := pt.table.lookup(id)
		if !ok {
			return stFree
		}
		return pt.desc(di).state.Load()
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
		pg, err := p.GetCached(id, Shared)
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
			if pg, err = p.GetCached(id, Shared); err != nil {
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

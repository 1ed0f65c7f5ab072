package bufferpool

import (
	"errors"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// verifyCounter counts Options.Verify's calls per page, and fails the
// pages in fail.
type verifyCounter struct {
	mu    sync.Mutex
	calls map[PageID]int
	fail  map[PageID]bool
}

var errVerifyTest = errors.New("verify: bad page (test)")

func (v *verifyCounter) verify(id PageID, _ []byte) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.calls[id]++
	if v.fail[id] {
		return errVerifyTest
	}
	return nil
}

func (v *verifyCounter) count(id PageID) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.calls[id]
}

// TestVerifyOnceFromTheStore: a page's bytes are verified when they are
// read from the store, and when an image read ahead (never decompressed
// before) is first promoted, failing the load if they are bad; a page
// promoted from an image kept from a verified load is not verified again
// (an image hit is the pool's hot path on data that fits compressed).
func TestVerifyOnceFromTheStore(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	v := &verifyCounter{calls: map[PageID]int{}, fail: map[PageID]bool{}}
	p := coldPool(t, s, 300, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.5, Verify: v.verify})
	state := func(id PageID) pageState {
		_, st, _, _, _ := stateOf(p, id) // stFree if not cached
		return st
	}
	for range 2 {
		for id := PageID(0); id < 200; id++ {
			readVersion(t, p, id)
		}
	}
	promoted := 0
	for id := PageID(0); id < 200; id++ {
		if state(id) != stImage {
			continue
		}
		before := v.count(id)
		if before == 0 {
			t.Fatalf("page %d is an image but was never verified", id)
		}
		readVersion(t, p, id)
		if after := v.count(id); after != before {
			t.Fatalf("page %d: verified %d times, %d after its promotion", id, before, after)
		}
		promoted++
	}
	if promoted == 0 {
		t.Fatal("no page was held as an image: the test promoted nothing")
	}

	// Images read ahead are verified at their first promotion.
	ids := span(240, 8)
	v.fail[ids[7]] = true
	if n := p.ReadAhead(ids); n != len(ids) {
		t.Fatalf("read ahead %d pages, want %d", n, len(ids))
	}
	for _, id := range ids[:7] {
		if state(id) != stImage || v.count(id) != 0 {
			t.Fatalf("page %d read ahead: state %d, verified %d times", id, state(id), v.count(id))
		}
		readVersion(t, p, id)
		if c := v.count(id); c != 1 {
			t.Fatalf("page %d read ahead, then used: verified %d times, want 1", id, c)
		}
	}
	if pg, err := p.Get(ids[7], Shared); !errors.Is(err, errVerifyTest) {
		if err == nil {
			pg.Release()
		}
		t.Fatalf("a bad page read ahead: Get returned %v, want the verification's error", err)
	}
	t.Logf("%d promotions not verified again", promoted)
	checkInvariants(t, p)
}

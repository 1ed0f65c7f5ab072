package bufferpool

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// TestCleanerBacksOffWhenWritesFail: every frame holds a dirty page and
// the store's writes fail for good. The page cleaner retries with a
// growing wait (at most once a second) instead of every 10 ms tick: each
// attempt compresses a page it then cannot write, and a pool left open on
// a failed store (as crashed sessions were in the root package's crash
// tests, under the race detector) kept a CPU busy for its whole life.
func TestCleanerBacksOffWhenWritesFail(t *testing.T) {
	fs := vfs.NewMem()
	hs := newHookStore(openStore(t, fs, "lz4"))
	defer hs.Close()
	p, _ := dirtyUntilWritesFail(t, fs, hs)
	defer p.Close()
	var writes atomic.Int64
	hook := func(PageID) { writes.Add(1) }
	hs.writeHook.Store(&hook)
	const window = time.Second
	time.Sleep(window)
	n := writes.Load()
	t.Logf("%d write attempts by the cleaner in %v on a store that cannot write", n, window)
	// Every 10 ms tick would be about 100; doubling waits from 10 ms
	// make at most 8 in a second.
	if n > 12 {
		t.Errorf("the cleaner tried %d writes in %v on a failed store: want it to back off (at most ~8)", n, window)
	}
	if n == 0 {
		t.Errorf("the cleaner never retried the dirty pages")
	}
}

// TestCleanerBackoffDoubles: the wait after a failed pass doubles from
// 10 ms up to a second.
func TestCleanerBackoffDoubles(t *testing.T) {
	var d time.Duration
	var got []time.Duration
	for range 9 {
		d = nextCleanerBackoff(d)
		got = append(got, d)
	}
	want := []time.Duration{10, 20, 40, 80, 160, 320, 640, 1000, 1000}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("waits %v, want %v ms", got, want)
		}
	}
}

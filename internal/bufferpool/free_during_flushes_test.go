package bufferpool

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// TestFreePageDuringTwoFlushes: FreePage waits (up to 10 s) for the
// write-backs that pin a page, and gives a user's pin 100 ms. Two flushes
// write the same page at once (the page cleaner and a checkpoint's
// FlushPages alike); the quicker one ends while the slower still holds its
// pin: FreePage must still take that pin for a write-back's, and wait for
// it. (With one flag for any number of flushers, the quicker one cleared
// it, and FreePage failed with ErrPinned after 100 ms.)
func TestFreePageDuringTwoFlushes(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	hs := newHookStore(s)
	p, err := New(hs, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, DirtyLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	populate(t, p, 4)
	const victim = PageID(3)
	var calls atomic.Int32
	slowFirst := func(id PageID) {
		if id == victim && calls.Add(1) == 1 {
			time.Sleep(400 * time.Millisecond) // a slow write (device, or a big compression)
		}
	}
	hs.writeHook.Store(&slowFirst)
	aDone := make(chan error, 1)
	go func() { aDone <- p.FlushPages([]PageID{victim}) }() // the slow flusher
	for calls.Load() == 0 {
		time.Sleep(100 * time.Microsecond)
	}
	// A second flusher writes the same page meanwhile, quickly, and is
	// done before the first.
	if err := p.FlushPages([]PageID{victim}); err != nil {
		t.Fatal(err)
	}
	_, _, _, pins, _ := stateOf(p, victim)
	start := time.Now()
	err = p.FreePage(victim)
	took := time.Since(start)
	if aerr := <-aDone; aerr != nil {
		t.Fatal(aerr)
	}
	hs.writeHook.Store(nil)
	if err != nil {
		t.Fatalf("FreePage of a page only flushes held (pins %d when it began): %v after %v", pins, err, took.Round(time.Millisecond))
	}
}

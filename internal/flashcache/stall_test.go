package flashcache

import (
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// TestStalledFlash: a flash device that stops answering (every read,
// write and sync blocks) does not hold up the foreground. The stated
// bound: a read that misses RAM waits at most ReadTimeout for the flash
// (here 50 ms) before it reads the page store, and only the reads in
// flight when the stall starts, or the first after each cool-down, pay
// it; write-back and checkpoints never touch the flash. The test allows a
// second per operation (the machine is shared); without the deadline the
// operations would block until the device answers, which it never does
// while the test runs. Admissions are dropped (the writer is stuck), and
// Close gives up on the writer after its timeout and leaves the cache to
// start cold.
func TestStalledFlash(t *testing.T) {
	mem := vfs.NewMem()
	ffs := &stallFS{FS: mem}
	tune := func(o *Options) { o.ReadTimeout = 50 * time.Millisecond }
	s := openStack(t, mem, ffs, stackOpts{tune: tune})
	ids := s.fill(300)
	s.close()
	s = openStack(t, mem, ffs, stackOpts{tune: tune})
	if st := s.fc.Stats(); st.OpenState != "warm" {
		t.Fatalf("opened %s", st.OpenState)
	}

	ffs.stall()
	const bound = time.Second
	var slowest time.Duration
	for round := range 3 {
		for _, id := range ids {
			start := time.Now()
			if round == 1 {
				s.write(id, 2)
			} else {
				v := uint64(1)
				if round == 2 {
					v = 2
				}
				if err := s.check(id, v); err != nil {
					t.Fatal(err)
				}
			}
			slowest = max(slowest, time.Since(start))
		}
		start := time.Now()
		if err := s.pool.FlushAll(); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > bound {
			t.Fatalf("write-back took %v with the flash stalled", d)
		}
	}
	if slowest > bound {
		t.Fatalf("an access took %v with the flash stalled", slowest)
	}
	st := s.fc.Stats()
	t.Logf("slowest access %v; %+v", slowest, st)
	if st.ReadTimeouts == 0 || st.Bypassed == 0 || st.DroppedBusy == 0 {
		t.Fatalf("read timeouts %d, bypassed %d, dropped %d", st.ReadTimeouts, st.Bypassed, st.DroppedBusy)
	}

	start := time.Now()
	s.close()
	if d := time.Since(start); d > DefaultCloseTimeout+bound {
		t.Fatalf("close took %v with the flash stalled", d)
	}
	ffs.resume()
	time.Sleep(50 * time.Millisecond) // the stuck writer and readers finish
	s = openStack(t, mem, ffs, stackOpts{tune: tune})
	defer s.close()
	if st := s.fc.Stats(); !strings.HasPrefix(st.OpenState, "cold") {
		t.Fatalf("opened %s after a close that could not finish", st.OpenState)
	}
	s.checkAll(ids)
}

// TestStalledFlashAtClose: a flash device that stops answering once the
// writer has drained, while Close writes the index snapshot, does not hold
// Close up beyond CloseTimeout; the next Open (the device answering again)
// serves the right pages, warm or cold.
func TestStalledFlashAtClose(t *testing.T) {
	mem := vfs.NewMem()
	ffs := &stallFS{FS: mem}
	const timeout = 200 * time.Millisecond
	tune := func(o *Options) { o.CloseTimeout = timeout }
	s := openStack(t, mem, ffs, stackOpts{tune: tune})
	ids := s.fill(300)
	if err := s.pool.Close(); err != nil {
		t.Fatal(err)
	}
	s.waitIdle()
	ffs.stall()
	closed := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		s.fc.Close(true, testDBState)
		closed <- time.Since(start)
	}()
	select {
	case d := <-closed:
		if d > timeout+time.Second {
			t.Errorf("close took %v with the flash stalled", d)
		}
	case <-time.After(10 * time.Second):
		ffs.resume()
		<-closed
		t.Fatal("close did not return with the flash stalled")
	}
	if err := s.store.Close(); err != nil {
		t.Fatal(err)
	}
	if ffs.blocked.Load() == 0 {
		t.Fatal("the close did not touch the stalled flash")
	}
	ffs.resume()
	time.Sleep(50 * time.Millisecond) // the stuck snapshot write finishes
	s = openStack(t, mem, ffs, stackOpts{tune: tune})
	defer s.close()
	t.Logf("opened %s", s.fc.Stats().OpenState)
	s.checkAll(ids)
}

// TestStatsDuringStalledSuperblockWrite: with the device stalled in the
// clean Close's superblock write (the snapshot written), Close returns
// after CloseTimeout and Stats answers at once: the write holds sbMu, and
// Stats no longer takes it (it waited for the device).
func TestStatsDuringStalledSuperblockWrite(t *testing.T) {
	mem := vfs.NewMem()
	ffs := &stallFS{FS: mem}
	const timeout = 200 * time.Millisecond
	s := openStack(t, mem, ffs, stackOpts{tune: func(o *Options) { o.CloseTimeout = timeout }})
	s.fill(100)
	if err := s.pool.Close(); err != nil {
		t.Fatal(err)
	}
	s.waitIdle()
	ffs.superblocksOnly.Store(true)
	ffs.stall()
	defer ffs.resume()
	s.fc.Close(true, testDBState)
	// The persist goroutine may reach the superblock after Close gave up.
	for deadline := time.Now().Add(10 * time.Second); ffs.blocked.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the close did not reach the stalled superblock write")
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := make(chan Stats, 1)
	go func() { got <- s.fc.Stats() }()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("Stats waited for the stalled superblock write")
	}
	if err := s.store.Close(); err != nil {
		t.Fatal(err)
	}
}

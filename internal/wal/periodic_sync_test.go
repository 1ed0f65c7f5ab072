package wal

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// TestPeriodicSyncUnderSteadyAppends: under SyncPeriodic, a steady stream
// of appends that never lets the writer idle is still fsynced about every
// SyncInterval. The writer read its ticker only when a round left no work,
// so such a stream had 1–3 fsyncs a second (records unsynced for 0.5–1 s,
// where the mode promises about 10 ms) until the file was full. The bounds
// are loose (a tenth of the expected fsyncs, half a second) for a loaded
// machine. (Found by a reviewer, thirty-second session.)
func TestPeriodicSyncUnderSteadyAppends(t *testing.T) {
	fs := vfs.NewMem()
	fs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpWrite {
			time.Sleep(time.Millisecond) // a write takes as long as a slow device's
		}
		return nil
	})
	l := mustOpen(t, testDir, Options{FS: fs, SyncMode: SyncPeriodic, SyncInterval: 10 * time.Millisecond, FileSize: 1 << 40})
	defer l.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p := make([]byte, 100)
		for !stop.Load() {
			if _, err := l.Append(p); err != nil {
				t.Error(err)
				return
			}
			// Paced (the memory file system copies the whole file on
			// the first write after an fsync), but faster than the
			// writer writes: its queue is never empty. (A sleep this
			// short sleeps much longer.)
			for t0 := time.Now(); time.Since(t0) < 20*time.Microsecond; {
				runtime.Gosched()
			}
		}
	}()
	start := time.Now()
	last, lastChange := l.SyncedLSN(), time.Now()
	var worst time.Duration
	for time.Since(start) < time.Second {
		time.Sleep(time.Millisecond)
		if s := l.SyncedLSN(); s != last {
			last, lastChange = s, time.Now()
		} else if l.NextLSN()-1 > s {
			worst = max(worst, time.Since(lastChange))
		}
	}
	stop.Store(true)
	wg.Wait()
	st := l.Stats()
	t.Logf("records %d, writes %d, fsyncs %d; longest unsynced stretch %v", st.Records, st.Writes, st.Syncs, worst)
	if st.Syncs < 10 || worst > 500*time.Millisecond {
		t.Errorf("SyncPeriodic (10 ms) under steady appends: %d fsyncs in a second, written records unsynced for up to %v", st.Syncs, worst)
	}
}

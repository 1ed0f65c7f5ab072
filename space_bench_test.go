package strata

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/sysbench"
)

// BenchmarkSpaceUnderUpdates measures what sustained random updates do to
// the store's size: 1,000,000 sysbench rows (about 190 MiB of 16 KiB
// pages, 94 MiB compressed) with a 24 MiB cache on the real file system,
// then two goroutines commit batches of 4 random-row updates (no fsync)
// until 300,000 rows have been updated. Side by side: the default
// CheckpointReplaced (a checkpoint once a quarter of the pages were
// replaced), half the pages, and -1 (only the 64 MiB WAL starts
// checkpoints, as before).
// Metrics: updates/s; peak-phys-MiB and peak-live-MiB, the largest segment
// bytes and live record bytes sampled every 100 ms; end-phys-MiB;
// written-KiB/update, the store's file bytes per update; reloc-KiB/update,
// the cleaner's share of them; ckpts.
//
// go test -run '^$' -bench SpaceUnderUpdates -benchtime 1x -timeout 30m .
func BenchmarkSpaceUnderUpdates(b *testing.B) {
	for _, replaced := range []float64{0, 0.5, -1} {
		name := fmt.Sprintf("replaced=%g", replaced)
		switch {
		case replaced == 0:
			name = "replaced=default"
		case replaced < 0:
			name = "replaced=off"
		}
		b.Run(name, func(b *testing.B) {
			// Not b.Loop: the load is excluded from the timing
			// (ResetTimer, StopTimer), which b.Loop refuses.
			for range b.N {
				spaceUnderUpdates(b, replaced)
			}
		})
	}
}

func spaceUnderUpdates(b *testing.B, replaced float64) {
	const rows, updates, writers = 1000000, 300000, 2
	db, err := Open(b.TempDir(), &Options{PageSize: 16 << 10, CacheSize: 24 << 20, Sync: SyncNever, CheckpointReplaced: replaced})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	g := sysbench.NewGenerator(1, rows)
	put := func(batch *Batch, id uint64, gen uint32, val []byte) []byte {
		var row sysbench.Row
		g.Row(id, &row)
		row.K += gen
		val = row.Encode(val[:0])
		var key [8]byte
		binary.BigEndian.PutUint64(key[:], id)
		if err := batch.Set(key[:], val); err != nil {
			b.Fatal(err)
		}
		return val
	}
	batch := db.NewBatch()
	var val []byte
	for id := uint64(0); id < rows; id++ {
		val = put(batch, id, 0, val)
		if batch.Len() == 1000 {
			if err := batch.Commit(NoSync); err != nil {
				b.Fatal(err)
			}
			batch.Reset()
		}
	}
	if err := batch.Commit(NoSync); err != nil {
		b.Fatal(err)
	}
	if err := db.Checkpoint(); err != nil {
		b.Fatal(err)
	}
	st0 := db.Stats()
	var peakPhys, peakLive atomic.Int64
	sample := func() {
		s := db.Stats().Store
		peakPhys.Store(max(peakPhys.Load(), s.PhysicalBytes))
		peakLive.Store(max(peakLive.Load(), s.LiveRecordBytes))
	}
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			batch := db.NewBatch()
			var val []byte
			for next.Add(4) <= updates {
				batch.Reset()
				for range 4 {
					val = put(batch, rng.Uint64N(rows), 1+rng.Uint32N(1000), val)
				}
				if err := batch.Commit(NoSync); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(stop)
	<-sampled
	sample()
	st := db.Stats()
	const mib = 1 << 20
	b.ReportMetric(updates/elapsed.Seconds(), "updates/s")
	b.ReportMetric(float64(peakPhys.Load())/mib, "peak-phys-MiB")
	b.ReportMetric(float64(peakLive.Load())/mib, "peak-live-MiB")
	b.ReportMetric(float64(st.Store.PhysicalBytes)/mib, "end-phys-MiB")
	b.ReportMetric(float64(st0.Store.LiveRecordBytes)/mib, "loaded-MiB")
	b.ReportMetric(float64(st.Store.FileBytesWritten-st0.Store.FileBytesWritten)/1024/updates, "written-KiB/update")
	b.ReportMetric(float64(st.Store.CleanerRelocatedBytes-st0.Store.CleanerRelocatedBytes)/1024/updates, "reloc-KiB/update")
	b.ReportMetric(float64(st.Checkpoints-st0.Checkpoints), "ckpts")
	b.ReportMetric(float64(st.SpaceWaits), "space-waits")
	if testing.Verbose() {
		fmt.Printf("space waits %d (%v)\n", st.SpaceWaits, st.SpaceWaitTime)
	}
}

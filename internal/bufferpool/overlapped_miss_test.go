package bufferpool

import (
	"fmt"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// overlappingStore is a page store whose reads say they hold no CPU while
// the device works, costing overhead each.
type overlappingStore struct {
	*pagestore.Store
	overhead time.Duration
}

func (s overlappingStore) ReadOverhead() (time.Duration, bool) { return s.overhead, true }

// TestOverlappedMissesCostTheirCPU: a miss read for a use that does not
// wait for it (PrefetchOverlapped: the deferred commits' applier), from a
// store whose reads wait for the device holding no CPU, costs the
// controller what the read costs the CPUs, not its latency; the same
// misses through Prefetch, whose caller waits, cost their whole time, as
// they do through PrefetchOverlapped from a store that does not say what
// its reads cost. Priced at the device's latency, the applier's misses
// kept R at 0.9 for writes with data 1× the memory, at 0.46× the
// throughput of R 0.5.
func TestOverlappedMissesCostTheirCPU(t *testing.T) {
	const (
		budget   = 1 << 20
		pages    = 40
		latency  = 2 * time.Millisecond
		overhead = 20 * time.Microsecond
	)
	mem := vfs.NewMem()
	s := openStore(t, mem, "zstd")
	writePages(t, s, pages)
	s.Close()
	dev := vfs.NewLatency(mem, vfs.Device{Name: latency.String(), ReadLatency: latency, QueueDepth: 1})
	for _, tc := range []struct {
		overlapped, saysOverhead, cheap bool
	}{
		{overlapped: true, saysOverhead: true, cheap: true},
		{overlapped: false, saysOverhead: true},
		{overlapped: true, saysOverhead: false},
	} {
		t.Run(fmt.Sprintf("overlapped=%v,overhead=%v", tc.overlapped, tc.saysOverhead), func(t *testing.T) {
			s := openStore(t, dev, "zstd")
			defer s.Close()
			var store Store = s
			if tc.saysOverhead {
				store = overlappingStore{s, overhead}
			}
			opts := poolOptions(budget, 0.5)
			opts.ControllerInterval = time.Hour // adjust below folds the timings
			p, err := New(store, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			for id := PageID(0); id < pages; id++ {
				prefetch := p.Prefetch
				if tc.overlapped {
					prefetch = p.PrefetchOverlapped
				}
				if err := prefetch(id); err != nil {
					t.Fatal(err)
				}
			}
			p.adjust()
			st := p.Stats()
			if st.Misses != pages {
				t.Fatalf("%d misses, want %d", st.Misses, pages)
			}
			t.Logf("T_miss %v, T_disk_read %v", st.TMiss, st.TDiskRead)
			if st.TDiskRead < latency {
				t.Errorf("T_disk_read %v, under the device's %v: the read's time is what it is either way", st.TDiskRead, latency)
			}
			if tc.cheap && st.TMiss >= latency/4 {
				t.Errorf("T_miss %v for misses no one waited for, reads of %v costing %v of CPU: priced by their latency", st.TMiss, latency, overhead)
			}
			if !tc.cheap && st.TMiss < latency {
				t.Errorf("T_miss %v, under the read's %v", st.TMiss, latency)
			}
		})
	}
}

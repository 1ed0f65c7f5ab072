package bench

import (
	"sync/atomic"
	"testing"
	"time"
)

// hotPathWorker returns a worker of workload name on the null engine,
// which does no work of its own, so that what it measures is the runner.
func hotPathWorker(tb testing.TB, name, dataset string) (*worker, workload) {
	tb.Helper()
	spec := RunSpec{Engine: "null", Config: Config{Dir: "unused"}, Workload: name, Dataset: dataset,
		TableSize: 100_000, Seed: 1, Threads: 1, Duration: time.Second}
	p, err := newPlan(spec)
	if err != nil {
		tb.Fatal(err)
	}
	var nextID atomic.Uint64
	nextID.Store(uint64(spec.TableSize))
	ws, err := newWorkers(p, nullEngine{}, &nextID)
	if err != nil {
		tb.Fatal(err)
	}
	return ws[0], p.wl
}

// TestHotPathDoesNotAllocate: a transaction and its latency record
// allocate nothing in the runner, whatever the workload and data set.
func TestHotPathDoesNotAllocate(t *testing.T) {
	for _, dataset := range Datasets {
		for _, name := range Workloads() {
			w, wl := hotPathWorker(t, name, dataset)
			allocs := testing.AllocsPerRun(2000, func() {
				t0 := time.Now()
				if err := wl.txn(w); err != nil {
					t.Fatal(err)
				}
				w.hist.record(time.Since(t0))
				w.txns++
			})
			if allocs != 0 {
				t.Errorf("%s on %s: %.2f allocations per transaction", name, dataset, allocs)
			}
		}
	}
}

// BenchmarkRunnerTxn measures the runner's own cost per transaction
// against the null engine (go test -bench RunnerTxn -benchmem).
func BenchmarkRunnerTxn(b *testing.B) {
	for _, name := range []string{"oltp_point_select", "oltp_read_write", "ycsb_a", "ycsb_d", "ycsb_e"} {
		b.Run(name, func(b *testing.B) {
			w, wl := hotPathWorker(b, name, "sysbench")
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				if err := wl.txn(w); err != nil {
					b.Fatal(err)
				}
				w.hist.record(time.Since(t0))
			}
		})
	}
}

// BenchmarkRunnerMapEngine is the runner against the map engine, the
// figure the brief asks for; the map engine's own copies of written
// values are its allocations, not the runner's.
func BenchmarkRunnerMapEngine(b *testing.B) {
	for _, name := range []string{"oltp_point_select", "oltp_read_only", "ycsb_c"} {
		b.Run(name, func(b *testing.B) {
			spec := RunSpec{Engine: "map", Config: Config{Dir: b.TempDir()}, Workload: name, Dataset: "sysbench",
				TableSize: 10_000, Seed: 1, Threads: 1, Duration: time.Second}
			p, err := newPlan(spec)
			if err != nil {
				b.Fatal(err)
			}
			eng, _, err := openMap(spec.Config)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := load(b.Context(), eng, p.ds, spec.TableSize, func(Event) {}); err != nil {
				b.Fatal(err)
			}
			var nextID atomic.Uint64
			nextID.Store(uint64(spec.TableSize))
			ws, err := newWorkers(p, eng, &nextID)
			if err != nil {
				b.Fatal(err)
			}
			w := ws[0]
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				if err := p.wl.txn(w); err != nil {
					b.Fatal(err)
				}
				w.hist.record(time.Since(t0))
			}
		})
	}
}

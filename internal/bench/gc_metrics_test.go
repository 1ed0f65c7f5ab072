package bench

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

var gcSink [][]byte

// TestGCMetricsCountCollections: the counters read around a phase that
// allocates and collects report the collections, the bytes allocated per
// transaction and a GC share of the CPU between 0 and 1.
func TestGCMetricsCountCollections(t *testing.T) {
	before := readGCCounters()
	if !before.ok {
		t.Fatal("runtime/metrics lacks the GC counters")
	}
	const total = 32 << 20
	for i := 0; i < total/4096; i++ {
		gcSink = append(gcSink, make([]byte, 4096))
		if len(gcSink) == 256 {
			gcSink = gcSink[:0]
		}
	}
	runtime.GC()
	after := readGCCounters()
	m := gcMetrics(before, after, 1000, time.Second)
	if m["go.gc_cycles"] < 1 {
		t.Errorf("go.gc_cycles = %v after runtime.GC", m["go.gc_cycles"])
	}
	if got := m["go.alloc_bytes_per_txn"]; got < total/1000 {
		t.Errorf("go.alloc_bytes_per_txn = %v, want at least %d", got, total/1000)
	}
	if share, ok := m["go.gc_cpu_share"]; !ok || share < 0 || share > 1 {
		t.Errorf("go.gc_cpu_share = %v (present %v), want within [0, 1]", share, ok)
	}
	if gcMetrics(gcCounters{}, after, 1000, time.Second) != nil {
		t.Error("metrics from a failed reading")
	}
}

// TestGCNoteOnlyWhenBusy: a run whose collector took more than
// gcBusyShare of the CPU carries a note saying so; others do not.
func TestGCNoteOnlyWhenBusy(t *testing.T) {
	busy := map[string]float64{"go.gc_cycles": 6530, "go.gc_cpu_share": 0.195}
	if n := gcNote(busy, 10*time.Second); !strings.Contains(n, "about 20% of the process's CPU (653 collections a second)") {
		t.Errorf("busy collector: note %q", n)
	}
	for _, quiet := range []map[string]float64{{"go.gc_cycles": 15, "go.gc_cpu_share": 0.001}, {"go.gc_cycles": 2, "go.gc_cpu_share": 0.5}, {}, nil} {
		if n := gcNote(quiet, 10*time.Second); n != "" {
			t.Errorf("%v: note %q", quiet, n)
		}
	}
}

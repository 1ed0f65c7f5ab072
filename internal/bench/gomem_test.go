package bench

import (
	"runtime"
	"testing"
)

// TestGoMemoryMetrics: a run reports the Go heap, the runtime's mapped
// memory and the resident set, each positive and in order (heap objects ≤
// what the runtime maps; RSS at least the heap kept alive here).
func TestGoMemoryMetrics(t *testing.T) {
	keep := make([]byte, 8<<20)
	for i := range keep {
		keep[i] = byte(i)
	}
	m := goMemoryMetrics()
	heap, total := m["go.heap_objects_bytes"], m["go.runtime_total_bytes"]
	if heap < 8<<20 || total < heap {
		t.Errorf("heap %v, runtime total %v: want heap ≥ 8 MiB ≤ total", heap, total)
	}
	// The parts of the runtime's total add up to it.
	parts := m["go.heap_objects_bytes"] + m["go.heap_free_bytes"] + m["go.heap_unused_bytes"] + m["go.stacks_bytes"] + m["go.metadata_bytes"]
	if parts != total {
		t.Errorf("heap objects + free + unused + stacks + metadata = %v, runtime total %v", parts, total)
	}
	if m["go.gc_goal_bytes"] <= 0 {
		t.Errorf("gc goal %v, want > 0", m["go.gc_goal_bytes"])
	}
	if runtime.GOOS == "linux" && m["process.rss_bytes"] < 8<<20 {
		t.Errorf("rss %v, want ≥ 8 MiB", m["process.rss_bytes"])
	}
	runtime.KeepAlive(keep)
}

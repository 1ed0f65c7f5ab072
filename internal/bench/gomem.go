package bench

import (
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
)

// goMemoryMetrics returns the Go runtime's memory at the end of the
// measured phase (before the engine closes) and the process's resident
// memory, so that what an engine uses beyond its cache is measured, not
// guessed: go.heap_objects_bytes (live and unswept heap objects),
// go.runtime_total_bytes (all memory the Go runtime has mapped and not
// returned: heap, stacks, its own metadata; memory an engine maps itself,
// such as Strata's arenas, is not in it) and process.rss_bytes
// (/proc/self/statm, which includes the program's code).
func goMemoryMetrics() map[string]float64 {
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(samples)
	out := map[string]float64{}
	if samples[0].Value.Kind() == metrics.KindUint64 {
		out["go.heap_objects_bytes"] = float64(samples[0].Value.Uint64())
	}
	if samples[1].Value.Kind() == metrics.KindUint64 && samples[2].Value.Kind() == metrics.KindUint64 {
		out["go.runtime_total_bytes"] = float64(samples[1].Value.Uint64() - samples[2].Value.Uint64())
	}
	if rss, ok := currentRSS(); ok {
		out["process.rss_bytes"] = float64(rss)
	}
	return out
}

// currentRSS reads the resident set size from /proc/self/statm (Linux).
func currentRSS() (int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

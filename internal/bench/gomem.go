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
//
// go.runtime_total_bytes is split further so that it can be attributed:
// go.heap_free_bytes (free heap memory not yet returned to the OS: the
// collector's headroom), go.heap_unused_bytes (free slots in spans that
// hold objects: fragmentation), go.stacks_bytes (goroutine and OS thread
// stacks), go.metadata_bytes (the runtime's span, cache and GC metadata,
// profiling buckets and the rest of /memory/classes), and go.gc_goal_bytes
// (the heap size at which the next collection is due).
func goMemoryMetrics() map[string]float64 {
	names := map[string][]string{
		"go.heap_objects_bytes": {"/memory/classes/heap/objects:bytes"},
		"go.heap_free_bytes":    {"/memory/classes/heap/free:bytes"},
		"go.heap_unused_bytes":  {"/memory/classes/heap/unused:bytes"},
		"go.stacks_bytes":       {"/memory/classes/heap/stacks:bytes", "/memory/classes/os-stacks:bytes"},
		"go.metadata_bytes": {"/memory/classes/metadata/mcache/free:bytes", "/memory/classes/metadata/mcache/inuse:bytes",
			"/memory/classes/metadata/mspan/free:bytes", "/memory/classes/metadata/mspan/inuse:bytes",
			"/memory/classes/metadata/other:bytes", "/memory/classes/profiling/buckets:bytes", "/memory/classes/other:bytes"},
		"go.gc_goal_bytes": {"/gc/heap/goal:bytes"},
	}
	var samples []metrics.Sample
	for _, ns := range names {
		for _, n := range ns {
			samples = append(samples, metrics.Sample{Name: n})
		}
	}
	samples = append(samples, metrics.Sample{Name: "/memory/classes/total:bytes"}, metrics.Sample{Name: "/memory/classes/heap/released:bytes"})
	metrics.Read(samples)
	value := map[string]uint64{}
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			value[s.Name] = s.Value.Uint64()
		}
	}
	out := map[string]float64{}
	for key, ns := range names {
		var sum uint64
		ok := true
		for _, n := range ns {
			v, found := value[n]
			ok = ok && found
			sum += v
		}
		if ok {
			out[key] = float64(sum)
		}
	}
	total, okT := value["/memory/classes/total:bytes"]
	released, okR := value["/memory/classes/heap/released:bytes"]
	if okT && okR {
		out["go.runtime_total_bytes"] = float64(total - released)
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

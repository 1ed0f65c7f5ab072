package bench

import (
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
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

// gcCounters are the Go runtime's cumulative garbage-collection counters,
// read before and after the measured phase so that a run says how much of
// its CPU went to the collector (a process whose live heap nears
// GOMEMLIMIT collects all the time, and its throughput says nothing about
// the engine).
type gcCounters struct {
	cycles     uint64  // completed GC cycles
	allocBytes uint64  // bytes allocated on the heap
	gcCPU      float64 // the runtime's estimate of CPU seconds spent collecting
	ok         bool
}

// gcCounterNames are the runtime/metrics names gcCounters reads, in field order.
var gcCounterNames = []string{"/gc/cycles/total:gc-cycles", "/gc/heap/allocs:bytes", "/cpu/classes/gc/total:cpu-seconds"}

func readGCCounters() gcCounters {
	s := make([]metrics.Sample, len(gcCounterNames))
	for i, n := range gcCounterNames {
		s[i].Name = n
	}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 ||
		s[2].Value.Kind() != metrics.KindFloat64 {
		return gcCounters{}
	}
	return gcCounters{cycles: s[0].Value.Uint64(), allocBytes: s[1].Value.Uint64(), gcCPU: s[2].Value.Float64(), ok: true}
}

// gcMetrics returns what the collector did between before and after, over
// txns transactions in which the process used cpu (user and system time):
// go.gc_cycles, go.alloc_bytes_per_txn and, if cpu is known (> 0),
// go.gc_cpu_share, the runtime's estimate of its collection work over
// that CPU time. The runtime adds a cycle's work to its estimate when the
// cycle ends, so over a phase of few cycles the share is rough (and 0
// without one). None if either reading failed.
func gcMetrics(before, after gcCounters, txns int64, cpu time.Duration) map[string]float64 {
	if !before.ok || !after.ok {
		return nil
	}
	out := map[string]float64{"go.gc_cycles": float64(after.cycles - before.cycles)}
	if cpu > 0 {
		out["go.gc_cpu_share"] = (after.gcCPU - before.gcCPU) / cpu.Seconds()
	}
	if txns > 0 {
		out["go.alloc_bytes_per_txn"] = float64(after.allocBytes-before.allocBytes) / float64(txns)
	}
	return out
}

// gcBusyShare is the share of the process's CPU spent collecting above
// which a run says so (with at least gcBusyCycles collections, for the
// estimate to mean something): 0.1–1% in runs with room to spare; in one
// whose live heap had reached GOMEMLIMIT, 650 collections a second, at a
// quarter of the throughput.
const (
	gcBusyShare  = 0.05
	gcBusyCycles = 10
)

// gcNote returns a note for a run whose collector was busy (gcMetrics
// over elapsed), or "".
func gcNote(gc map[string]float64, elapsed time.Duration) string {
	share, ok := gc["go.gc_cpu_share"]
	if !ok || share < gcBusyShare || gc["go.gc_cycles"] < gcBusyCycles || elapsed <= 0 {
		return ""
	}
	return fmt.Sprintf("the Go collector took about %.0f%% of the process's CPU (%.0f collections a second): the heap is near GOMEMLIMIT, and the throughput measures the collector more than the engine (give the process more memory beyond its cache)",
		100*share, gc["go.gc_cycles"]/elapsed.Seconds())
}

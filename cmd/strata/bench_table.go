package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/stratadb/strata/internal/bench"
)

// writeWorkloadTable prints one workload's results, a row per engine, then
// the notes that qualify them.
func writeWorkloadTable(w io.Writer, workload string, outcomes []runOutcome) error {
	best := 0.0
	for _, o := range outcomes {
		if o.Result != nil {
			best = max(best, o.Result.TxnPerSec)
		}
	}
	fmt.Fprintf(w, "\n%s\n\n", workload)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "engine\ttxn/s\tops/s\tp50\tp95\tp99\tp99.9\tmax\tload\ton disk\tafter run\tlogical/disk\tread/txn\twritten/txn\twrite amp\tcpu/txn\tpeak RSS\tcgroup peak\tvs best\t")
	for _, o := range outcomes {
		r := o.Result
		if r == nil {
			fmt.Fprintf(tw, "%s\tfailed\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n", o.Engine)
			continue
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%s\t%s\t%s\t%s\t%s\t%.1f s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			o.Engine, r.TxnPerSec, r.OpsPerSec,
			formatMicros(r.P50us), formatMicros(r.P95us), formatMicros(r.P99us), formatMicros(r.P999us), formatMicros(r.MaxUs),
			r.LoadSeconds, formatSize(r.DiskBytes), formatSize(r.DiskBytesAfter), ratio(float64(r.LogicalBytes), float64(r.DiskBytes)),
			formatSize(int64(r.DeviceReadPerTxn)), formatSize(int64(r.DeviceWritePerTxn)),
			writeAmp(r), formatCPU(r), formatSize(r.PeakRSSBytes), cgroupPeak(r), ratio(r.TxnPerSec, best))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeFlashLines(w, outcomes)
	writeCheckpointLines(w, outcomes)
	writeNotes(w, outcomes)
	return nil
}

// writeCheckpointLines prints, for the engines that checkpoint in the
// background, the latencies of the transactions that overlapped a
// checkpoint beside the others'.
func writeCheckpointLines(w io.Writer, outcomes []runOutcome) {
	for _, o := range outcomes {
		r := o.Result
		if r == nil || r.CkptTxns == 0 {
			continue
		}
		fmt.Fprintf(w, "  %s: %d of %d transactions overlapped a checkpoint: p99.9 %s, max %s; the others p99.9 %s, max %s\n",
			o.Engine, r.CkptTxns, r.Txns, formatMicros(r.CkptP999us), formatMicros(r.CkptMaxUs),
			formatMicros(r.RestP999us), formatMicros(r.RestMaxUs))
	}
}

// formatCPU is a run's CPU time per transaction, with its system share.
func formatCPU(r *bench.Result) string {
	if r.CPUPerTxnUs < 0 || r.Txns == 0 {
		return "–"
	}
	return fmt.Sprintf("%s (%.0f%% sys)", formatMicros(r.CPUPerTxnUs), 100*r.SysPerTxnUs/max(r.CPUPerTxnUs, 1e-9))
}

// writeFlashLines prints the flash cache's figures of the engines that
// had one.
func writeFlashLines(w io.Writer, outcomes []runOutcome) {
	for _, o := range outcomes {
		r := o.Result
		if r == nil {
			continue
		}
		m := r.Metrics
		if _, ok := m["flash.lookups"]; !ok {
			continue
		}
		fmt.Fprintf(w, "  %s flash cache: hit ratio %.3f of %.0f RAM misses, %.0f admitted, %.0f dropped busy, %.0f dropped by the write budget, %s written, %.0f evictions, %.0f stale rejects, %.0f errors, read %.0f µs; free buffer waits %.0f\n",
			o.Engine, m["flash.hit_ratio"], m["flash.lookups"], m["flash.admitted"], m["flash.dropped_busy"], m["flash.dropped_rate"],
			formatSize(int64(m["flash.bytes_written"])), m["flash.evictions"], m["flash.stale_rejects"], m["flash.errors"], m["flash.read_us"],
			m["pool.free_buffer_waits"])
	}
}

// writeNotes prints what each engine ran with (its describe string) and the
// notes: those every engine shares once, the others under their engine.
func writeNotes(w io.Writer, outcomes []runOutcome) {
	var results []*bench.Result
	fmt.Fprintln(w)
	for _, o := range outcomes {
		if o.Result != nil {
			results = append(results, o.Result)
		} else {
			fmt.Fprintf(w, "  %s failed: %s\n", o.Engine, firstLine(o.Err))
		}
	}
	if len(results) == 0 {
		return
	}
	common := slices.Clone(results[0].Notes)
	for _, r := range results[1:] {
		common = slices.DeleteFunc(common, func(n string) bool { return !slices.Contains(r.Notes, n) })
	}
	common = slices.Compact(common)
	r0 := results[0]
	fmt.Fprintf(w, "  %s, %d rows, %s keys, %d threads, %v measured after %v warm-up; read-ahead %s; page cache dropped before the run: %s\n",
		r0.Spec.Dataset, r0.Spec.TableSize, r0.Spec.Distribution, r0.Spec.Threads, r0.Spec.Duration, r0.Spec.Warmup,
		readAhead(r0.ReadAheadKB), yesNo(r0.CachesDropped))
	if r0.Spec.Rate > 0 {
		fmt.Fprintf(w, "  paced at %g transactions a second in all (an open loop): latencies count from when each transaction was due\n", r0.Spec.Rate)
	}
	for _, n := range common {
		fmt.Fprintf(w, "  %s\n", n)
	}
	for _, r := range results {
		if strings.HasPrefix(r.Describe, r.Spec.Engine+":") {
			fmt.Fprintf(w, "  %s\n", r.Describe)
		} else {
			fmt.Fprintf(w, "  %s: %s\n", r.Spec.Engine, r.Describe)
		}
		for _, n := range r.Notes {
			if !slices.Contains(common, n) {
				fmt.Fprintf(w, "    %s\n", n)
			}
		}
	}
}

// formatMicros prints a latency with three significant digits in µs, ms
// or s.
func formatMicros(us float64) string {
	switch {
	case us <= 0:
		return "–"
	case us < 1000:
		return fmt.Sprintf("%.3gµs", us)
	case us < 1e6:
		return fmt.Sprintf("%.3gms", us/1e3)
	}
	return fmt.Sprintf("%.3gs", us/1e6)
}

func ratio(a, b float64) string {
	if b <= 0 || a <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func writeAmp(r *bench.Result) string {
	if r.UserWriteBytes == 0 || r.WriteAmp <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", r.WriteAmp)
}

func cgroupPeak(r *bench.Result) string {
	if p, ok := r.Metrics[cgroupPeakMetric]; ok {
		return formatSize(int64(p))
	}
	return "–"
}

func readAhead(kb int) string {
	if kb < 0 {
		return "unknown"
	}
	return fmt.Sprintf("%d KiB", kb)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

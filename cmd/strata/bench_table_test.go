package main

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/bench"
)

func tableResult(engine string, txns float64, notes ...string) *bench.Result {
	return &bench.Result{
		Spec:      bench.RunSpec{Engine: engine, Workload: "oltp_read_only", Dataset: "sysbench", Distribution: "uniform", TableSize: 1000, Threads: 2},
		Describe:  engine + ": cache 64 MiB",
		TxnPerSec: txns, OpsPerSec: 14 * txns, P50us: 85, P95us: 1500, P99us: 2.5e6,
		LoadSeconds: 12.34, LogicalBytes: 300 << 20, DiskBytes: 100 << 20,
		DeviceReadPerTxn: 16384, DeviceWritePerTxn: 0, PeakRSSBytes: 200 << 20,
		MemLimitBytes: 336 << 20, ReadAheadKB: 128,
		Metrics: map[string]float64{cgroupPeakMetric: 300 << 20},
		Notes:   notes,
	}
}

func TestWorkloadTable(t *testing.T) {
	var out bytes.Buffer
	err := writeWorkloadTable(&out, "oltp_read_only", []runOutcome{
		{Engine: "strata", Result: tableResult("strata", 2000, "shared note", "strata only")},
		{Engine: "bbolt", Result: tableResult("bbolt", 500, "shared note")},
		{Engine: "pebble", Err: errors.New("child signal: killed (OOM)\nmore detail")},
	})
	must(t, err)
	s := out.String()
	lines := strings.Split(s, "\n")
	row := func(engine string) string {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == engine {
				return l
			}
		}
		t.Fatalf("no row for %s in\n%s", engine, s)
		return ""
	}
	for _, want := range []string{"2000", "28000", "85µs", "1.5ms", "2.5s", "12.3 s", "100 MiB", "3.00×", "16 KiB", "200 MiB", "300 MiB", "1.00×"} {
		if !strings.Contains(row("strata"), want) {
			t.Errorf("strata row lacks %q: %q", want, row("strata"))
		}
	}
	if !regexp.MustCompile(`0\.25×\s*$`).MatchString(row("bbolt")) {
		t.Errorf("bbolt row does not end with its ratio to the best, 0.25×: %q", row("bbolt"))
	}
	if !strings.Contains(row("pebble"), "failed") || !strings.Contains(s, "pebble failed: child signal: killed (OOM)\n") || strings.Contains(s, "more detail") {
		t.Errorf("failure not shown as one line:\n%s", s)
	}
	if strings.Count(s, "shared note") != 1 {
		t.Errorf("a note common to all engines should appear once:\n%s", s)
	}
	if !strings.Contains(s, "  strata: cache 64 MiB\n    strata only\n") {
		t.Errorf("engine-specific note not under its engine:\n%s", s)
	}
	if !strings.Contains(s, "read-ahead 128 KiB") {
		t.Errorf("read-ahead missing:\n%s", s)
	}
	// The header and the rows line up: tabwriter pads every line of the
	// table to the same width.
	if w := len([]rune(lines[3])); w != len([]rune(row("strata"))) {
		t.Errorf("header width %d != row width %d:\n%s", w, len([]rune(row("strata"))), s)
	}
}

func TestFormatMicros(t *testing.T) {
	for in, want := range map[float64]string{0: "–", 12.345: "12.3µs", 999: "999µs", 1234: "1.23ms", 2.5e6: "2.5s"} {
		if got := formatMicros(in); got != want {
			t.Errorf("formatMicros(%v) = %q, want %q", in, got, want)
		}
	}
}

package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/bench"
)

func TestParseTableSizes(t *testing.T) {
	rows, xs, err := parseTableSizes([]string{"0.5x", "2X", "1000"}, 100<<20, 200)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(0.5 * (100 << 20) / 200); rows[0] != want || xs[0] != 0.5 {
		t.Errorf("0.5x: %d rows (x %.2f), want %d", rows[0], xs[0], want)
	}
	if rows[1] != 4*rows[0] || xs[1] != 2 {
		t.Errorf("2X: %d rows (x %.2f), want %d", rows[1], xs[1], 4*rows[0])
	}
	if rows[2] != 1000 || xs[2] != 1000*200.0/(100<<20) {
		t.Errorf("1000 rows: %d (x %g)", rows[2], xs[2])
	}
	for _, bad := range []string{"0x", "-1x", "x", "abc", "0", "1.5"} {
		if _, _, err := parseTableSizes([]string{bad}, 100<<20, 200); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, _, err := parseTableSizes([]string{"1x"}, 0, 200); err == nil {
		t.Error("a multiple of the memory limit accepted without a limit")
	}
}

func sizeResult(txn float64, metrics map[string]float64) *bench.Result {
	return &bench.Result{TxnPerSec: txn, Metrics: metrics, Spec: bench.RunSpec{Engine: "x", Dataset: "sysbench", Distribution: "uniform"}}
}

// TestSizeSweepSummary: per data size, the best peer, Strata at automatic
// R against it and against the best fixed R, in the table, the JSON-ready
// runs and the plot.
func TestSizeSweepSummary(t *testing.T) {
	runs := []sizeRun{
		{Value: "1x", X: 1, Label: "strata R=auto", Engine: "strata", Share: -1, Result: sizeResult(300, map[string]float64{shareMetric: 0.8, "pool.hit_ratio_compressed": 0.6})},
		{Value: "1x", X: 1, Label: "strata R=0", Engine: "strata", Share: 0, Result: sizeResult(100, nil)},
		{Value: "1x", X: 1, Label: "strata R=0.75", Engine: "strata", Share: 0.75, Result: sizeResult(310, nil)},
		{Value: "1x", X: 1, Label: "bbolt", Engine: "bbolt", Result: sizeResult(150, nil)},
		{Value: "1x", X: 1, Label: "pebble", Engine: "pebble", Result: sizeResult(200, nil)},
		{Value: "2x", X: 2, Label: "strata R=auto", Engine: "strata", Share: -1, Result: sizeResult(80, nil)},
		{Value: "2x", X: 2, Label: "bbolt", Engine: "bbolt", Error: "killed"},
		{Value: "2x", X: 2, Label: "pebble", Engine: "pebble", Result: sizeResult(100, nil)},
	}
	s := summarize(runs, []string{"1x", "2x"})
	if s[0].bestPeer != "pebble" || s[0].bestPeerTxn != 200 || s[0].auto != 300 || s[0].bestFixedR != 0.75 || s[0].bboltTxn != 150 || s[0].autoR != 0.8 {
		t.Errorf("1x summary %+v", s[0])
	}
	if s[1].bestPeer != "pebble" || s[1].bestFixedR != -1 {
		t.Errorf("2x summary %+v", s[1])
	}
	var out bytes.Buffer
	if err := writeSizeSweepTable(&out, runs, []string{"1x", "2x"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pebble 200", "1.50×", "2.00×", "310 (R=0.75)", "0.97×", "failed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if err := plotSizeSweep(filepath.Join(t.TempDir(), "p.png"), "t", runs); err != nil {
		t.Fatal(err)
	}
	if err := plotSizeSweep(filepath.Join(t.TempDir(), "none.png"), "t", runs[6:7]); err != nil {
		t.Fatalf("plot of failed runs only: %v", err)
	}
}

// TestMedianRun: with --repeat, a point reports its run of median
// throughput (the lower middle for an even count) and the spread of all.
func TestMedianRun(t *testing.T) {
	if medianRun(nil) != nil {
		t.Fatal("median of no run")
	}
	a, b, c, d := sizeResult(300, nil), sizeResult(100, nil), sizeResult(200, nil), sizeResult(400, nil)
	if got := medianRun([]*bench.Result{a, b, c}); got != c {
		t.Errorf("median of 300, 100, 200: %.0f", got.TxnPerSec)
	}
	if got := medianRun([]*bench.Result{a, b, c, d}); got != c {
		t.Errorf("median of 300, 100, 200, 400: %.0f, want the lower middle 200", got.TxnPerSec)
	}
	run := sizeRun{Result: c, TxnPerSec: []float64{300, 100, 200}}
	if got := spread(run); got != "±50%" {
		t.Errorf("spread of 100-300 around 200: %q", got)
	}
	if got := spread(sizeRun{Result: c, TxnPerSec: []float64{200}}); got != "" {
		t.Errorf("spread of one run: %q", got)
	}
	if got := spread(sizeRun{Result: c, TxnPerSec: []float64{100, 200}, Failed: 1}); got != "±25% 1 failed" {
		t.Errorf("spread with a failed run: %q", got)
	}
}

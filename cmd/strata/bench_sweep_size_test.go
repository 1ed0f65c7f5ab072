package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/bench"
	"gonum.org/v1/plot/plotter"
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

func TestParseStrataPageSizes(t *testing.T) {
	got, err := parseStrataPageSizes("4KiB, 16KiB,65536", 0)
	if err != nil || len(got) != 3 || got[0] != 4096 || got[1] != 16384 || got[2] != 65536 {
		t.Errorf("4KiB,16KiB,65536: %v, %v", got, err)
	}
	if got, err := parseStrataPageSizes("", 8192); err != nil || len(got) != 1 || got[0] != 8192 {
		t.Errorf("default from --page-size: %v, %v", got, err)
	}
	if got, err := parseStrataPageSizes(" ", 0); err != nil || len(got) != 1 || got[0] != 0 {
		t.Errorf("default without --page-size: %v, %v", got, err)
	}
	for _, bad := range []string{"2KiB", "128KiB", "12KiB", "abc", "4KiB,4096"} {
		if _, err := parseStrataPageSizes(bad, 0); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// One page size keeps the directory name of sweeps before
	// --strata-page-size, so that their --keep directories are reused.
	if d := strataDir(4096, false, 1000); d != "strata-1000" {
		t.Errorf("one page size: %s", d)
	}
	if d := strataDir(4096, true, 1000); d != "strata-4KiB-1000" {
		t.Errorf("several page sizes: %s", d)
	}
	if pageSizeName(0) != "4KiB" {
		t.Errorf("Strata's default page size: %s", pageSizeName(0))
	}
}

// TestSizeSweepPageSizes: with several page sizes, Strata at automatic R
// is compared with the best fixed R of its own page size, the table says
// which page size's automatic R won at each size, and the plot draws them.
func TestSizeSweepPageSizes(t *testing.T) {
	runs := []sizeRun{
		{Value: "1x", X: 1, Label: "strata 4KiB R=auto", Engine: "strata", Share: -1, PageSize: 4096, Result: sizeResult(300, map[string]float64{shareMetric: 0.3, "pool.miss_ratio": 0.1})},
		{Value: "1x", X: 1, Label: "strata 4KiB R=0.5", Engine: "strata", Share: 0.5, PageSize: 4096, Result: sizeResult(250, nil)},
		{Value: "1x", X: 1, Label: "strata 16KiB R=auto", Engine: "strata", Share: -1, PageSize: 16384, Result: sizeResult(200, map[string]float64{shareMetric: 0.6})},
		{Value: "1x", X: 1, Label: "strata 16KiB R=0.5", Engine: "strata", Share: 0.5, PageSize: 16384, Result: sizeResult(400, nil)},
		{Value: "1x", X: 1, Label: "bbolt", Engine: "bbolt", Result: sizeResult(100, nil)},
		{Value: "2x", X: 2, Label: "strata 4KiB R=auto", Engine: "strata", Share: -1, PageSize: 4096, Error: "killed"},
		{Value: "2x", X: 2, Label: "strata 4KiB R=0.5", Engine: "strata", Share: 0.5, PageSize: 4096, Result: sizeResult(90, nil)},
		{Value: "2x", X: 2, Label: "strata 16KiB R=auto", Engine: "strata", Share: -1, PageSize: 16384, Result: sizeResult(80, map[string]float64{"pool.miss_ratio": 0.4})},
		{Value: "2x", X: 2, Label: "strata 16KiB R=0.5", Engine: "strata", Share: 0.5, PageSize: 16384, Result: sizeResult(70, nil)},
		{Value: "2x", X: 2, Label: "bbolt", Engine: "bbolt", Result: sizeResult(50, nil)},
	}
	values := []string{"1x", "2x"}
	s := summarize(runs, values)
	if len(s) != 4 {
		t.Fatalf("%d summaries, want one per size and page size: %+v", len(s), s)
	}
	if s[0].pageSize != 4096 || s[0].auto != 300 || s[0].bestFixed != 250 || s[0].bestPeerTxn != 100 {
		t.Errorf("1x 4KiB: %+v", s[0])
	}
	if s[1].pageSize != 16384 || s[1].auto != 200 || s[1].bestFixed != 400 || s[1].bestPeer != "bbolt" {
		t.Errorf("1x 16KiB: %+v (the best fixed R must be its own page size's)", s[1])
	}
	best := bestAutoPages(s, values)
	if best[0].pageSize != 4096 || best[0].txn != 300 || len(best[0].vs) != 1 || best[0].vs[0] != "1.50× 16KiB" {
		t.Errorf("1x best auto page: %+v", best[0])
	}
	if best[1].pageSize != 16384 || best[1].vs[0] != "4KiB failed" {
		t.Errorf("2x best auto page: %+v", best[1])
	}
	var out bytes.Buffer
	if err := writeSizeSweepTable(&out, runs, values); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"strata 4KiB R=auto", "strata 16KiB R=0.5", "best fixed R (same page)", "400 (R=0.5)", "0.50×",
		"best page size at auto R", "1.50× 16KiB"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if err := plotSizeSweep(filepath.Join(t.TempDir(), "p.png"), "t", runs); err != nil {
		t.Fatal(err)
	}

	// One page size: the table as before.
	out.Reset()
	if err := writeSizeSweepTable(&out, runs[:2], values[:1]); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "best page size") || strings.Contains(out.String(), "same page") {
		t.Errorf("a table of one page size speaks of page sizes:\n%s", out.String())
	}
}

func TestSweepRefusesStrataPageSize(t *testing.T) {
	f := sweepCmdFlags{benchFlags: tinyBench(t), param: "r", strataPageSize: "4KiB,16KiB"}
	var stdout, stderr bytes.Buffer
	err := runBenchSweep(context.Background(), &stdout, &stderr, f)
	if err == nil || !strings.Contains(err.Error(), "--strata-page-size: only for --param table-size") {
		t.Errorf("--param r with --strata-page-size: %v", err)
	}
	f.param, f.strataPageSize, f.workloads = "table-size", "5KiB", "oltp_point_select"
	err = runBenchSweep(context.Background(), &stdout, &stderr, f)
	if err == nil || !strings.Contains(err.Error(), "--strata-page-size") {
		t.Errorf("--strata-page-size 5KiB: %v", err)
	}
}

// TestThroughputLineBreaksAtFailedRuns: the plot draws no line across a
// point where an engine's run failed (Pebble killed at its memory limit
// at 0.5x to 2x, measured at 0.25x and 4x): that line would read as
// measured throughput in between.
func TestThroughputLineBreaksAtFailedRuns(t *testing.T) {
	var runs []sizeRun
	for i, x := range []float64{0.25, 0.5, 1, 2, 4, 8} {
		ok := i == 0 || i >= 4
		r := sizeRun{Value: fmt.Sprintf("%gx", x), X: x, Label: "pebble", Engine: "pebble"}
		if ok {
			r.Result = sizeResult(1000/x, nil)
		} else {
			r.Error = "killed"
		}
		runs = append(runs, r, sizeRun{Value: r.Value, X: x, Label: "bbolt", Engine: "bbolt", Result: sizeResult(500/x, nil)})
	}
	segs := throughputSegments(runs, "pebble")
	if len(segs) != 2 || len(segs[0]) != 1 || len(segs[1]) != 2 || segs[0][0].X != 0.25 || segs[1][0].X != 4 || segs[1][1].X != 8 {
		t.Errorf("pebble's segments %v, want [0.25] and [4 8]", segs)
	}
	if segs := throughputSegments(runs, "bbolt"); len(segs) != 1 || len(segs[0]) != 6 {
		t.Errorf("bbolt's segments %v, want one of 6 points", segs)
	}
	if err := plotSizeSweep(filepath.Join(t.TempDir(), "p.png"), "t", runs); err != nil {
		t.Fatal(err)
	}
	// --values in no order (4x before 2x) and R=auto given twice (two
	// runs of one label at each size): the line follows the data size,
	// takes the first run at each, and still breaks at the failed 2x.
	auto := func(v string, x, txn float64) sizeRun {
		r := sizeRun{Value: v, X: x, Label: "strata R=auto", Engine: "strata", Share: -1}
		if txn > 0 {
			r.Result = sizeResult(txn, nil)
		} else {
			r.Error = "killed"
		}
		return r
	}
	runs = []sizeRun{auto("1x", 1, 100), auto("1x", 1, 90), auto("4x", 4, 40), auto("4x", 4, 45), auto("2x", 2, 0), auto("2x", 2, 70)}
	segs = throughputSegments(runs, "strata R=auto")
	if len(segs) != 2 || len(segs[0]) != 1 || len(segs[1]) != 1 || segs[0][0] != (plotter.XY{X: 1, Y: 100}) || segs[1][0] != (plotter.XY{X: 4, Y: 40}) {
		t.Errorf("segments %v, want [(1, 100)] and [(4, 40)]", segs)
	}
}

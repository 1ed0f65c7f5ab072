package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stratadb/strata/internal/bench"
	"github.com/stratadb/strata/internal/pagestore"
)

// The data-size sweep (strata bench sweep --param table-size): every engine
// under the same memory limit, the data from a fraction to a multiple of
// that limit, Strata at automatic R and at fixed R values side by side at
// every point, at one or several page sizes. Its plot is throughput per
// engine against data/memory, and Strata's hit ratios (at automatic R, per
// page size) under it.

// sizeRun is one engine (Strata at one page size and R) at one data size.
type sizeRun struct {
	Value  string  `json:"value"`  // as given: rows, or "2x" (a multiple of the memory limit)
	X      float64 `json:"x"`      // logical data / memory limit
	Label  string  `json:"label"`  // "bbolt", "strata R=auto", "strata R=0.25"; "strata 4KiB R=auto" with several page sizes
	Engine string  `json:"engine"` // the engine
	Share  float64 `json:"share"`  // Strata's R (-1 auto); 0 for peers
	// PageSize is Strata's page size in bytes (its default filled in); 0
	// for peers.
	PageSize int           `json:"page_size,omitempty"`
	Rows     int64         `json:"rows"`
	Result   *bench.Result `json:"result,omitempty"` // the median run's (by txn/s) with --repeat
	Error    string        `json:"error,omitempty"`
	// TxnPerSec are the throughputs of every run with --repeat, in the
	// order run; Failed counts the runs that failed (Error is the last's).
	TxnPerSec []float64 `json:"txn_per_sec_runs,omitempty"`
	Failed    int       `json:"failed_runs,omitempty"`
}

type sizeSweepReport struct {
	Host     hostInfo  `json:"host"`
	Param    string    `json:"param"`
	MemLimit int64     `json:"mem_limit_bytes"`
	Runs     []sizeRun `json:"runs"`
}

// sizeVariant is an engine and, for Strata, a page size and an R.
type sizeVariant struct {
	engine, label string
	share         float64
	pageSize      int // Config.PageSize: 0 is Strata's default
}

// parseStrataPageSizes reads --strata-page-size: distinct page sizes in
// bytes, each a power of two from 4 KiB to 64 KiB. Without any it returns
// def (--page-size, 0 for Strata's default) alone.
func parseStrataPageSizes(s string, def int) ([]int, error) {
	var out []int
	for _, v := range splitList(s) {
		b, err := parseSize(v)
		if err != nil {
			return nil, err
		}
		if b < pagestore.MinPageSize || b > pagestore.MaxPageSize || b&(b-1) != 0 {
			return nil, fmt.Errorf("page size %q: want a power of two from 4KiB to 64KiB", v)
		}
		if slices.Contains(out, int(b)) {
			return nil, fmt.Errorf("page size %q given twice", v)
		}
		out = append(out, int(b))
	}
	if len(out) == 0 {
		out = []int{def}
	}
	return out, nil
}

// pageSizeName is a page size as labels show it: "4KiB" (0 is Strata's
// default).
func pageSizeName(b int) string {
	if b == 0 {
		b = pagestore.DefaultPageSize
	}
	return fmt.Sprintf("%dKiB", b>>10)
}

// strataDir is the subdirectory of Strata's load of rows at a page size:
// strata-<rows> when the sweep has one page size (the name from before
// --strata-page-size, so that directories kept with --keep stay
// reusable), strata-<page size>-<rows> when it has several.
func strataDir(pageSize int, several bool, rows int64) string {
	if !several {
		return fmt.Sprintf("strata-%d", rows)
	}
	return fmt.Sprintf("strata-%s-%d", pageSizeName(pageSize), rows)
}

// parseTableSizes reads --values of a table-size sweep: row counts, or
// multiples of the memory limit ("0.25x", "8x"), turned into rows with
// the data set's mean row size.
func parseTableSizes(values []string, memLimit int64, rowBytes float64) ([]int64, []float64, error) {
	var rows []int64
	var xs []float64
	for _, v := range values {
		if m, ok := strings.CutSuffix(strings.ToLower(v), "x"); ok {
			f, err := strconv.ParseFloat(m, 64)
			if err != nil || f <= 0 || math.IsInf(f, 0) {
				return nil, nil, fmt.Errorf("table size %q: want rows or a positive multiple of the memory limit such as 0.5x", v)
			}
			if memLimit <= 0 {
				return nil, nil, fmt.Errorf("table size %q is a multiple of the memory limit: give --mem-limit", v)
			}
			n := int64(math.Round(f * float64(memLimit) / rowBytes))
			rows, xs = append(rows, max(n, 1)), append(xs, f)
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return nil, nil, fmt.Errorf("table size %q: want rows or a multiple of the memory limit such as 0.5x", v)
		}
		x := 0.0
		if memLimit > 0 {
			x = float64(n) * rowBytes / float64(memLimit)
		}
		rows, xs = append(rows, n), append(xs, x)
	}
	return rows, xs, nil
}

// What Strata's bench child needs beyond its cache under a memory limit
// (docs/BENCHMARKS.md, "What Strata's process spends beyond its cache",
// "I/O-bound writes with Strata in its own binary" and the thirty-third
// session's overhead runs): reading, with 16 MiB beyond a 48 MiB cache
// under a 64 MiB limit, the process peaked at 45.0–57.1 MiB (point reads
// and range scans, 0.5–8× the memory) with no collector pressure; 24 MiB
// left 7–15 MiB of the limit unused. Writing, the write buffers, the page
// map and the zstd encoders add 12–14 MiB of live heap, and with only 24
// MiB the collector took 20% of the CPU (650 collections a second).
const (
	readOverhead  = "16MiB"
	writeOverhead = "32MiB"
)

// strataOverheadFor returns --strata-overhead as given, or its default for
// workload.
func strataOverheadFor(given, workload string) string {
	switch {
	case strings.TrimSpace(given) != "":
		return given
	case bench.WorkloadWrites(workload):
		return writeOverhead
	}
	return readOverhead
}

// overheadWarning returns a warning when overhead, given for a writing
// workload, is below what writing needs (writeOverhead), else "". The
// twenty-first session's first write sweep passed the read sweeps' 24 MiB
// and measured the collector, not the engine, at 4–8× (27–28% of the CPU;
// docs/BENCHMARKS.md).
func overheadWarning(overhead int64, given, workload string) string {
	need, _ := parseSize(writeOverhead)
	if !bench.WorkloadWrites(workload) || overhead >= need {
		return ""
	}
	return fmt.Sprintf("strata bench sweep: warning: --strata-overhead %s is below the %s a writing workload needs beyond its cache: Strata's Go heap may be starved (with 24 MiB its collector took 20-28%% of the CPU)", given, writeOverhead)
}

func runSizeSweep(ctx context.Context, stdout, stderr io.Writer, f sweepCmdFlags) error {
	tmpl, err := f.specTemplate()
	if err != nil {
		return err
	}
	engines, err := parseEngines(f.engines)
	if err != nil {
		return fmt.Errorf("--engine: %w", err)
	}
	workloads, err := parseWorkloads(f.workloads)
	if err != nil || len(workloads) != 1 {
		return fmt.Errorf("--workload %q: want exactly one of %s", f.workloads, workloadList())
	}
	tmpl.Workload = workloads[0]
	memLimit, err := f.memLimitBytes()
	if err != nil {
		return err
	}
	var shares []float64
	for _, s := range splitList(f.strataR) {
		r, err := parseShare(s)
		if err != nil {
			return fmt.Errorf("--strata-r: %w", err)
		}
		shares = append(shares, r)
	}
	if len(shares) == 0 {
		shares = []float64{tmpl.Config.CompressedShare}
	}
	pageSizes, err := parseStrataPageSizes(f.strataPageSize, tmpl.Config.PageSize)
	if err != nil {
		return fmt.Errorf("--strata-page-size: %w", err)
	}
	severalPages := len(pageSizes) > 1
	strataCache := tmpl.Config.CacheBytes
	switch c := strings.TrimSpace(strings.ToLower(f.strataCache)); c {
	case "":
	case "fill":
		given := strataOverheadFor(f.strataOverhead, tmpl.Workload)
		overhead, err := parseSize(given)
		if err != nil {
			return fmt.Errorf("--strata-overhead: %w", err)
		}
		if memLimit <= 0 || memLimit-overhead < 8<<20 {
			return fmt.Errorf("--strata-cache fill needs a --mem-limit above --strata-overhead (%s) + 8 MiB", given)
		}
		strataCache = memLimit - overhead
		if w := overheadWarning(overhead, given, tmpl.Workload); w != "" {
			fmt.Fprintln(stderr, w)
		}
	default:
		if strataCache, err = parseSize(c); err != nil {
			return fmt.Errorf("--strata-cache: %w", err)
		}
	}
	rowBytes, err := bench.MeanRowBytes(tmpl.Dataset, tmpl.Seed, 2000)
	if err != nil {
		return err
	}
	values := splitList(f.values)
	if len(values) == 0 {
		values = splitList(sweepParams["table-size"].defaults)
	}
	rows, xs, err := parseTableSizes(values, memLimit, rowBytes)
	if err != nil {
		return fmt.Errorf("--values: %w", err)
	}
	var variants []sizeVariant
	for _, e := range engines {
		if e != "strata" {
			variants = append(variants, sizeVariant{engine: e, label: e})
			continue
		}
		for _, ps := range pageSizes {
			for _, r := range shares {
				label := "strata R=" + formatShare(r)
				if severalPages {
					label = "strata " + pageSizeName(ps) + " R=" + formatShare(r)
				}
				variants = append(variants, sizeVariant{engine: e, label: label, share: r, pageSize: ps})
			}
		}
	}
	plotPath, jsonPath := f.plotPath, f.jsonPath
	if plotPath == "" {
		plotPath = "bench-sweep-table-size.png"
	}
	if jsonPath == "" {
		jsonPath = "bench-sweep-table-size.json"
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := newBenchRunner(stderr, f.benchFlags)
	if err != nil {
		return err
	}
	defer r.close()
	pageNames := make([]string, len(pageSizes))
	for i, ps := range pageSizes {
		pageNames[i] = pageSizeName(ps)
	}
	fmt.Fprintf(stderr, "strata bench sweep: %s on %s (%s, %s keys), data %s × the %s memory limit; Strata's cache %s, page size %s; work directory %s\n",
		strings.Join(engines, ", "), tmpl.Workload, tmpl.Dataset, tmpl.Distribution, strings.Join(values, ", "),
		formatSize(memLimit), formatSize(strataCache), strings.Join(pageNames, ", "), r.workDir)
	var runs []sizeRun
	failed := 0
	var failedRuns []string // "pebble at 0.5x", for the error
	for i, n := range rows {
		for _, ps := range pageSizes {
			if !slices.Contains(engines, "strata") {
				break
			}
			// Load Strata's data with --cache rather than the cache of the
			// measured runs: the load's own memory (batches, WAL) comes on
			// top of the cache, and the runs at every R reuse it. The page
			// size is fixed when the database is created: a load each.
			spec := tmpl
			spec.Engine, spec.TableSize, spec.Config.PageSize = "strata", n, ps
			spec.Warmup, spec.Duration = 0, 100*time.Millisecond
			if _, err := r.runIn(ctx, spec, strataDir(ps, severalPages, n)); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				name := "strata"
				if severalPages {
					name += " " + pageSizeName(ps)
				}
				fmt.Fprintf(stderr, "%s: load %d rows: %v\n", name, n, err)
			}
		}
		point := make([]sizeRun, len(variants))
		results := make([][]*bench.Result, len(variants))
		for k, v := range variants {
			point[k] = sizeRun{Value: values[i], X: xs[i], Label: v.label, Engine: v.engine, Share: v.share, Rows: n}
			if v.engine == "strata" {
				point[k].PageSize = cmp.Or(v.pageSize, pagestore.DefaultPageSize)
			}
		}
		for round := 0; round < max(f.repeat, 1); round++ {
			for j := range variants {
				k := (j + round) % len(variants) // rotate the order: no engine always runs first
				v := variants[k]
				spec := tmpl
				spec.Engine, spec.TableSize = v.engine, n
				dir := fmt.Sprintf("%s-%d", v.engine, n)
				if v.engine == "strata" {
					spec.Config.CacheBytes, spec.Config.CompressedShare, spec.Config.PageSize = strataCache, v.share, v.pageSize
					dir = strataDir(v.pageSize, severalPages, n)
				}
				// One directory per engine (Strata: per page size) and
				// size, so that the Strata runs at each R share a load, and
				// a later sweep of another workload or distribution with
				// --keep reuses them all.
				res, err := r.runIn(ctx, spec, dir)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if err != nil {
					failed++
					point[k].Error, point[k].Failed = err.Error(), point[k].Failed+1
					fmt.Fprintf(stderr, "%s at %s: %v\n", v.label, values[i], err)
					if at := v.label + " at " + values[i]; !slices.Contains(failedRuns, at) {
						failedRuns = append(failedRuns, at)
					}
					continue
				}
				results[k] = append(results[k], res)
				if f.repeat > 1 {
					point[k].TxnPerSec = append(point[k].TxnPerSec, res.TxnPerSec)
				}
			}
		}
		for k := range point {
			if res := medianRun(results[k]); res != nil {
				point[k].Result = res
				if memLimit > 0 && res.LogicalBytes > 0 {
					point[k].X = float64(res.LogicalBytes) / float64(memLimit)
				}
			}
		}
		runs = append(runs, point...)
	}
	if err := writeSizeSweepTable(stdout, runs, values); err != nil {
		return err
	}
	b, err := json.MarshalIndent(sizeSweepReport{Host: currentHost(), Param: "table-size", MemLimit: memLimit, Runs: runs}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(jsonPath, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	dist := tmpl.Distribution
	for _, run := range runs {
		if run.Result != nil {
			dist = run.Result.Spec.Distribution // the workload's default filled in
			break
		}
	}
	title := fmt.Sprintf("%s, %s keys, %s, %d threads, memory limit %s", tmpl.Workload, dist, tmpl.Dataset, tmpl.Threads, formatSize(memLimit))
	if err := plotSizeSweep(plotPath, title, runs); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	fmt.Fprintf(stderr, "results written to %s, plot to %s\n", jsonPath, plotPath)
	if failed > 0 {
		return fmt.Errorf("%d of %d runs failed: %s (see above)", failed, len(runs)*max(f.repeat, 1), strings.Join(failedRuns, ", "))
	}
	return nil
}

// medianRun returns the run of median throughput (the lower of the two
// middle ones for an even count), or nil if there is none.
func medianRun(results []*bench.Result) *bench.Result {
	if len(results) == 0 {
		return nil
	}
	sorted := slices.Clone(results)
	slices.SortFunc(sorted, func(a, b *bench.Result) int { return cmp.Compare(a.TxnPerSec, b.TxnPerSec) })
	return sorted[(len(sorted)-1)/2]
}

// spread is the range of a point's throughputs over their median, as
// "±x%" (half the range), or "" for a single run.
func spread(run sizeRun) string {
	var s string
	if len(run.TxnPerSec) >= 2 && run.Result != nil && run.Result.TxnPerSec > 0 {
		s = fmt.Sprintf("±%.0f%%", 50*(slices.Max(run.TxnPerSec)-slices.Min(run.TxnPerSec))/run.Result.TxnPerSec)
	}
	if run.Failed > 0 {
		s = strings.TrimSpace(fmt.Sprintf("%s %d failed", s, run.Failed))
	}
	return s
}

// runIn runs spec in the subdirectory sub of the work directory (created,
// reused when it holds the same data, removed by close unless --keep).
func (r *benchRunner) runIn(ctx context.Context, spec bench.RunSpec, sub string) (*bench.Result, error) {
	dir := filepath.Join(r.workDir, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	if !r.keep && !slices.Contains(r.engineDirs, dir) {
		r.engineDirs = append(r.engineDirs, dir)
	}
	spec.Config.Dir, spec.Reuse = dir, true
	return r.run(ctx, spec)
}

// sizeSummary is one data size of a sweep (and, with several page sizes,
// one of Strata's page sizes): the best peer, Strata at automatic R, and
// the best of Strata's fixed R values at the same page size.
type sizeSummary struct {
	value              string
	x                  float64
	pageSize           int // Strata's (0 when the sweep ran no Strata)
	bestPeer           string
	bestPeerTxn        float64
	auto               float64 // txn/s, 0 if not run
	autoR              float64
	bestFixed          float64
	bestFixedR         float64
	bboltTxn           float64
	hitU, hitC, miss   float64 // Strata's at automatic R
	modelR, timeAccess float64 // Strata's model optimum R and measured time per access (µs)
}

// strataPageSizes returns the page sizes of Strata's runs, in the order
// run (none for a sweep without Strata).
func strataPageSizes(runs []sizeRun) []int {
	var pages []int
	for _, run := range runs {
		if run.Engine == "strata" && !slices.Contains(pages, run.PageSize) {
			pages = append(pages, run.PageSize)
		}
	}
	return pages
}

// summarize returns a summary per data size, and per page size within it
// when Strata ran at several: Strata's runs are compared with those of the
// same page size, and with every peer.
func summarize(runs []sizeRun, values []string) []sizeSummary {
	pages := strataPageSizes(runs)
	if len(pages) == 0 {
		pages = []int{0}
	}
	var out []sizeSummary
	for _, v := range values {
		for _, ps := range pages {
			s := sizeSummary{value: v, pageSize: ps, bestFixedR: -1}
			for _, run := range runs {
				if run.Value != v || run.Engine == "strata" && run.PageSize != ps {
					continue
				}
				s.x = run.X
				res := run.Result
				if res == nil {
					continue
				}
				switch {
				case run.Engine != "strata":
					if res.TxnPerSec > s.bestPeerTxn {
						s.bestPeer, s.bestPeerTxn = run.Engine, res.TxnPerSec
					}
					if run.Engine == "bbolt" {
						s.bboltTxn = res.TxnPerSec
					}
				case run.Share < 0:
					s.auto, s.autoR = res.TxnPerSec, res.Metrics[shareMetric]
					s.hitU, s.hitC, s.miss = res.Metrics["pool.hit_ratio_uncompressed"], res.Metrics["pool.hit_ratio_compressed"], res.Metrics["pool.miss_ratio"]
					s.modelR, s.timeAccess = res.Metrics["pool.model_share_r"], res.Metrics["pool.time_per_access_us"]
				case res.TxnPerSec > s.bestFixed:
					s.bestFixed, s.bestFixedR = res.TxnPerSec, run.Share
				}
			}
			out = append(out, s)
		}
	}
	return out
}

// bestAutoPage is, at one data size of a sweep with several page sizes,
// the page size whose automatic-R run was fastest, and how much faster it
// was than the others ("1.20× 16KiB", or "16KiB failed").
type bestAutoPage struct {
	value    string
	x        float64
	pageSize int     // 0: no automatic-R run succeeded at this size
	txn      float64 // its txn/s
	vs       []string
}

func bestAutoPages(sums []sizeSummary, values []string) []bestAutoPage {
	var out []bestAutoPage
	for _, v := range values {
		b := bestAutoPage{value: v}
		for _, s := range sums {
			if s.value == v {
				b.x = s.x
				if s.auto > b.txn {
					b.pageSize, b.txn = s.pageSize, s.auto
				}
			}
		}
		for _, s := range sums {
			if s.value == v && s.pageSize != b.pageSize && b.txn > 0 {
				vs := pageSizeName(s.pageSize) + " failed"
				if s.auto > 0 {
					vs = ratio(b.txn, s.auto) + " " + pageSizeName(s.pageSize)
				}
				b.vs = append(b.vs, vs)
			}
		}
		out = append(out, b)
	}
	return out
}

func writeSizeSweepTable(w io.Writer, runs []sizeRun, values []string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "data\tdata/mem\tengine\ttxn/s\truns\tp50\tp99\tcpu/txn\thit U\thit C\tmiss\tfinal R\ton disk\tcgroup peak\t")
	for _, run := range runs {
		res := run.Result
		if res == nil {
			fmt.Fprintf(tw, "%s\t%.2f\t%s\tfailed\t\t\t\t\t\t\t\t\t\t\t\n", run.Value, run.X, run.Label)
			continue
		}
		metric := func(k string) string {
			if v, ok := res.Metrics[k]; ok {
				return fmt.Sprintf("%.3f", v)
			}
			return "–"
		}
		share := "–"
		if v, ok := res.Metrics[shareMetric]; ok {
			share = fmt.Sprintf("%.2f", v)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", run.Value, run.X, run.Label, res.TxnPerSec,
			spread(run), formatMicros(res.P50us), formatMicros(res.P99us), formatCPU(res), metric("pool.hit_ratio_uncompressed"),
			metric("pool.hit_ratio_compressed"), metric("pool.miss_ratio"), share, formatSize(res.DiskBytes), cgroupPeak(res))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	// With several page sizes a row per data size and page size: Strata at
	// automatic R against the best peer and the best fixed R of its own
	// page size; then which page size's automatic R won at each size.
	sums := summarize(runs, values)
	severalPages := len(strataPageSizes(runs)) > 1
	page := func(s sizeSummary) string { return "" }
	if severalPages {
		page = func(s sizeSummary) string { return pageSizeName(s.pageSize) + "\t" }
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "data/mem\tbest peer\tStrata auto\tvs best peer\tvs bbolt\tbest fixed R\tauto vs best fixed\tauto's R\tmodel's R\t"
	if severalPages {
		header = "data/mem\tpage\tbest peer\tStrata auto\tvs best peer\tvs bbolt\tbest fixed R (same page)\tauto vs best fixed\tauto's R\tmodel's R\t"
	}
	fmt.Fprintln(tw, header)
	for _, s := range sums {
		fixed := "–"
		if s.bestFixedR >= 0 {
			fixed = fmt.Sprintf("%.0f (R=%s)", s.bestFixed, formatShare(s.bestFixedR))
		}
		fmt.Fprintf(tw, "%.2f\t%s%s %.0f\t%.0f\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t\n", s.x, page(s), s.bestPeer, s.bestPeerTxn, s.auto,
			ratio(s.auto, s.bestPeerTxn), ratio(s.auto, s.bboltTxn), fixed, ratio(s.auto, s.bestFixed), s.autoR, s.modelR)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if severalPages {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "data/mem\tbest page size at auto R\ttxn/s\tvs the other page sizes\t")
		for _, b := range bestAutoPages(sums, values) {
			if b.txn <= 0 {
				fmt.Fprintf(tw, "%.2f\t–\t–\t\t\n", b.x)
				continue
			}
			fmt.Fprintf(tw, "%.2f\t%s\t%.0f\t%s\t\n", b.x, pageSizeName(b.pageSize), b.txn, strings.Join(b.vs, ", "))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	var outcomes []runOutcome
	for _, run := range runs {
		o := runOutcome{Engine: run.Label + " at " + run.Value, Result: run.Result}
		if run.Error != "" {
			o.Err = fmt.Errorf("%s", run.Error)
		}
		outcomes = append(outcomes, o)
	}
	writeNotes(w, outcomes[:min(len(outcomes), 1)])
	return nil
}

// throughputSegments returns the throughput points of one label's runs
// in order of data size, the first run at each size (R=auto given twice
// makes two runs of one label), split where a run failed: a line drawn
// across a failed point (a peer killed at its memory limit) would read as
// measured values there.
func throughputSegments(runs []sizeRun, label string) []plotter.XYs {
	var mine []sizeRun
	for _, run := range runs {
		if run.Label == label && run.X > 0 && !slices.ContainsFunc(mine, func(m sizeRun) bool { return m.Value == run.Value }) {
			mine = append(mine, run)
		}
	}
	slices.SortStableFunc(mine, func(a, b sizeRun) int { return cmp.Compare(a.X, b.X) })
	var segs []plotter.XYs
	var cur plotter.XYs
	for _, run := range mine {
		if run.Result == nil || run.Result.TxnPerSec <= 0 {
			if len(cur) > 0 {
				segs, cur = append(segs, cur), nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: run.X, Y: run.Result.TxnPerSec})
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs
}

// plotSizeSweep draws throughput per engine (top) and Strata's hit ratios
// at automatic R (bottom) against data/memory, on a log axis. With several
// page sizes each has its own marker shape in both panels, and the bottom
// one draws each page size's automatic-R run (the first, if R=auto was
// given twice), in its own line style.
func plotSizeSweep(path, title string, runs []sizeRun) error {
	tput := plot.New()
	tput.Title.Text = title + ": throughput vs data size"
	tput.X.Label.Text = "logical data / memory limit"
	tput.Y.Label.Text = "transactions / s"
	var xs []float64
	for _, run := range runs {
		if run.X > 0 && !slices.Contains(xs, run.X) {
			xs = append(xs, run.X)
		}
	}
	if len(xs) == 0 {
		xs = []float64{1}
	}
	xMin, xMax := slices.Min(xs)/1.2, slices.Max(xs)*1.2 // log axes need a range above 0
	tput.X.Min, tput.X.Max = xMin, xMax
	tput.X.Scale, tput.X.Tick.Marker = plot.LogScale{}, valueTicks(xs)
	tput.Y.Scale, tput.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	pages := strataPageSizes(runs)
	hits := plot.New()
	hits.Title.Text = "Strata (automatic R): hit ratios and R vs data size"
	if len(pages) > 1 {
		hits.Title.Text = "Strata (automatic R, each page size): hit ratios and R vs data size"
	}
	hits.X.Label.Text = "logical data / memory limit"
	hits.Y.Label.Text = "ratio"
	hits.X.Min, hits.X.Max = xMin, xMax
	hits.X.Scale, hits.X.Tick.Marker = plot.LogScale{}, valueTicks(xs)
	hits.Y.Min, hits.Y.Max = 0, 1

	// One line per label, in the order run; a label's first run says
	// what it is (a peer, Strata at automatic or fixed R, its page size).
	var labels []sizeRun
	for _, run := range runs {
		if !slices.ContainsFunc(labels, func(l sizeRun) bool { return l.Label == run.Label }) {
			labels = append(labels, run)
		}
	}
	for i, first := range labels {
		for j, xys := range throughputSegments(runs, first.Label) {
			line, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return fmt.Errorf("plot %s: %w", first.Label, err)
			}
			line.Color, pts.Color = plotColor(i), plotColor(i)
			if first.Engine == "strata" {
				pts.Shape = pageGlyph(slices.Index(pages, first.PageSize))
			}
			if first.Engine == "strata" && first.Share >= 0 {
				// Fixed R: thin and dashed, the automatic one stands out.
				line.Width = vg.Points(0.5)
				line.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
				pts.Radius = vg.Points(1.5)
			} else {
				line.Width = vg.Points(2)
			}
			tput.Add(line, pts)
			if j == 0 {
				tput.Legend.Add(first.Label, line, pts)
			}
		}
	}
	for pi, ps := range pages {
		for i, k := range []struct{ metric, label string }{
			{"pool.hit_ratio_uncompressed", "frame hits"},
			{"pool.hit_ratio_compressed", "image hits"},
			{"pool.miss_ratio", "misses"},
			{shareMetric, "R (final)"},
		} {
			var xys plotter.XYs
			var seen []string
			for _, run := range runs {
				if run.Engine != "strata" || run.Share >= 0 || run.PageSize != ps || run.Result == nil || run.X <= 0 || slices.Contains(seen, run.Value) {
					continue
				}
				seen = append(seen, run.Value)
				if v, ok := run.Result.Metrics[k.metric]; ok {
					xys = append(xys, plotter.XY{X: run.X, Y: v})
				}
			}
			if len(xys) == 0 {
				continue
			}
			label := k.label
			if len(pages) > 1 {
				label += " " + pageSizeName(ps)
			}
			line, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return fmt.Errorf("plot %s: %w", label, err)
			}
			line.Color, pts.Color, pts.Shape = plotColor(i), plotColor(i), pageGlyph(pi)
			line.Dashes = pageDashes(pi)
			hits.Add(line, pts)
			hits.Legend.Add(label, line, pts)
		}
	}
	if tput.Y.Min <= 0 || tput.Y.Max <= tput.Y.Min {
		tput.Y.Min, tput.Y.Max = 1, 10 // nothing measured: a log axis still needs a range
	}
	tput.Legend.Top = false
	tput.Legend.Left = true
	hits.Legend.Top = true
	return saveStacked(path, 9*vg.Inch, 10*vg.Inch, tput, hits)
}

// pageGlyph is the marker of Strata's i-th page size: the plots' usual
// ring for the first.
func pageGlyph(i int) draw.GlyphDrawer {
	shapes := []draw.GlyphDrawer{draw.RingGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.CrossGlyph{}, draw.PyramidGlyph{}, draw.PlusGlyph{}, draw.BoxGlyph{}}
	return shapes[max(i, 0)%len(shapes)]
}

// pageDashes is the line style of the hit ratios at Strata's i-th page
// size: solid for the first.
func pageDashes(i int) []vg.Length {
	switch i % 3 {
	case 1:
		return []vg.Length{vg.Points(6), vg.Points(3)}
	case 2:
		return []vg.Length{vg.Points(1.5), vg.Points(2)}
	}
	return nil
}

// valueTicks marks the x axis at the sweep's data sizes. Sizes within 5%
// of a smaller one get no tick of their own: stores of several page sizes
// loaded for the same nominal size differ in the second decimal (0.25 and
// 0.252), and their labels printed over each other.
type valueTicks []float64

func (v valueTicks) Ticks(lo, hi float64) []plot.Tick {
	xs := slices.Clone(v)
	slices.Sort(xs)
	var ticks []plot.Tick
	for _, x := range xs {
		if x < lo || x > hi {
			continue
		}
		if n := len(ticks); n > 0 && x < ticks[n-1].Value*1.05 {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', 3, 64)})
	}
	return ticks
}

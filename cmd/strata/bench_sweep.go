package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/stratadb/strata/internal/bench"
)

type sweepCmdFlags struct {
	benchFlags
	param    string
	values   string
	plotPath string
	// table-size sweeps only:
	strataR        string // Strata's R values at every point
	strataCache    string // Strata's cache: "" (--cache), "fill" or a size
	strataOverhead string // what Strata's process takes beyond its cache, for "fill"
	strataPageSize string // Strata's page sizes: a load and a run per R at each
	repeat         int    // runs of each engine at each size; the median is reported
}

// sweepParams are the parameters bench sweep can vary, with their default
// values and axis labels. Those that do not change the data on disk (r,
// cache) reuse one load for every point: the runner compares what is on
// disk with what a point needs.
var sweepParams = map[string]struct {
	defaults string
	axis     string
}{
	"r":           {"0,0.1,0.2,0.3,0.5,0.7,0.9,auto", "compressed share R of the cache"},
	"cache":       {"16MiB,32MiB,64MiB,128MiB,256MiB", "cache (MiB)"},
	"codec":       {"none,lz4,zstd", "codec"},
	"page-size":   {"4KiB,8KiB,16KiB,32KiB", "page size (KiB)"},
	"fill-factor": {"50,70,90,100", "fill factor (%)"},
	"table-size":  {"0.25x,0.5x,1x,1.5x,2x,4x,8x", "logical data / memory limit"},
}

func newBenchSweepCommand() *cobra.Command {
	var f sweepCmdFlags
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Vary one parameter of a bench run and plot throughput and hit ratios against it",
		Long: `sweep runs one engine on one workload once per value of a parameter:
r (compressed share), cache, codec, page-size or fill-factor. For r and
cache the data is loaded once and reused (they do not change what is on
disk; a writing workload's changes then carry over from point to point).
It prints a table, writes the results as JSON and draws a PNG of the
throughput and of the buffer pool's hit ratios against the parameter.
The other flags are those of strata bench.

--param table-size sweeps the data size at equal memory instead: every
engine given (--engine strata,bbolt,... or all) runs at every size under
the same --mem-limit, Strata once per --strata-r value (auto and fixed R
side by side) and --strata-page-size value (each page size loads its own
copy of the data at every size), with --strata-cache fill giving Strata
a cache of the limit less --strata-overhead. Sizes are rows or multiples
of the memory limit (0.5x: logical data half the limit). The plot is
throughput per engine against data/memory, and Strata's hit ratios at
automatic R (each page size's, in its own line style and marker); the
table ends with Strata at automatic R against the best peer and the best
fixed R of the same page size, and, with several page sizes, which page
size's automatic R was fastest at each size.`,
		Example: `  strata bench sweep --param r
  strata bench sweep --param cache --values 32MiB,64MiB,128MiB,256MiB --workload oltp_point_select
  strata bench sweep --param codec --values none,lz4,zstd,deflate --device ssd
  strata bench sweep --param table-size --engine all --mem-limit 96MiB --cache 32MiB --strata-cache fill \
      --strata-r auto,0,0.25,0.5,0.75,0.95 --workload oltp_point_select --dir sizes --keep
  strata bench sweep --param table-size --engine strata,bbolt --mem-limit 96MiB --cache 32MiB --strata-cache fill \
      --strata-r auto,0.5 --strata-page-size 4KiB,16KiB --workload oltp_point_select --dir sizes --keep`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchSweep(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fl := cmd.Flags()
	f.registerRunFlags(fl)
	fl.StringVar(&f.engines, "engine", "strata", "the engine: strata, bbolt, pebble or badger (most parameters are Strata's); for table-size, a comma list or all")
	fl.StringVar(&f.workloads, "workload", defaultWorkload, "the workload: "+workloadList())
	fl.StringVar(&f.param, "param", "r", "the parameter to vary: r, cache, codec, page-size, fill-factor, table-size")
	fl.StringVar(&f.values, "values", "", "comma-separated values of the parameter (default per parameter: r "+sweepParams["r"].defaults+
		"; cache "+sweepParams["cache"].defaults+"; codec "+sweepParams["codec"].defaults+
		"; page-size "+sweepParams["page-size"].defaults+"; fill-factor "+sweepParams["fill-factor"].defaults+
		"; table-size "+sweepParams["table-size"].defaults+", rows or multiples of --mem-limit)")
	fl.StringVar(&f.strataR, "strata-r", "", "table-size: Strata's R at every point, comma-separated (auto, or numbers in [0, 1]; default --r)")
	fl.StringVar(&f.strataCache, "strata-cache", "", "table-size: Strata's cache: a size, or fill (the memory limit less --strata-overhead); default --cache")
	fl.StringVar(&f.strataPageSize, "strata-page-size", "", "table-size: Strata's page sizes, comma-separated (powers of two, 4KiB..64KiB): a load per data size and page size, a run per page size and --strata-r value (default --page-size)")
	fl.StringVar(&f.strataOverhead, "strata-overhead", "", "table-size: memory Strata's process uses beyond its cache (Go runtime, store and WAL buffers), for --strata-cache fill (default "+readOverhead+", or "+writeOverhead+" for a workload that writes)")
	fl.IntVar(&f.repeat, "repeat", 1, "table-size: runs of each engine at each size, in alternating order; the table and plot give each one's median run")
	fl.StringVar(&f.plotPath, "plot", "", "PNG to draw (default bench-sweep-<param>.png)")
	fl.StringVar(&f.jsonPath, "json", "", "JSON results file (default bench-sweep-<param>.json)")
	return cmd
}

// benchSweepPoint is one value of the swept parameter and its result.
type benchSweepPoint struct {
	Value  string        `json:"value"`
	X      float64       `json:"x"` // on the plot's axis; -1 for r = auto
	Result *bench.Result `json:"result,omitempty"`
	Error  string        `json:"error,omitempty"`
}

type benchSweepReport struct {
	Host   hostInfo          `json:"host"`
	Param  string            `json:"param"`
	Points []benchSweepPoint `json:"points"`
}

func runBenchSweep(ctx context.Context, stdout, stderr io.Writer, f sweepCmdFlags) error {
	param, ok := sweepParams[f.param]
	if !ok {
		return fmt.Errorf("--param %q: want r, cache, codec, page-size, fill-factor or table-size", f.param)
	}
	if f.param == "table-size" {
		return runSizeSweep(ctx, stdout, stderr, f)
	}
	if f.repeat > 1 {
		return fmt.Errorf("--repeat: only for --param table-size")
	}
	if f.strataPageSize != "" {
		return fmt.Errorf("--strata-page-size: only for --param table-size (--param page-size sweeps the page size; --page-size sets it)")
	}
	tmpl, err := f.specTemplate()
	if err != nil {
		return err
	}
	engines, err := parseEngines(f.engines)
	if err != nil || len(engines) != 1 {
		return fmt.Errorf("--engine %q: want exactly one of %s", f.engines, strings.Join(allEngines, ", "))
	}
	workloads, err := parseWorkloads(f.workloads)
	if err != nil || len(workloads) != 1 {
		return fmt.Errorf("--workload %q: want exactly one of %s", f.workloads, workloadList())
	}
	tmpl.Engine, tmpl.Workload = engines[0], workloads[0]
	values := splitList(f.values)
	if len(values) == 0 {
		values = splitList(param.defaults)
	}
	// Validate every value before the first run rather than fail midway.
	specs := make([]bench.RunSpec, len(values))
	points := make([]benchSweepPoint, len(values))
	for i, v := range values {
		specs[i] = tmpl
		x, err := applySweepValue(&specs[i], f.param, v, i)
		if err != nil {
			return fmt.Errorf("--values: %w", err)
		}
		points[i] = benchSweepPoint{Value: v, X: x}
	}
	plotPath, jsonPath := f.plotPath, f.jsonPath
	if plotPath == "" {
		plotPath = "bench-sweep-" + f.param + ".png"
	}
	if jsonPath == "" {
		jsonPath = "bench-sweep-" + f.param + ".json"
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := newBenchRunner(stderr, f.benchFlags)
	if err != nil {
		return err
	}
	defer r.close()
	fmt.Fprintf(stderr, "strata bench sweep: %s on %s, %s = %s; work directory %s\n",
		tmpl.Engine, tmpl.Workload, f.param, strings.Join(values, ", "), r.workDir)
	// Every point runs in the engine's directory: a parameter that does
	// not change the data on disk (R, cache size) reuses the first
	// point's load; one that does (codec, page size, fill factor) makes
	// the child reload.
	failed := 0
	for i := range points {
		res, err := r.runReusing(ctx, specs[i])
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			failed++
			points[i].Error = err.Error()
			fmt.Fprintf(stderr, "%s = %s: %v\n", f.param, points[i].Value, err)
			continue
		}
		points[i].Result = res
	}

	if err := writeSweepTable(stdout, f.param, points); err != nil {
		return err
	}
	b, err := json.MarshalIndent(benchSweepReport{Host: currentHost(), Param: f.param, Points: points}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(jsonPath, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	title := fmt.Sprintf("%s, %s (%s, %d rows)", tmpl.Engine, tmpl.Workload, tmpl.Dataset, tmpl.TableSize)
	if err := plotBenchSweep(plotPath, title, f.param, param.axis, points); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	fmt.Fprintf(stderr, "results written to %s, plot to %s\n", jsonPath, plotPath)
	if failed > 0 {
		return fmt.Errorf("%d of %d points failed (see above)", failed, len(points))
	}
	return nil
}

// applySweepValue sets the swept parameter of spec to value and returns its
// position on the plot's x axis (the index i for a codec, which has none).
func applySweepValue(spec *bench.RunSpec, param, value string, i int) (float64, error) {
	switch param {
	case "r":
		r, err := parseShare(value)
		if err != nil {
			return 0, err
		}
		spec.Config.CompressedShare = r
		return r, nil
	case "cache":
		b, err := parseSize(value)
		if err != nil {
			return 0, err
		}
		if b <= 0 {
			return 0, fmt.Errorf("cache %q: must be positive", value)
		}
		spec.Config.CacheBytes = b
		return float64(b) / (1 << 20), nil
	case "codec":
		spec.Config.Codec = value
		return float64(i), nil
	case "page-size":
		b, err := parseSize(value)
		if err != nil {
			return 0, err
		}
		spec.Config.PageSize = int(b)
		return float64(b) / 1024, nil
	case "fill-factor":
		ff, err := strconv.Atoi(value)
		if err != nil || ff < 10 || ff > 100 {
			return 0, fmt.Errorf("fill factor %q: want 10..100", value)
		}
		spec.Config.FillFactor = ff
		return float64(ff), nil
	}
	return 0, fmt.Errorf("unknown parameter %q", param)
}

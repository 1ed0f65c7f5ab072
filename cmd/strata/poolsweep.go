package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/stratadb/strata/internal/poolbench"
)

type sweepFlags struct {
	scenarios  string
	dists      string
	shares     string
	cache      int64
	cacheFlag  string
	dataFactor float64
	warmup     time.Duration
	autoWarmup time.Duration
	duration   time.Duration
	threads    int
	outDir     string
	logPath    string
	latency    time.Duration
}

func newPoolSweepCommand() *cobra.Command {
	var f sweepFlags
	cmd := &cobra.Command{
		Use:   "pool-sweep",
		Short: "Sweep the buffer pool's compressed share R on simulated devices and plot throughput",
		Long: `pool-sweep runs random point reads of sysbench pages through the buffer pool
at each fixed compressed share R and with automatic tuning, for the two
scenarios of document 000 (a fast device with a slow codec, a slow device
with a fast codec), with uniform and skewed (80/20) keys. Devices are
simulated (injected latency): results are labelled so. It prints a table
with the paper model's prediction and writes a PNG plot per scenario.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPoolSweep(cmd.OutOrStdout(), f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scenarios, "scenario", "nvme+deflate,hdd+lz4", "scenarios: nvme+deflate, hdd+lz4")
	fl.StringVar(&f.dists, "dist", "uniform,skewed", "key distributions: uniform, skewed (80% of reads to 20% of pages)")
	fl.StringVar(&f.shares, "shares", "0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,0.99,auto", "compressed shares to run; auto = tuned online")
	fl.StringVar(&f.cacheFlag, "cache", "4MiB", "buffer pool budget (e.g. 4MiB, or bytes)")
	fl.Float64Var(&f.dataFactor, "data-factor", 8, "data size as a multiple of the cache size (uncompressed)")
	fl.DurationVar(&f.warmup, "warmup", 3*time.Second, "warm-up per fixed-R run (nvme; ×4 on hdd)")
	fl.DurationVar(&f.autoWarmup, "auto-warmup", 8*time.Second, "warm-up of the auto run, to let R settle (nvme; ×2 on hdd)")
	fl.DurationVar(&f.duration, "duration", 4*time.Second, "measured time per run (nvme; ×2 on hdd)")
	fl.IntVar(&f.threads, "threads", 1, "reader goroutines (keep ≤ GOMAXPROCS: the simulated device spins for sub-ms waits)")
	fl.StringVar(&f.outDir, "out", ".", "directory for the PNG plots and rsweep.json (made if missing)")
	fl.DurationVar(&f.latency, "read-latency", 0, "the simulated device's read latency instead of each scenario's (0: the scenario's), e.g. to put T_disk_read in another host's ratio to T_decom; 1ms or more scales the warm-ups and durations as hdd's")
	fl.StringVar(&f.logPath, "log", "", "write the controller's decisions and trials (auto runs, JSON lines at debug level) to this file")
	return cmd
}

type sweepPoint struct {
	Scenario, Dist string
	Share          float64 // −1 for auto
	FinalShare     float64
	OpsPerSec      float64
	HitU, HitC     float64
	Miss           float64
	ReadLatencyUS  float64 // the simulated device's (--read-latency or the scenario's)
	TDiskUS        float64
	TDecomUS       float64
	TCompUS        float64
	ModelTReadUS   float64 // model T_read at this R (fixed runs)
	ModelOptimum   float64 // model's optimal R (exclusive tiers)
	InnoDBOptimum  float64 // model's optimal R with InnoDB's R ≥ α/(1+α)
}

func scenarioByName(name string) (poolbench.Scenario, error) {
	switch name {
	case poolbench.FastDeviceSlowCodec.Name:
		return poolbench.FastDeviceSlowCodec, nil
	case poolbench.SlowDeviceFastCodec.Name:
		return poolbench.SlowDeviceFastCodec, nil
	}
	return poolbench.Scenario{}, fmt.Errorf("unknown scenario %q", name)
}

func runPoolSweep(out io.Writer, f sweepFlags) (err error) {
	if f.latency < 0 {
		return fmt.Errorf("--read-latency %v is negative", f.latency)
	}
	if f.cache, err = parseSize(f.cacheFlag); err != nil {
		return fmt.Errorf("--cache: %w", err)
	}
	if f.cache <= 0 || f.threads <= 0 || f.duration <= 0 || f.dataFactor <= 0 {
		return fmt.Errorf("--cache %d, --threads %d, --duration %v, --data-factor %v: want all positive", f.cache, f.threads, f.duration, f.dataFactor)
	}
	if err := os.MkdirAll(f.outDir, 0o755); err != nil {
		return err
	}
	var logger *slog.Logger // the auto runs' controller trace (--log)
	if f.logPath != "" {
		if err := os.MkdirAll(filepath.Dir(f.logPath), 0o755); err != nil {
			return err
		}
		lf, err := os.Create(f.logPath)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := lf.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("--log: %w", cerr)
			}
		}()
		logger = slog.New(slog.NewJSONHandler(lf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	var points []sweepPoint
	for _, name := range strings.Split(f.scenarios, ",") {
		sc, err := scenarioByName(strings.TrimSpace(name))
		if err != nil {
			return err
		}
		if f.latency > 0 {
			sc.Device.ReadLatency = f.latency
		}
		slow := sc.Device.ReadLatency >= time.Millisecond
		warm, autoWarm, dur := f.warmup, f.autoWarmup, f.duration
		if slow {
			warm, autoWarm, dur = 4*warm, 2*autoWarm, 2*dur
		}
		pages := int(f.dataFactor * float64(f.cache) / float64(sc.PageSize))
		ds, err := poolbench.Build(sc, pages, 1)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "\n### %s (simulated device: %s, %v read latency, queue depth %d; codec %s; r = %.2f)\n\n",
			sc.Name, sc.Device.Name, sc.Device.ReadLatency, sc.Device.QueueDepth, sc.Codec, ds.Stats.CompressionRatio)
		fmt.Fprintf(out, "cache %d MiB, data %d pages = %.0f MiB uncompressed (%.1f× the cache), %d reader(s)\n\n",
			f.cache>>20, ds.Pages, float64(ds.Stats.LogicalBytes)/(1<<20), float64(ds.Stats.LogicalBytes)/float64(f.cache), f.threads)
		fmt.Fprintln(out, "| keys | R | ops/s | vs R=0.9 | H_u | H_c | miss | T_disk µs | T_decom µs | T_comp µs | model T_read µs |")
		fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|---|---|")
		for _, dist := range strings.Split(f.dists, ",") {
			dist = strings.TrimSpace(dist)
			var at09 float64
			var rows []sweepPoint
			for _, sh := range strings.Split(f.shares, ",") {
				sh = strings.TrimSpace(sh)
				share := -1.0
				w := autoWarm
				if sh != "auto" {
					if share, err = strconv.ParseFloat(sh, 64); err != nil {
						return fmt.Errorf("bad share %q", sh)
					}
					w = warm
				}
				var runLog *slog.Logger
				if logger != nil && share < 0 {
					runLog = logger.With("scenario", sc.Name, "dist", dist, "read_latency", sc.Device.ReadLatency)
					runLog.Info("pool-sweep: auto run starts", "warmup", w, "duration", dur)
				}
				res, err := poolbench.Run(ds, poolbench.Config{CacheSize: f.cache, Share: share, Skewed: dist == "skewed",
					Threads: f.threads, Warmup: w, Duration: dur, Partitions: 1, Seed: 7, Logger: runLog})
				if err != nil {
					return err
				}
				m := poolbench.Model(ds, f.cache, res)
				pt := sweepPoint{Scenario: sc.Name, Dist: dist, Share: share, FinalShare: res.Share, OpsPerSec: res.OpsPerSec,
					ReadLatencyUS: us(sc.Device.ReadLatency),
					HitU:          res.HitRatioU, HitC: res.HitRatioC, Miss: res.MissRatio,
					TDiskUS: us(res.Pool.TDiskRead), TDecomUS: us(res.Pool.TDecom), TCompUS: us(res.Pool.TComp),
					ModelOptimum: m.OptimalShare()}
				m.Exclusive = false
				pt.InnoDBOptimum = m.OptimalShare()
				m.Exclusive = true
				if share >= 0 {
					pt.ModelTReadUS = m.TRead(share) * 1e6
				}
				if share == 0.9 {
					at09 = res.OpsPerSec
				}
				rows = append(rows, pt)
			}
			for _, pt := range rows {
				label := fmt.Sprintf("%.2f", pt.Share)
				if pt.Share < 0 {
					label = fmt.Sprintf("auto (→%.2f)", pt.FinalShare)
				}
				vs := "–"
				if at09 > 0 {
					vs = fmt.Sprintf("%+.0f%%", 100*(pt.OpsPerSec/at09-1))
				}
				model := "–"
				if pt.ModelTReadUS > 0 {
					model = fmt.Sprintf("%.1f", pt.ModelTReadUS)
				}
				fmt.Fprintf(out, "| %s | %s | %.0f | %s | %.3f | %.3f | %.3f | %.1f | %.1f | %.1f | %s |\n",
					dist, label, pt.OpsPerSec, vs, pt.HitU, pt.HitC, pt.Miss, pt.TDiskUS, pt.TDecomUS, pt.TCompUS, model)
			}
			best := rows[0]
			for _, pt := range rows {
				if pt.Share >= 0 && pt.OpsPerSec > best.OpsPerSec {
					best = pt
				}
			}
			auto := rows[len(rows)-1]
			fmt.Fprintf(out, "| %s | best fixed R = %.2f; auto at %.1f%% of it; model optimum R = %.2f (InnoDB constraint: %.2f) | | | | | | | | | |\n",
				dist, best.Share, 100*auto.OpsPerSec/best.OpsPerSec, auto.ModelOptimum, auto.InnoDBOptimum)
			points = append(points, rows...)
		}
		if err := plotSweep(filepath.Join(f.outDir, "rsweep-"+strings.ReplaceAll(sc.Name, "+", "-")+".png"), sc.Name, points); err != nil {
			return err
		}
	}
	b, _ := json.MarshalIndent(points, "", "  ")
	return os.WriteFile(filepath.Join(f.outDir, "rsweep.json"), b, 0o644)
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// plotSweep draws throughput against R for one scenario: a line per key
// distribution for the fixed shares, a dashed line at the auto throughput,
// and the model's prediction (1/T_read, scaled to the measured best).
func plotSweep(path, scenario string, points []sweepPoint) error {
	p := plot.New()
	p.Title.Text = scenario + " (simulated device): read throughput vs compressed share R"
	p.X.Label.Text = "R (compressed share of the budget)"
	p.Y.Label.Text = "point reads / s"
	p.Legend.Top = false // bottom right: the lines are high on the plot
	colors := 0
	for _, dist := range []string{"uniform", "skewed"} {
		var fixed plotter.XYs
		var auto float64
		var model plotter.XYs
		best := 0.0
		for _, pt := range points {
			if pt.Scenario != scenario || pt.Dist != dist {
				continue
			}
			if pt.Share < 0 {
				auto = pt.OpsPerSec
				continue
			}
			fixed = append(fixed, plotter.XY{X: pt.Share, Y: pt.OpsPerSec})
			best = math.Max(best, pt.OpsPerSec)
			model = append(model, plotter.XY{X: pt.Share, Y: 1 / pt.ModelTReadUS})
		}
		if len(fixed) == 0 {
			continue
		}
		// Scale the model's 1/T_read to the measured best, for shape only.
		mx := 0.0
		for _, m := range model {
			mx = math.Max(mx, m.Y)
		}
		for i := range model {
			model[i].Y *= best / mx
		}
		if err := addLinePoints(p, fixed, colors, dist+" fixed R"); err != nil {
			return err
		}
		if auto > 0 {
			if err := addLevel(p, auto, 0, 1, colors, dist+" auto"); err != nil {
				return err
			}
		}
		ml, _ := plotter.NewLine(model)
		ml.Color = plotColor(colors)
		ml.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
		p.Add(ml)
		p.Legend.Add(dist+" model (scaled)", ml)
		colors++
	}
	p.Y.Min = 0
	return p.Save(9*vg.Inch, 5*vg.Inch, path)
}

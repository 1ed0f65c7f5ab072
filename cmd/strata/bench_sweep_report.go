package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// hitRatioKeys returns the metrics to plot as hit ratios: the engines name
// them with "hit" (or "miss"), and only ratios ([0, 1] everywhere) share an
// axis; counters such as pool.hits_uncompressed are left out.
func hitRatioKeys(points []benchSweepPoint) []string {
	var keys []string
	for _, pt := range points {
		if pt.Result == nil {
			continue
		}
		for k := range pt.Result.Metrics {
			if (strings.Contains(k, "hit") || strings.Contains(k, "miss")) && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	keys = slices.DeleteFunc(keys, func(k string) bool {
		for _, pt := range points {
			if pt.Result == nil {
				continue
			}
			if v, ok := pt.Result.Metrics[k]; ok && (v < 0 || v > 1 || math.IsNaN(v)) {
				return true
			}
		}
		return false
	})
	slices.Sort(keys)
	return keys
}

// shareMetric is the compressed share R the buffer pool ended with.
const shareMetric = "pool.share_r"

func writeSweepTable(w io.Writer, param string, points []benchSweepPoint) error {
	keys := hitRatioKeys(points)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{param, "txn/s", "ops/s", "p50", "p99"}
	for _, k := range keys {
		header = append(header, strings.TrimPrefix(k, "pool."))
	}
	header = append(header, "final R", "load", "on disk", "cgroup peak")
	fmt.Fprintln(w)
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, pt := range points {
		r := pt.Result
		if r == nil {
			fmt.Fprintf(tw, "%s\tfailed%s\t\n", pt.Value, strings.Repeat("\t", len(header)-2))
			continue
		}
		row := []string{pt.Value, fmt.Sprintf("%.0f", r.TxnPerSec), fmt.Sprintf("%.0f", r.OpsPerSec),
			formatMicros(r.P50us), formatMicros(r.P99us)}
		for _, k := range keys {
			if v, ok := r.Metrics[k]; ok {
				row = append(row, fmt.Sprintf("%.3f", v))
			} else {
				row = append(row, "–")
			}
		}
		share := "–"
		if v, ok := r.Metrics[shareMetric]; ok {
			share = fmt.Sprintf("%.2f", v)
		}
		row = append(row, share, fmt.Sprintf("%.1f s", r.LoadSeconds), formatSize(r.DiskBytes), cgroupPeak(r))
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var outcomes []runOutcome
	for _, pt := range points {
		o := runOutcome{Engine: param + " = " + pt.Value, Result: pt.Result}
		if pt.Error != "" {
			o.Err = fmt.Errorf("%s", pt.Error)
		}
		outcomes = append(outcomes, o)
	}
	if param == "r" {
		writeSweepModel(w, points)
	}
	writeNotes(w, outcomes)
	return nil
}

// sweepSeries is one line of a sweep plot: a value of each point's result.
type sweepSeries struct {
	p      *plot.Plot
	label  string
	metric func(pt benchSweepPoint) (float64, bool)
}

// plotBenchSweep draws throughput (top) and hit ratios (bottom) against
// the parameter. The automatic R, which has no place on the R axis, is a
// dashed level across it; codecs are categories.
func plotBenchSweep(path, title, param, axis string, points []benchSweepPoint) error {
	tput := plot.New()
	tput.Title.Text = title + ": throughput vs " + axis
	tput.X.Label.Text = axis
	tput.Y.Label.Text = "transactions / s"
	hits := plot.New()
	hits.Title.Text = "hit ratios vs " + axis
	hits.X.Label.Text = axis
	hits.Y.Label.Text = "ratio"
	hits.Y.Min, hits.Y.Max = 0, 1

	series := []sweepSeries{{tput, "txn/s", func(pt benchSweepPoint) (float64, bool) { return pt.Result.TxnPerSec, true }}}
	for _, k := range hitRatioKeys(points) {
		series = append(series, sweepSeries{hits, strings.TrimPrefix(k, "pool."), func(pt benchSweepPoint) (float64, bool) {
			v, ok := pt.Result.Metrics[k]
			return v, ok
		}})
	}
	xMin, xMax := math.Inf(1), math.Inf(-1)
	for _, pt := range points {
		if pt.X >= 0 || param != "r" {
			xMin, xMax = math.Min(xMin, pt.X), math.Max(xMax, pt.X)
		}
	}
	if xMin > xMax { // only r = auto
		xMin, xMax = 0, 1
	}
	colorOf := map[*plot.Plot]int{}
	for _, s := range series {
		var xys plotter.XYs
		level, haveLevel := 0.0, false
		for _, pt := range points {
			if pt.Result == nil {
				continue
			}
			v, ok := s.metric(pt)
			if !ok {
				continue
			}
			if param == "r" && pt.X < 0 {
				level, haveLevel = v, true
				continue
			}
			xys = append(xys, plotter.XY{X: pt.X, Y: v})
		}
		i := colorOf[s.p]
		colorOf[s.p]++
		if len(xys) > 0 {
			if err := addLinePoints(s.p, xys, i, s.label); err != nil {
				return err
			}
		}
		if haveLevel {
			if err := addLevel(s.p, level, xMin, xMax, i, s.label+" (auto R)"); err != nil {
				return err
			}
		}
	}
	if param == "codec" {
		names := make([]string, len(points))
		for i, pt := range points {
			names[i] = pt.Value
		}
		tput.NominalX(names...)
		hits.NominalX(names...)
	}
	if param == "r" {
		if err := addModelLine(tput, points, colorOf[tput]+1); err != nil {
			return err
		}
	}
	tput.Y.Min = 0
	tput.Y.Max *= 1.05 // room above an auto-R level at the top
	tput.Legend.Top = false
	hits.Legend.Top = false
	return saveStacked(path, 9*vg.Inch, 9*vg.Inch, tput, hits)
}

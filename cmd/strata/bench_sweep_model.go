package main

import (
	"fmt"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/stratadb/strata/internal/bufferpool"
)

// sweepModel fits document 000's cost model (bufferpool.Model, exclusive
// tiers) to an R sweep of Strata: α and β from the store's sizes and the
// cache, T_decom and T_disk_read as the medians of what the fixed-R points
// measured. ok is false when the points lack those metrics (another engine,
// or no disk reads at all).
func sweepModel(points []benchSweepPoint) (m bufferpool.Model, ok bool) {
	var decom, disk []float64
	var logical, stored, cache float64
	for _, pt := range points {
		r := pt.Result
		if r == nil || pt.X < 0 {
			continue
		}
		if v := r.Metrics["pool.t_decompress_us"]; v > 0 {
			decom = append(decom, v)
		}
		if v := r.Metrics["pool.t_disk_read_us"]; v > 0 {
			disk = append(disk, v)
		}
		logical, stored = r.Metrics["store.logical_bytes"], r.Metrics["store.stored_bytes"]
		cache = float64(r.Spec.Config.CacheBytes)
	}
	if len(decom) == 0 || len(disk) == 0 || logical <= 0 || stored <= 0 || cache <= 0 {
		return m, false
	}
	return bufferpool.Model{
		Alpha:     math.Min(1, stored/logical),
		Beta:      cache / logical,
		TDecom:    median(decom),
		TDiskRead: median(disk),
		Exclusive: true,
	}, true
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// writeSweepModel states the fitted model and its optimum under an R
// sweep's table.
func writeSweepModel(w io.Writer, points []benchSweepPoint) {
	m, ok := sweepModel(points)
	if !ok {
		return
	}
	fmt.Fprintf(w, "  model (document 000, eq. 9, exclusive tiers): α = %.3f (r = %.2f), β = %.3f, T_decom = %.1f µs, T_disk_read = %.1f µs (medians of the fixed-R points); optimum R = %.2f\n",
		m.Alpha, 1/m.Alpha, m.Beta, m.TDecom, m.TDiskRead, m.OptimalShare())
}

// addModelLine draws the model's page-read rate 1/T_read(R), scaled so its
// maximum equals the best measured throughput: the model predicts the
// shape (where the optimum lies), not transactions per second.
func addModelLine(p *plot.Plot, points []benchSweepPoint, i int) error {
	m, ok := sweepModel(points)
	if !ok {
		return nil
	}
	best := 0.0
	for _, pt := range points {
		if pt.Result != nil {
			best = math.Max(best, pt.Result.TxnPerSec)
		}
	}
	var xys plotter.XYs
	top := 0.0
	for k := 0; k <= 100; k++ {
		R := float64(k) / 100
		t := m.TRead(R)
		if t <= 0 {
			// Every access hits an uncompressed frame at this R: the
			// model's rate is unbounded, so there is no shape to scale.
			p.Legend.Add(fmt.Sprintf("model: data fits uncompressed at R = %.2f (optimum R = %.2f)", R, m.OptimalShare()))
			return nil
		}
		y := 1 / t
		top = math.Max(top, y)
		xys = append(xys, plotter.XY{X: R, Y: y})
	}
	for k := range xys {
		xys[k].Y *= best / top
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("plot model: %w", err)
	}
	l.Color = plotColor(i)
	p.Add(l)
	p.Legend.Add(fmt.Sprintf("model 1/T_read (scaled; optimum R = %.2f)", m.OptimalShare()), l)
	return nil
}

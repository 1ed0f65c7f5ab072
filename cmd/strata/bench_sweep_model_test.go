package main

import (
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/internal/bench"
)

func rSweepPoint(value string, x, txn, cache, logical, stored float64) benchSweepPoint {
	res := &bench.Result{TxnPerSec: txn, Metrics: map[string]float64{
		"pool.t_decompress_us": 50, "pool.t_disk_read_us": 200,
		"store.logical_bytes": logical, "store.stored_bytes": stored,
		"pool.hit_ratio_uncompressed": 0.9,
	}}
	res.Spec.Config.CacheBytes = int64(cache)
	return benchSweepPoint{Value: value, X: x, Result: res}
}

// TestRSweepPlotWhenDataFitsUncompressed: a cache as large as the data
// makes the model's T_read zero at R = 0 (every access an uncompressed
// hit); the plot must still be drawn (CI failed on "NaN data point").
func TestRSweepPlotWhenDataFitsUncompressed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cache float64
	}{{"fits", 4 << 20}, {"larger", 8 << 20}, {"smaller", 1 << 20}} {
		points := []benchSweepPoint{
			rSweepPoint("0", 0, 6868, tc.cache, 4<<20, 2<<20),
			rSweepPoint("0.5", 0.5, 2691, tc.cache, 4<<20, 2<<20),
			rSweepPoint("auto", -1, 2810, tc.cache, 4<<20, 2<<20),
		}
		if err := plotBenchSweep(filepath.Join(t.TempDir(), "r.png"), "t", "r", "R", points); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

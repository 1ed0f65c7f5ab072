package strata_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stratadb/strata"
	"github.com/stratadb/strata/internal/bench"
)

// BenchmarkLoadPeakRSS loads the bench's data sets in large batches and
// reports the process's peak RSS during the load beside the bound
// docs/KVSTORE.md states (CacheSize + 28 MiB + 3 × the largest batch). Run
// it alone, one iteration, so the peak is the load's:
//
//	go test -run '^$' -bench LoadPeakRSS -benchtime 1x .
func BenchmarkLoadPeakRSS(b *testing.B) {
	for _, c := range []struct {
		dataset   string
		cacheMiB  int64
		rows      int
		batchRows int
	}{
		{"events", 64, 150000, 10000},
		{"sysbench", 32, 150000, 10000},
		{"sysbench", 32, 150000, 1000},
	} {
		b.Run(fmt.Sprintf("%s/cache=%dMiB/batch=%d", c.dataset, c.cacheMiB, c.batchRows), func(b *testing.B) {
			for range b.N {
				ds, err := bench.NewDataset(c.dataset, 1, int64(c.rows))
				if err != nil {
					b.Fatal(err)
				}
				db, err := strata.Open(b.TempDir(), &strata.Options{CacheSize: c.cacheMiB << 20})
				if err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
					b.Skipf("cannot reset the peak RSS: %v", err)
				}
				var k, v []byte
				largest := 0
				for first := 0; first < c.rows; first += c.batchRows {
					batch := db.NewBatch()
					size := 0
					for id := first; id < first+c.batchRows; id++ {
						k = ds.AppendKey(k[:0], uint64(id))
						v = ds.AppendValue(v[:0], uint64(id), 0)
						size += len(k) + len(v)
						if err := batch.Set(k, v); err != nil {
							b.Fatal(err)
						}
					}
					largest = max(largest, size)
					if err := batch.Commit(nil); err != nil {
						b.Fatal(err)
					}
				}
				peak := vmHWM(b)
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
				bound := c.cacheMiB<<20 + 28<<20 + 3*int64(largest)
				b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
				b.ReportMetric(float64(largest)/(1<<20), "batch-MiB")
				b.ReportMetric(float64(peak)/float64(bound), "peak/bound")
			}
		})
	}
}

func vmHWM(b *testing.B) int64 {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip(err)
	}
	for _, l := range strings.Split(string(st), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	b.Skip("no VmHWM")
	return 0
}

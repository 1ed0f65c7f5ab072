package strataengine

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/bench"
	"github.com/stratadb/strata/internal/pagestore"
)

// TestDefaultPageSizeMatches: internal/bench's copy of Strata's default
// page size (it does not import the page store) is the page store's.
func TestDefaultPageSizeMatches(t *testing.T) {
	if bench.StrataDefaultPageSize != pagestore.DefaultPageSize {
		t.Fatalf("bench.StrataDefaultPageSize %d, pagestore.DefaultPageSize %d", bench.StrataDefaultPageSize, pagestore.DefaultPageSize)
	}
}

// testSpec is internal/bench's test spec: a small sysbench table, two
// threads, a short run.
func testSpec(t *testing.T, engine, workload string) bench.RunSpec {
	t.Helper()
	return bench.RunSpec{
		Engine:    engine,
		Config:    bench.Config{Dir: filepath.Join(t.TempDir(), "bench"), CacheBytes: 8 << 20, CompressedShare: -1},
		Workload:  workload,
		Dataset:   "sysbench",
		TableSize: 2000,
		Seed:      42,
		Threads:   2,
		Duration:  100 * time.Millisecond,
		Warmup:    20 * time.Millisecond,
	}
}

// checkSane checks what every successful run's result must hold.
func checkSane(t *testing.T, res *bench.Result) {
	t.Helper()
	if res.Txns <= 0 || res.Ops < res.Txns {
		t.Errorf("txns %d, ops %d: want txns > 0 and ops ≥ txns", res.Txns, res.Ops)
	}
	if res.Seconds <= 0 || res.TxnPerSec <= 0 || res.OpsPerSec < res.TxnPerSec {
		t.Errorf("seconds %v, txn/s %v, ops/s %v", res.Seconds, res.TxnPerSec, res.OpsPerSec)
	}
	if !(res.P50us > 0 && res.P50us <= res.P95us && res.P95us <= res.P99us) {
		t.Errorf("latency percentiles p50 %v p95 %v p99 %v: want 0 < p50 ≤ p95 ≤ p99", res.P50us, res.P95us, res.P99us)
	}
	if res.DiskBytes <= 0 || res.LogicalBytes <= 0 || res.PeakRSSBytes <= 0 || res.Describe == "" {
		t.Errorf("disk bytes %d, logical bytes %d, peak RSS %d, describe %q: want all set", res.DiskBytes, res.LogicalBytes, res.PeakRSSBytes, res.Describe)
	}
}

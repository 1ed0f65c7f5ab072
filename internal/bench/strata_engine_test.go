package bench

import (
	"context"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/pagestore"
)

func strataSpec(t *testing.T, workload string) RunSpec {
	spec := testSpec(t, "strata", workload)
	spec.Config.CacheBytes = 4 << 20
	spec.Config.PageSize = 4096
	spec.Duration = 150 * time.Millisecond
	spec.Warmup = 0
	return spec
}

func TestStrataEveryWorkload(t *testing.T) {
	for _, name := range Workloads() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res, err := Run(context.Background(), strataSpec(t, name), nil)
			if err != nil {
				t.Fatal(err)
			}
			checkSane(t, res)
			for _, k := range []string{"pool.share_r", "pool.hit_ratio_uncompressed", "store.compression_ratio"} {
				if _, ok := res.Metrics[k]; !ok {
					t.Errorf("metric %s missing (have %v)", k, res.Metrics)
				}
			}
			if r := res.Metrics["store.compression_ratio"]; r <= 1 {
				t.Errorf("compression ratio %v", r)
			}
		})
	}
}

func TestStrataEventsDataset(t *testing.T) {
	spec := strataSpec(t, "ycsb_a")
	spec.Dataset = "events"
	spec.Config.Codec = "lz4"
	spec.Config.CompressedShare = 0.3
	spec.Config.FillFactor = 90
	res, err := Run(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkSane(t, res)
	for _, want := range []string{"codec lz4", "4 KiB pages", "R fixed 0.30", "fill factor 90", "direct I/O off"} {
		if !strings.Contains(res.Describe, want) {
			t.Errorf("describe %q lacks %q", res.Describe, want)
		}
	}
	// Values are JSON of ~800 bytes on 4 KiB pages: the data compresses.
	if res.DiskBytes >= res.LogicalBytes {
		t.Errorf("disk %d bytes for %d logical", res.DiskBytes, res.LogicalBytes)
	}
}

func TestStrataSimulatedDevice(t *testing.T) {
	spec := strataSpec(t, "oltp_point_select")
	spec.TableSize = 500
	spec.Config.Device = "nvme"
	res, err := Run(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "simulated device: nvme (injected latency)") {
		t.Errorf("notes %q lack the simulated device", res.Notes)
	}
	if !strings.Contains(res.Describe, "simulated nvme") || !strings.Contains(res.Describe, "R auto") {
		t.Errorf("describe %q", res.Describe)
	}
}

// TestStrataGoMemLimitFollowsMetadata: with a GOMEMLIMIT set, the engine
// raises it by the pool's metadata (part of the cache, on the Go heap),
// gives the old value back at Close, and a second Close is harmless.
func TestStrataGoMemLimitFollowsMetadata(t *testing.T) {
	const base = 1 << 30
	old := debug.SetMemoryLimit(base)
	defer debug.SetMemoryLimit(old)
	cfg := strataSpec(t, "oltp_point_select").Config
	cfg.Dir = t.TempDir()
	eng, _, err := openStrata(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := eng.(*strataEngine)
	meta := e.db.Stats().Pool.MetaBytes
	if meta <= 0 {
		t.Fatalf("pool metadata %d bytes", meta)
	}
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) < base+meta && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got < base+meta {
		t.Errorf("GOMEMLIMIT %d, want at least %d + %d of metadata", got, int64(base), meta)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != base {
		t.Errorf("GOMEMLIMIT %d after Close, want %d back", got, int64(base))
	}
	if err := eng.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestLoadMarkerResolvesDefaultPageSize: a Strata load asked without a page
// size is marked with the default it got, so a load made under another
// default (its marker says 0) is not reused as this one's, while the same
// request, or the same page size asked explicitly, reuses it.
func TestLoadMarkerResolvesDefaultPageSize(t *testing.T) {
	spec := testSpec(t, "strata", "oltp_point_select")
	m := markerFor(spec)
	if m.PageSize != pagestore.DefaultPageSize {
		t.Fatalf("marker page size %d, want the default %d", m.PageSize, pagestore.DefaultPageSize)
	}
	m.NextID = uint64(m.TableSize)
	if !m.sameData(spec) {
		t.Error("the same request does not reuse its load")
	}
	explicit := spec
	explicit.Config.PageSize = pagestore.DefaultPageSize
	if !m.sameData(explicit) {
		t.Error("the default page size asked explicitly does not reuse the load")
	}
	old := m
	old.PageSize = 0 // a load made when the default was another size
	if old.sameData(spec) {
		t.Error("a load marked with page size 0 (an earlier default) is reused")
	}
	peer := testSpec(t, "bbolt", "oltp_point_select")
	if got := markerFor(peer).PageSize; got != 0 {
		t.Errorf("bbolt's marker page size %d, want 0", got)
	}
}

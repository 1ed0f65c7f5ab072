package bench

import (
	"context"
	"strings"
	"testing"
	"time"
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

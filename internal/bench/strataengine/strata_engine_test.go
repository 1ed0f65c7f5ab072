package strataengine

import (
	"bytes"
	"context"
	"github.com/stratadb/strata/internal/bench"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

func strataSpec(t *testing.T, workload string) bench.RunSpec {
	spec := testSpec(t, "strata", workload)
	spec.Config.CacheBytes = 4 << 20
	spec.Config.PageSize = 4096
	spec.Duration = 150 * time.Millisecond
	spec.Warmup = 0
	return spec
}

func TestStrataEveryWorkload(t *testing.T) {
	for _, name := range bench.Workloads() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res, err := bench.Run(context.Background(), strataSpec(t, name), nil)
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
	res, err := bench.Run(context.Background(), spec, nil)
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
	res, err := bench.Run(context.Background(), spec, nil)
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

// TestPoolTraceWritten: with PoolTraceEnv set, each open of a Strata
// engine leaves a trace of its pool at the named path with ".<n>"
// appended: a header, then a line per interval with R in [0, 1] and the
// interval's accesses, which count the run's.
func TestPoolTraceWritten(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(PoolTraceEnv, filepath.Join(dir, "pool"))
	spec := strataSpec(t, "oltp_point_select")
	spec.Duration = 600 * time.Millisecond
	if _, err := bench.Run(context.Background(), spec, nil); err != nil {
		t.Fatal(err)
	}
	matches, err := filepath.Glob(filepath.Join(dir, "pool.*"))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no trace written (%v)", err)
	}
	var accesses int64
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if !strings.HasPrefix(lines[0], "t\tR\ttarget") {
			t.Fatalf("%s: header %q", m, lines[0])
		}
		for _, l := range lines[1:] {
			f := strings.Split(l, "\t")
			if len(f) != 12 {
				t.Fatalf("%s: line %q has %d fields, want 12", m, l, len(f))
			}
			r, err := strconv.ParseFloat(f[1], 64)
			if err != nil || r < 0 || r > 1 {
				t.Fatalf("%s: R %q", m, f[1])
			}
			for _, s := range f[6:9] {
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil || n < 0 {
					t.Fatalf("%s: count %q", m, s)
				}
				accesses += n
			}
		}
	}
	if accesses == 0 {
		t.Fatal("the traces count no access")
	}
}

// TestPoolTraceUncreatable: a trace file that cannot be created fails the
// run with the reason, instead of a run without the trace asked for.
func TestPoolTraceUncreatable(t *testing.T) {
	t.Setenv(PoolTraceEnv, filepath.Join(t.TempDir(), "missing", "pool"))
	_, err := bench.Run(context.Background(), strataSpec(t, "oltp_point_select"), nil)
	if err == nil || !strings.Contains(err.Error(), "pool trace") {
		t.Fatalf("run: %v; want the pool trace's error", err)
	}
}

// TestInsertsAreVisible is internal/bench's model check of oltp_insert on
// Strata's engine: after the run (no warm-up), the table holds exactly the
// loaded rows plus one row per transaction, with the ids right above the
// table, each with its data set value.
func TestInsertsAreVisible(t *testing.T) {
	spec := testSpec(t, "strata", "oltp_insert")
	spec.Warmup = 0
	res, err := bench.Run(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Txns == 0 {
		t.Fatal("no inserts")
	}
	eng, _, err := openStrata(bench.Config{Dir: filepath.Join(spec.Config.Dir, "db"), CacheBytes: 8 << 20, CompressedShare: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ds, _ := bench.NewDataset(spec.Dataset, spec.Seed, spec.TableSize)
	first := uint64(spec.TableSize)
	var rows int64
	var want []byte
	err = eng.Scan(ds.AppendKey(nil, first), nil, int(res.Txns)+10, func(k, v []byte) bool {
		id := first + uint64(rows)
		if !bytes.Equal(k, ds.AppendKey(nil, id)) {
			t.Errorf("row %d: key %x, want id %d", rows, k, id)
			return false
		}
		want = ds.AppendValue(want[:0], id, 0)
		if !bytes.Equal(v, want) {
			t.Errorf("id %d: value differs from the data set's", id)
		}
		rows++
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if rows != res.Txns {
		t.Errorf("%d rows above the table, want one per transaction (%d)", rows, res.Txns)
	}
}

// TestInvalidStrataSpecs: a device or codec Strata does not know fails
// the run with a bench error that names it.
func TestInvalidStrataSpecs(t *testing.T) {
	cases := []struct {
		name   string
		modify func(*bench.RunSpec)
		want   string
	}{
		{"device", func(s *bench.RunSpec) { s.Config.Device = "floppy" }, "unknown device"},
		{"codec", func(s *bench.RunSpec) { s.Config.Codec = "bzip9" }, "codec"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := testSpec(t, "strata", "oltp_point_select")
			c.modify(&spec)
			_, err := bench.Run(context.Background(), spec, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "bench: ") {
				t.Fatalf("got error %v, want a bench: error mentioning %q", err, c.want)
			}
		})
	}
}

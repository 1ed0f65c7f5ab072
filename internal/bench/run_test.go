package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testSpec(t *testing.T, engine, workload string) RunSpec {
	t.Helper()
	return RunSpec{
		Engine:    engine,
		Config:    Config{Dir: filepath.Join(t.TempDir(), "bench"), CacheBytes: 8 << 20, CompressedShare: -1},
		Workload:  workload,
		Dataset:   "sysbench",
		TableSize: 2000,
		Seed:      42,
		Threads:   2,
		Duration:  100 * time.Millisecond,
		Warmup:    20 * time.Millisecond,
	}
}

// checkSane asserts what every successful run must satisfy.
func checkSane(t *testing.T, res *Result) {
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
	if res.DiskBytes <= 0 {
		t.Errorf("disk bytes %d, want > 0", res.DiskBytes)
	}
	if res.LogicalBytes <= 0 {
		t.Errorf("logical bytes %d, want > 0", res.LogicalBytes)
	}
	if res.PeakRSSBytes <= 0 {
		t.Errorf("peak RSS %d, want > 0", res.PeakRSSBytes)
	}
	if res.Describe == "" {
		t.Error("no description of the engine")
	}
}

func TestRunEveryWorkloadMapEngine(t *testing.T) {
	for _, name := range Workloads() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res, err := Run(context.Background(), testSpec(t, "map", name), nil)
			if err != nil {
				t.Fatal(err)
			}
			checkSane(t, res)
			wl := workloads[name]
			if wl.writes != (res.UserWriteBytes > 0) {
				t.Errorf("workload writes: %v, user write bytes %d", wl.writes, res.UserWriteBytes)
			}
			if res.Spec.Distribution != wl.defaultDist {
				t.Errorf("distribution %q, want the workload's default %q", res.Spec.Distribution, wl.defaultDist)
			}
		})
	}
}

// TestOpsPerTxn checks the documented mapping of each workload onto
// engine operations.
func TestOpsPerTxn(t *testing.T) {
	exact := map[string]int64{
		"oltp_point_select": 1,
		"oltp_read_only":    14,
		"oltp_write_only":   4,
		"oltp_read_write":   18,
		"oltp_insert":       1,
		"ycsb_c":            1,
	}
	for name, per := range exact {
		res, err := Run(context.Background(), testSpec(t, "map", name), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Ops != per*res.Txns {
			t.Errorf("%s: %d ops in %d txns, want %d per txn", name, res.Ops, res.Txns, per)
		}
	}
	// ycsb_f: half the transactions read-modify-write (2 ops).
	res, err := Run(context.Background(), testSpec(t, "map", "ycsb_f"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ratio := float64(res.Ops) / float64(res.Txns); ratio < 1.4 || ratio > 1.6 {
		t.Errorf("ycsb_f: %.2f ops per txn, want about 1.5", ratio)
	}
}

// openSpecStore reopens the map store a finished run left behind.
func openSpecStore(t *testing.T, spec RunSpec) *mapEngine {
	t.Helper()
	e, _, err := openMap(Config{Dir: filepath.Join(spec.Config.Dir, engineSubdir)})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestInsertsAreVisible is a model check: after oltp_insert (no warm-up,
// so every insert is counted), the table holds exactly the loaded rows
// plus one row per transaction, with the ids right above the table, each
// with its data set value.
func TestInsertsAreVisible(t *testing.T) {
	for _, engine := range []string{"map"} { // Strata's: internal/bench/strataengine
		t.Run(engine, func(t *testing.T) {
			spec := testSpec(t, engine, "oltp_insert")
			spec.Warmup = 0
			res, err := Run(context.Background(), spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Txns == 0 {
				t.Fatal("no inserts")
			}
			eng, _, err := mustLookup(t, engine)(Config{Dir: filepath.Join(spec.Config.Dir, engineSubdir), CacheBytes: 8 << 20, CompressedShare: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			ds, _ := NewDataset(spec.Dataset, spec.Seed, spec.TableSize)
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
			got, found, err := eng.Get(ds.AppendKey(nil, first+uint64(res.Txns)-1), nil)
			if err != nil || !found || !bytes.Equal(got, ds.AppendValue(nil, first+uint64(res.Txns)-1, 0)) {
				t.Errorf("last insert: found %v, err %v", found, err)
			}
		})
	}
}

func mustLookup(t *testing.T, name string) Factory {
	t.Helper()
	f, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestReadWriteKeepsRows is a model check of the write mix: updates and
// delete+insert pairs leave exactly the loaded ids, and the table differs
// from the load (the updates landed).
func TestReadWriteKeepsRows(t *testing.T) {
	spec := testSpec(t, "map", "oltp_read_write")
	res, err := Run(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := openSpecStore(t, spec)
	ds, _ := NewDataset(spec.Dataset, spec.Seed, spec.TableSize)
	if len(e.keys) != int(spec.TableSize) {
		t.Fatalf("%d rows, want %d", len(e.keys), spec.TableSize)
	}
	changed := 0
	for id := range uint64(spec.TableSize) {
		v, ok := e.values[string(ds.AppendKey(nil, id))]
		if !ok {
			t.Fatalf("id %d missing", id)
		}
		if !bytes.Equal(v, ds.AppendValue(nil, id, 0)) {
			changed++
		}
	}
	if changed == 0 {
		t.Errorf("no row changed after %d read-write transactions", res.Txns)
	}
	if e.syncs != 0 {
		t.Errorf("%d synced applies without SyncWrites", e.syncs)
	}
}

func TestSyncWritesReachEngine(t *testing.T) {
	spec := testSpec(t, "map", "oltp_write_only")
	spec.Config.SyncWrites = true
	res, err := Run(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := openSpecStore(t, spec)
	loadBatches := int(spec.TableSize+loadBatchRows-1) / loadBatchRows
	if e.syncs == 0 || e.syncs != e.applies-loadBatches {
		t.Errorf("%d synced applies of %d (load: %d unsynced), want every measured one synced", e.syncs, e.applies, loadBatches)
	}
	if res.UserWriteBytes == 0 {
		t.Error("no user write bytes")
	}
}

func TestReuse(t *testing.T) {
	spec := testSpec(t, "map", "oltp_insert")
	spec.Reuse = true
	first, err := Run(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	var loads int
	second, err := Run(context.Background(), spec, func(ev Event) {
		if ev.Phase == "load" {
			loads++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if loads != 0 {
		t.Errorf("reused run loaded (%d load events)", loads)
	}
	if second.LogicalBytes != first.LogicalBytes || second.LoadSeconds != first.LoadSeconds {
		t.Errorf("reused run reports load %v s, %d bytes; first run %v s, %d bytes", second.LoadSeconds, second.LogicalBytes, first.LoadSeconds, first.LogicalBytes)
	}
	if !strings.Contains(strings.Join(second.Notes, "\n"), "1 write runs") {
		t.Errorf("notes %q do not say the data was modified", second.Notes)
	}
	// The second run's inserts continued above the first's.
	e := openSpecStore(t, spec)
	if got, want := len(e.keys), int(spec.TableSize); got <= want+int(first.Txns) {
		t.Errorf("%d rows after two insert runs, first inserted %d", got, first.Txns)
	}

	// Another seed is other data: it reloads.
	spec.Seed++
	loads = 0
	if _, err := Run(context.Background(), spec, func(ev Event) {
		if ev.Phase == "load" {
			loads++
		}
	}); err != nil {
		t.Fatal(err)
	}
	if loads == 0 {
		t.Error("run with another seed reused the data")
	}
	ds, _ := NewDataset(spec.Dataset, spec.Seed, spec.TableSize)
	e = openSpecStore(t, spec)
	if v := e.values[string(ds.AppendKey(nil, 1))]; !bytes.Equal(v, ds.AppendValue(nil, 1, 0)) {
		t.Error("row 1 does not hold the new seed's value after the reload")
	}
}

func TestRefusesForeignDirectory(t *testing.T) {
	spec := testSpec(t, "map", "oltp_point_select")
	if err := os.MkdirAll(spec.Config.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	precious := filepath.Join(spec.Config.Dir, "precious")
	if err := os.WriteFile(precious, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), spec, nil); err == nil || !strings.Contains(err.Error(), "not created by strata bench") {
		t.Fatalf("run in a foreign directory: %v", err)
	}
	if _, err := os.Stat(precious); err != nil {
		t.Fatalf("foreign file gone: %v", err)
	}
}

func TestBadSpecs(t *testing.T) {
	cases := []struct {
		name   string
		modify func(*RunSpec)
		want   string
	}{
		{"engine", func(s *RunSpec) { s.Engine = "nosuch" }, "unknown engine"},
		{"workload", func(s *RunSpec) { s.Workload = "tpcc" }, "unknown workload"},
		{"dataset", func(s *RunSpec) { s.Dataset = "images" }, "unknown dataset"},
		{"distribution", func(s *RunSpec) { s.Distribution = "gaussian" }, "unknown distribution"},
		{"threads", func(s *RunSpec) { s.Threads = 0 }, "threads"},
		{"duration", func(s *RunSpec) { s.Duration = 0 }, "duration"},
		{"warmup", func(s *RunSpec) { s.Warmup = -time.Second }, "warm-up"},
		{"negative rate", func(s *RunSpec) { s.Rate = -1 }, "rate"},
		{"rate too high", func(s *RunSpec) { s.Rate = 1e12 }, "microsecond"},
		{"rate too low", func(s *RunSpec) { s.Rate, s.Duration = 0.5, time.Second }, "longer than the duration"},
		{"table", func(s *RunSpec) { s.TableSize = 0 }, "table size"},
		{"sysbench table", func(s *RunSpec) { s.TableSize = 1 << 33 }, "at most"},
		{"dir", func(s *RunSpec) { s.Config.Dir = "" }, "directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := testSpec(t, "map", "oltp_point_select")
			c.modify(&spec)
			_, err := Run(context.Background(), spec, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got error %v, want one mentioning %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "bench: ") {
				t.Errorf("error %q lacks the bench: prefix", err)
			}
		})
	}
}

func TestEngineErrorStopsRun(t *testing.T) {
	spec := testSpec(t, "failing", "oltp_read_only")
	start := time.Now()
	spec.Duration = 10 * time.Second
	_, err := Run(context.Background(), spec, nil)
	if !errors.Is(err, errInjected) {
		t.Fatalf("got %v, want the engine's error", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Error("the failing run did not stop early")
	}
}

func TestCancel(t *testing.T) {
	spec := testSpec(t, "map", "oltp_point_select")
	spec.Duration = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	if _, err := Run(ctx, spec, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestProgressEvents(t *testing.T) {
	spec := testSpec(t, "map", "oltp_point_select")
	spec.TableSize = 3500
	var events []Event
	if _, err := Run(context.Background(), spec, func(ev Event) { events = append(events, ev) }); err != nil {
		t.Fatal(err)
	}
	var loads []int64
	lastDone := map[string]int64{}
	for _, ev := range events {
		if ev.Phase == "load" {
			loads = append(loads, ev.Done)
		}
		lastDone[ev.Phase] = ev.Done
	}
	if want := []int64{1000, 2000, 3000, 3500}; !slicesEqual(loads, want) {
		t.Errorf("load progress %v, want %v", loads, want)
	}
	if lastDone["warmup"] != spec.Warmup.Milliseconds() || lastDone["run"] != spec.Duration.Milliseconds() {
		t.Errorf("last progress: %v", lastDone)
	}
}

func slicesEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRunChildRoundTrip(t *testing.T) {
	spec := testSpec(t, "map", "ycsb_b")
	spec.Duration = 500 * time.Millisecond
	in, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := RunChild(bytes.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	var events []Event
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		events = append(events, ev)
	}
	if len(events) < 3 {
		t.Fatalf("%d events", len(events))
	}
	last := events[len(events)-1]
	if last.Result == nil || last.Error != "" {
		t.Fatalf("last event %+v, want a result", last)
	}
	for _, ev := range events[:len(events)-1] {
		if ev.Result != nil || ev.Error != "" || ev.Phase == "" {
			t.Fatalf("event before the last: %+v", ev)
		}
	}
	checkSane(t, last.Result)
	if last.Result.Spec.Workload != "ycsb_b" || last.Result.Spec.Duration != spec.Duration {
		t.Errorf("result spec %+v", last.Result.Spec)
	}
	// Throttled: a 500 ms run ticking every 100 ms reports at most about
	// five times (first, three or so in between, last).
	runEvents := 0
	for _, ev := range events {
		if ev.Phase == "run" {
			runEvents++
		}
	}
	if runEvents < 2 || runEvents > 6 {
		t.Errorf("%d run progress events for 500 ms", runEvents)
	}
}

func TestCheck(t *testing.T) {
	spec := testSpec(t, "bbolt", "ycsb_a") // an engine of the peers binary
	if err := Check(spec); err != nil {
		t.Errorf("valid spec with an engine registered elsewhere: %v", err)
	}
	spec.Workload, spec.Threads = "ycsb_z", 0
	err := Check(spec)
	if err == nil || !strings.Contains(err.Error(), "unknown workload") || !strings.Contains(err.Error(), "threads") {
		t.Errorf("got %v, want both problems reported", err)
	}
}

func TestRunChildErrors(t *testing.T) {
	for _, in := range []string{"{not json", `{"engine":"nosuch"}`} {
		var out bytes.Buffer
		err := RunChild(strings.NewReader(in), &out)
		if err == nil {
			t.Fatalf("input %q: no error", in)
		}
		var ev Event
		if jerr := json.Unmarshal(out.Bytes(), &ev); jerr != nil || ev.Error == "" || ev.Result != nil {
			t.Errorf("input %q: output %q, want one error event", in, out.String())
		}
	}
}

func TestParseProcIO(t *testing.T) {
	in := "rchar: 100\nwchar: 200\nsyscr: 3\nsyscw: 4\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n"
	io, err := parseProcIO([]byte(in))
	if err != nil || io.readBytes != 4096 || io.writeBytes != 8192 {
		t.Fatalf("got %+v, %v", io, err)
	}
	if _, err := parseProcIO([]byte("rchar: 1\n")); err == nil {
		t.Error("missing fields accepted")
	}
}

// lossyEngine is the map engine with every row of odd id lost.
type lossyEngine struct{ *mapEngine }

func (e lossyEngine) Get(key, dst []byte) ([]byte, bool, error) {
	if key[len(key)-1]&1 == 1 {
		return dst[:0], false, nil
	}
	return e.mapEngine.Get(key, dst)
}

func init() {
	Register("lossy", func(cfg Config) (Engine, string, error) {
		e, d, err := openMap(cfg)
		if err != nil {
			return nil, "", err
		}
		return lossyEngine{e}, d, nil
	})
}

// TestReviewLostRowsNoted: every row of the table exists whatever the
// workload did, so an engine whose reads find no row is losing data; the
// results must say so rather than count those reads as fast successes.
func TestReviewLostRowsNoted(t *testing.T) {
	res, err := Run(context.Background(), testSpec(t, "lossy", "oltp_point_select"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "found no row") {
		t.Errorf("half the reads found no row, notes say nothing: %q", res.Notes)
	}
	res, err = Run(context.Background(), testSpec(t, "map", "oltp_read_write"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(res.Notes, "\n"), "found no row") {
		t.Errorf("reads of a complete table noted as missing: %q", res.Notes)
	}
}

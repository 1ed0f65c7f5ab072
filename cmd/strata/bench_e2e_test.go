package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test binary is also the bench child of the end-to-end tests: they run
// strata bench in-process, which starts os.Executable() bench-child.
func TestMain(m *testing.M) {
	maybeRunBenchChild()
	os.Exit(m.Run())
}

// tinyBench is a run of a few seconds: 2000 rows, 1 s measured.
func tinyBench(t *testing.T) benchFlags {
	dir := t.TempDir()
	return benchFlags{
		tableSize: 2000, threads: 2, duration: time.Second, cache: "4MiB", share: "auto",
		device: "none", dataset: "sysbench", engines: "strata", workloads: "oltp_read_only,oltp_write_only",
		// The work directory may be on a tmpfs, which has no O_DIRECT.
		directIO: false, dir: filepath.Join(dir, "work"), jsonPath: filepath.Join(dir, "results.json"), seed: 1,
	}
}

func TestBenchEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes for a few seconds")
	}
	f := tinyBench(t)
	var stdout, stderr bytes.Buffer
	if err := runBench(context.Background(), &stdout, &stderr, f); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, w := range []string{"oltp_read_only", "oltp_write_only"} {
		if !strings.Contains(out, "\n"+w+"\n") {
			t.Errorf("no table for %s:\n%s", w, out)
		}
	}
	if !strings.Contains(stderr.String(), "strata oltp_read_only: load (2000 rows)") {
		t.Errorf("no progress line for the load:\n%s", stderr.String())
	}

	b, err := os.ReadFile(f.jsonPath)
	must(t, err)
	var rep benchReport
	must(t, json.Unmarshal(b, &rep))
	if len(rep.Results) != 2 || rep.Host.CPUs == 0 || rep.Host.GoVersion == "" || len(rep.Failures) != 0 {
		t.Fatalf("report: %d results, host %+v, failures %v", len(rep.Results), rep.Host, rep.Failures)
	}
	for _, r := range rep.Results {
		if r.Txns <= 0 || r.TxnPerSec <= 0 || r.LogicalBytes <= 0 || r.DiskBytes <= 0 {
			t.Errorf("%s: empty measurement: %+v", r.Spec.Workload, r)
		}
		if want := childGoMemLimit(r.Spec.Engine, defaultMemLimit(4<<20), 4<<20); r.GoMemLimit != want {
			t.Errorf("%s: GOMEMLIMIT of the child %d, want %d", r.Spec.Workload, r.GoMemLimit, want)
		}
		if r.MemLimitBytes == 0 && !containsNote(r.Notes, noCgroupNote) {
			t.Errorf("%s: no memory limit and no note saying so: %q", r.Spec.Workload, r.Notes)
		}
	}
	// The engines' directories are gone, the work directory (ours: --dir) stays.
	if entries, err := os.ReadDir(f.dir); err != nil || len(entries) != 0 {
		t.Errorf("work directory after the run: %v, %v; want it empty", entries, err)
	}
}

func TestBenchSweepEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes for a few seconds")
	}
	dir := t.TempDir()
	f := sweepCmdFlags{benchFlags: tinyBench(t), param: "r", values: "0,auto", plotPath: filepath.Join(dir, "sweep.png")}
	f.workloads = "oltp_point_select"
	f.jsonPath = filepath.Join(dir, "sweep.json")
	var stdout, stderr bytes.Buffer
	if err := runBenchSweep(context.Background(), &stdout, &stderr, f); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
	}
	if st, err := os.Stat(f.plotPath); err != nil || st.Size() == 0 {
		t.Errorf("no plot: %v", err)
	}
	b, err := os.ReadFile(f.jsonPath)
	must(t, err)
	var rep benchSweepReport
	must(t, json.Unmarshal(b, &rep))
	if len(rep.Points) != 2 || rep.Points[0].Result == nil || rep.Points[1].Result == nil {
		t.Fatalf("sweep points: %+v", rep.Points)
	}
	// r does not change the data: the second point reuses the first's load.
	if !containsNote(rep.Points[1].Result.Notes, "reused") {
		t.Errorf("second point did not reuse the load: %q", rep.Points[1].Result.Notes)
	}
	if !strings.Contains(stdout.String(), "hit_ratio") {
		t.Errorf("no hit ratio column:\n%s", stdout.String())
	}
}

func containsNote(notes []string, sub string) bool {
	for _, n := range notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

// TestReviewBenchKeepsForeignDir: with --dir naming a directory that
// already holds a directory named after an engine (a checkout called
// strata, say), the child refuses to use it, and the runner must not
// delete it either when it cleans up.
func TestReviewBenchKeepsForeignDir(t *testing.T) {
	f := tinyBench(t)
	f.workloads, f.memLimit = "oltp_point_select", "none"
	precious := filepath.Join(f.dir, "strata", "precious.txt")
	must(t, os.MkdirAll(filepath.Dir(precious), 0o755))
	must(t, os.WriteFile(precious, []byte("not strata bench's"), 0o644))
	var stdout, stderr bytes.Buffer
	if err := runBench(context.Background(), &stdout, &stderr, f); err == nil {
		t.Errorf("bench ran in a directory it did not create:\n%s", stderr.String())
	}
	if _, err := os.Stat(precious); err != nil {
		t.Errorf("strata bench deleted a directory it did not create: %v", err)
	}
}

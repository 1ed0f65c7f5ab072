package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
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

// tinyBench is a run of a few seconds: 2000 rows, 1 s measured, Strata's
// runs in the test binary (TestMain).
func tinyBench(t *testing.T) benchFlags {
	dir := t.TempDir()
	self, err := os.Executable()
	must(t, err)
	return benchFlags{
		strataBin: self,
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
		if self, _ := os.Executable(); r.Binary != self {
			t.Errorf("%s: the child was %q, want the test binary %q (--strata-bin)", r.Spec.Workload, r.Binary, self)
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
	stdout, b := runSweepForTest(t, f)
	var rep benchSweepReport
	must(t, json.Unmarshal(b, &rep))
	if len(rep.Points) != 2 || rep.Points[0].Result == nil || rep.Points[1].Result == nil {
		t.Fatalf("sweep points: %+v", rep.Points)
	}
	// r does not change the data: the second point reuses the first's load.
	if !containsNote(rep.Points[1].Result.Notes, "reused") {
		t.Errorf("second point did not reuse the load: %q", rep.Points[1].Result.Notes)
	}
	if !strings.Contains(stdout, "hit_ratio") {
		t.Errorf("no hit ratio column:\n%s", stdout)
	}
}

// TestSizeSweepEndToEnd: a data-size sweep of Strata at two page sizes
// and two R values on tiny tables. Each page size loads its own copy of
// the data at each size, every (page size, R) pair runs on its page size's
// load, and the JSON, the table and the plot show every variant.
func TestSizeSweepEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes for several seconds")
	}
	dir := t.TempDir()
	f := sweepCmdFlags{benchFlags: tinyBench(t), param: "table-size", values: "1000,3000",
		strataR: "auto,0.5", strataPageSize: "4KiB,16KiB", plotPath: filepath.Join(dir, "sizes.png")}
	f.workloads, f.memLimit, f.duration, f.keep = "oltp_point_select", "64MiB", 500*time.Millisecond, true
	f.jsonPath = filepath.Join(dir, "sizes.json")
	stdout, b := runSweepForTest(t, f)
	var rep sizeSweepReport
	must(t, json.Unmarshal(b, &rep))
	var labels []string
	for _, run := range rep.Runs {
		labels = append(labels, run.Value+" "+run.Label)
		if run.Result == nil {
			t.Errorf("%s at %s: no result (%s)", run.Label, run.Value, run.Error)
			continue
		}
		want := map[string]int{"strata 4KiB": 4096, "strata 16KiB": 16384}[strings.TrimSuffix(strings.TrimSuffix(run.Label, " R=auto"), " R=0.5")]
		if want == 0 || run.PageSize != want || !strings.Contains(run.Result.Describe, fmt.Sprintf("%d KiB pages", want>>10)) {
			t.Errorf("%s at %s: page size %d, engine says %q", run.Label, run.Value, run.PageSize, run.Result.Describe)
		}
		// The measured runs reuse the load of their page size.
		if !containsNote(run.Result.Notes, "reused") {
			t.Errorf("%s at %s did not reuse its page size's load: %q", run.Label, run.Value, run.Result.Notes)
		}
	}
	if len(rep.Runs) != 8 {
		t.Errorf("%d runs, want 2 sizes × 2 page sizes × 2 R: %q", len(rep.Runs), labels)
	}
	// Both loads at each size, each in its own directory (kept: --keep).
	for _, sub := range []string{"strata-4KiB-1000", "strata-16KiB-1000", "strata-4KiB-3000", "strata-16KiB-3000"} {
		b, err := os.ReadFile(filepath.Join(f.dir, sub, "load.json"))
		if err != nil {
			t.Errorf("no load in %s: %v", sub, err)
			continue
		}
		var m struct {
			PageSize  int   `json:"page_size"`
			TableSize int64 `json:"table_size"`
		}
		must(t, json.Unmarshal(b, &m))
		if want := map[bool]int{true: 4096, false: 16384}[strings.Contains(sub, "4KiB")]; m.PageSize != want {
			t.Errorf("%s holds page size %d, want %d", sub, m.PageSize, want)
		}
	}
	if _, err := os.Stat(filepath.Join(f.dir, "strata-1000")); err == nil {
		t.Error("a sweep of two page sizes used the one-page-size directory strata-1000")
	}
	for _, want := range []string{"strata 4KiB R=auto", "strata 16KiB R=0.5", "best fixed R (same page)", "best page size at auto R"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
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

// runSweepForTest runs `strata bench sweep` with f, checks that it drew
// its plot, and returns what it printed and its JSON report.
func runSweepForTest(t *testing.T, f sweepCmdFlags) (stdout string, report []byte) {
	t.Helper()
	var out, stderr bytes.Buffer
	if err := runBenchSweep(context.Background(), &out, &stderr, f); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
	}
	if st, err := os.Stat(f.plotPath); err != nil || st.Size() == 0 {
		t.Errorf("no plot: %v", err)
	}
	report, err := os.ReadFile(f.jsonPath)
	must(t, err)
	return out.String(), report
}

// TestBenchStrataChildBinary: a run through the real strata-bench-child,
// built from this checkout, measures Strata (the binary registers the
// engine) and carries no note about running in the strata binary.
func TestBenchStrataChildBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds strata-bench-child and runs it")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build strata-bench-child")
	}
	bin := filepath.Join(t.TempDir(), childBinName)
	// With the revision recorded where git can give it (GOFLAGS may say
	// -buildvcs=false), for the check of another revision below.
	build := exec.Command(gobin, "build", "-buildvcs=true", "-o", bin, "../"+childBinName)
	if out, err := build.CombinedOutput(); err != nil {
		t.Logf("go build -buildvcs=true: %v\n%s", err, out)
		build = exec.Command(gobin, "build", "-o", bin, "../"+childBinName)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	f := tinyBench(t)
	f.strataBin, f.workloads = bin, "oltp_point_select"
	var stdout, stderr bytes.Buffer
	if err := runBench(context.Background(), &stdout, &stderr, f); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(f.jsonPath)
	must(t, err)
	var rep benchReport
	must(t, json.Unmarshal(b, &rep))
	if len(rep.Results) != 1 || rep.Results[0].Txns <= 0 {
		t.Fatalf("results %+v, failures %v", rep.Results, rep.Failures)
	}
	if got := rep.Results[0].Binary; got != bin {
		t.Errorf("the run's child was %q, want %q", got, bin)
	}
	for _, n := range rep.Results[0].Notes {
		if strings.Contains(n, "strata binary") || strings.Contains(n, "built from") {
			t.Errorf("a run in a strata-bench-child of this build noted: %q", n)
		}
	}

	// A child built from another revision than strata is run, and said.
	rev := buildOfFile(bin)
	if rev == "" {
		t.Skip("go build recorded no revision here (no git checkout)")
	}
	var stderr2 bytes.Buffer
	r := &benchRunner{build: "0123456789abcdef", strata: newChildLocator(bin, nil), stderr: &stderr2}
	if got, err := r.binFor("strata"); err != nil || got != bin {
		t.Fatalf("binFor = %q, %v; want %q", got, err, bin)
	}
	if n := r.binNote("strata"); !strings.Contains(n, rev) || !strings.Contains(n, "0123456789abcdef") || !strings.Contains(stderr2.String(), n) {
		t.Errorf("a child of another revision: note %q, stderr %q; want both revisions said", n, stderr2.String())
	}
}

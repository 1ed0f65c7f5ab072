package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runWithProfile runs a short map-engine workload with env naming
// dir/name, and checks that it left a profile (gzip'd protobuf) at that
// path with ".<engine>" appended.
func runWithProfile(t *testing.T, env, name string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	t.Setenv(env, path)
	res, err := Run(context.Background(), testSpec(t, "map", "oltp_write_only"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range res.Notes {
		t.Log(n)
	}
	b, err := os.ReadFile(path + ".map")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Errorf("%s profile of %d bytes does not start as gzip: % x", name, len(b), b[:min(len(b), 4)])
	}
}

// TestHeapProfileWritten: with HeapProfileEnv set, a run leaves a heap
// profile at the named path with ".<engine>" appended.
func TestHeapProfileWritten(t *testing.T) { runWithProfile(t, HeapProfileEnv, "heap") }

// TestMutexProfileWritten: with MutexProfileEnv set, a run leaves a mutex
// profile at the named path with ".<engine>" appended, and stops
// sampling contention when it ends.
func TestMutexProfileWritten(t *testing.T) {
	runWithProfile(t, MutexProfileEnv, "mutex")
	if rate := runtime.SetMutexProfileFraction(-1); rate != 0 {
		t.Errorf("mutex profile fraction %d after the run, want 0", rate)
	}
}

// TestBlockProfileWritten: with BlockProfileEnv set, a run leaves a
// blocking profile at the named path with ".<engine>" appended.
func TestBlockProfileWritten(t *testing.T) { runWithProfile(t, BlockProfileEnv, "block") }

// TestTraceWritten: with TraceEnv set, a run leaves an execution trace
// at the named path with ".<engine>" appended, and a CPU profile beside
// it when ProfileEnv is set too.
func TestTraceWritten(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(TraceEnv, filepath.Join(dir, "trace"))
	t.Setenv(ProfileEnv, filepath.Join(dir, "cpu"))
	if _, err := Run(context.Background(), testSpec(t, "map", "oltp_write_only"), nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "trace.map"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("go 1.")) {
		t.Errorf("trace of %d bytes does not start with its header: %q", len(b), b[:min(len(b), 8)])
	}
	if _, err := os.Stat(filepath.Join(dir, "cpu.map")); err != nil {
		t.Error(err)
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
	if _, err := Run(context.Background(), spec, nil); err != nil {
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
	_, err := Run(context.Background(), strataSpec(t, "oltp_point_select"), nil)
	if err == nil || !strings.Contains(err.Error(), "pool trace") {
		t.Fatalf("run: %v; want the pool trace's error", err)
	}
}

package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
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

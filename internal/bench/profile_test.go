package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestHeapProfileWritten: with HeapProfileEnv set, a run leaves a heap
// profile (gzip'd protobuf) at the named path with ".<engine>" appended.
func TestHeapProfileWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap")
	t.Setenv(HeapProfileEnv, path)
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
		t.Errorf("heap profile of %d bytes does not start as gzip: % x", len(b), b[:min(len(b), 4)])
	}
}

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

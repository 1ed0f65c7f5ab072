package wal

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestTruncateBeforeFreesFilesGradually: a file TruncateBefore deletes is
// renamed out of the log and freed a few MiB at a time before it goes
// (one unlink of a whole file held a Go processor for 10 ms), and what a
// crash leaves of such files is removed at Open, the log intact.
func TestTruncateBeforeFreesFilesGradually(t *testing.T) {
	mem := vfs.NewMem()
	var deadTruncates atomic.Int64
	mem.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpTruncate && strings.HasSuffix(path, deadSuffix) {
			deadTruncates.Add(1)
		}
		return nil
	})
	opts := Options{FS: mem, SyncMode: SyncNever}
	l := mustOpen(t, testDir, opts)
	payload := make([]byte, 1<<20)
	for i := 0; i < 10; i++ {
		if _, err := appendWait(l, payload, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Rotate(); err != nil {
		t.Fatal(err)
	}
	last, err := appendWait(l, []byte("kept"), true)
	if err != nil {
		t.Fatal(err)
	}
	before := walFiles(t, mem, testDir)
	if len(before) != 2 {
		t.Fatalf("files %v, want 2", before)
	}
	if err := l.TruncateBefore(last); err != nil {
		t.Fatal(err)
	}
	names, err := mem.List(testDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n == before[0] || strings.HasSuffix(n, deadSuffix) {
			t.Fatalf("after TruncateBefore the directory holds %v", names)
		}
	}
	if n := deadTruncates.Load(); n < 10<<20/vfs.RemoveStep {
		t.Fatalf("a 10 MiB file removed with %d truncations; want one per %d MiB", n, vfs.RemoveStep>>20)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Leftovers of a crash while freeing: an older file and one that was
	// partly truncated. Open removes both; the log is as it was.
	for _, name := range []string{fileName(1) + deadSuffix, fileName(2) + deadSuffix} {
		f, err := mem.OpenFile(filepath.Join(testDir, name), os.O_RDWR|os.O_CREATE, 0o644, vfs.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte("junk, not a header"), 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	l = mustOpen(t, testDir, opts)
	defer l.Close()
	names, err = mem.List(testDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, deadSuffix) {
			t.Fatalf("Open left %s in %v", n, names)
		}
	}
	got := replayAll(t, l, last)
	if len(got) != 1 || got[0].lsn != last || string(got[0].payload) != "kept" {
		t.Fatalf("replay from %d after reopening: %v", last, got)
	}
}

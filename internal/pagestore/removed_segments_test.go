package pagestore

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestRemovedSegmentsAreFreedGradually: a segment the cleaner emptied is
// removed at the checkpoint, and its file's blocks are freed a step at a
// time before its last close, in the background (closing a removed 64 MiB
// file freed them all at once: 7–8 ms holding a Go processor); the pages
// stay readable.
func TestRemovedSegmentsAreFreedGradually(t *testing.T) {
	old := freeStep
	freeStep = 4096
	t.Cleanup(func() { freeStep = old })
	fs := vfs.NewMem()
	var truncates atomic.Int64
	fs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpTruncate && strings.HasSuffix(path, ".seg") {
			truncates.Add(1)
		}
		return nil
	})
	opts := testOptions(fs, mustCodec(t, "none"))
	opts.CleanerThreshold = 0.25
	s, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := model{}
	writeVersion(t, s, m, 0, 60, 2)
	writeVersion(t, s, m, 0, 45, 3) // segments 1..3 become garbage
	if n := truncates.Load(); n != 0 {
		t.Fatalf("%d segment truncations before any segment was removed", n)
	}
	cleanUntilDone(t, s)
	if err := s.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	s.freeing.Wait() // in the background
	if n := truncates.Load(); n == 0 {
		t.Fatal("segments removed without a truncation: freed all at once at their close")
	}
	checkModel(t, s, m, 61)
}

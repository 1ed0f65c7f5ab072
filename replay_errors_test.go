package strata

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestReplayReadErrorIsNotCorruption: an I/O error while WAL replay reads
// the tree's pages keeps its chain (errors.Is finds the injected fault) and
// is not reported as corruption; the same files then open fine.
func TestReplayReadErrorIsNotCorruption(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs)
	opts.CheckpointWAL = 1 << 30 // keep every commit in the WAL
	opts.CheckpointReplaced = -1
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		if err := db.Set([]byte(fmt.Sprintf("key%05d", i)), make([]byte, 200)); err != nil {
			t.Fatal(err)
		}
		if i == 150 {
			if err := db.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		}
	}
	after := fs.CrashClone(vfs.CrashDropUnsynced, nil) // WAL records after the checkpoint
	db.Close()

	// Fail page-store reads once the WAL is being read, i.e. during replay.
	var walRead atomic.Bool
	after.SetInjector(func(op vfs.Op, path string) error {
		if op != vfs.OpRead {
			return nil
		}
		if strings.Contains(path, "/wal/") {
			walRead.Store(true)
			return nil
		}
		if walRead.Load() {
			return vfs.InjectedError(op, path)
		}
		return nil
	})
	ropts := memOptions(after)
	_, err = Open("db", ropts)
	if err == nil {
		t.Fatal("Open succeeded although every page read during replay failed")
	}
	if !errors.Is(err, vfs.ErrInjected) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("replay read error: %v (want the injected error, not ErrCorrupt)", err)
	}
	after.SetInjector(nil)
	db, err = Open("db", ropts)
	if err != nil {
		t.Fatalf("reopen without faults: %v", err)
	}
	defer db.Close()
	if _, err := db.Get([]byte("key00299")); err != nil {
		t.Fatalf("replayed commit: %v", err)
	}
}

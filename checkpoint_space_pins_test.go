package strata

import (
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestSnapshotAtFreezeStartsNoSpaceCheckpoint: a snapshot of the
// version the last checkpoint froze keeps every page replaced after it,
// like one older than the freeze: a checkpoint for space frees nothing
// while it is open, and makes the next commits copy the pages again.
// Counting only snapshots older than the freeze (t < db.frozen) let such
// checkpoints run (2 in randomUpdates, which takes its snapshot right
// after db.Checkpoint), and the store grew by the copies they caused (775
// live pages at most, against 641).
func TestSnapshotAtFreezeStartsNoSpaceCheckpoint(t *testing.T) {
	_, _, ckpts := randomUpdates(t, 0, true)
	if ckpts != 0 {
		t.Errorf("%d checkpoints with a snapshot of the frozen version open: each freed nothing", ckpts)
	}
}

// TestReplacedLimitAtOpenIgnoresOrphans: Open computes replacedLimit in its
// recovery checkpoint, before collectOrphans frees the pages the crash
// left unreachable, so after a crash the limit counts those orphans as
// tree pages. The next checkpoint (nothing changed) computes the right
// limit: they should agree.
func TestReplacedLimitAtOpenIgnoresOrphans(t *testing.T) {
	fs := vfs.NewMem()
	opts := spaceTestOptions(fs, -1) // the crashed session keeps its old copies
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	loadSpaceTestRows(t, db)
	updateSpaceTestRows(t, db, rand.New(rand.NewPCG(1, 2)), nil)
	if err := db.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := db.pool.FlushAll(); err != nil { // the copies reach the store
		t.Fatal(err)
	}
	fs.CrashAfterOps(0)
	after := fs.CrashedClone(vfs.CrashDropUnsynced, nil)
	db.Close() // fails on the crashed FS; lets its goroutines go

	opts2 := spaceTestOptions(after, 0)
	db2, err := Open("db", opts2)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	atOpen := db2.replacedLimit.Load()
	orphans := db2.Stats().OrphansFreed
	if err := db2.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	later := db2.replacedLimit.Load()
	t.Logf("limit at Open %d, after the next checkpoint %d; %d orphans freed at Open", atOpen, later, orphans)
	if atOpen > later+later/10 {
		t.Errorf("Open set the replaced-pages limit to %d, the next checkpoint (no change between) to %d: Open counted the %d orphans", atOpen, later, orphans)
	}
}

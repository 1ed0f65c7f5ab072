package strata

import (
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/hooks"
)

// TestCheckpointEpoch: the epoch benchmarks read (hooks.CheckpointEpoch)
// is odd while a checkpoint runs, including its wait for the writer lock,
// and grows by two with each checkpoint.
func TestCheckpointEpoch(t *testing.T) {
	db := openWithKey(t)
	before := hooks.CheckpointEpoch(db)
	if before%2 != 0 {
		t.Fatalf("epoch %d with no checkpoint running", before)
	}
	release := make(chan struct{})
	var releaseOnce sync.Once
	// Runs before the test's cleanup closes the database: a failure below
	// must not leave the Update waiting, or Close would wait for it.
	defer releaseOnce.Do(func() { close(release) })
	updateDone := startUpdate(db, func() { <-release })
	ckptDone := make(chan error, 1)
	go func() { ckptDone <- db.Checkpoint() }()
	deadline := time.Now().Add(10 * time.Second)
	for hooks.CheckpointEpoch(db) == before {
		if time.Now().After(deadline) {
			t.Fatal("the checkpoint did not begin within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	if during := hooks.CheckpointEpoch(db); during != before+1 {
		t.Fatalf("epoch %d while a checkpoint waits for the writer lock, %d before", during, before)
	}
	releaseOnce.Do(func() { close(release) })
	if err := <-updateDone; err != nil {
		t.Fatal(err)
	}
	if err := <-ckptDone; err != nil {
		t.Fatal(err)
	}
	if after := hooks.CheckpointEpoch(db); after != before+2 {
		t.Fatalf("epoch %d after one checkpoint, %d before", after, before)
	}
}

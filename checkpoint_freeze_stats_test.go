package strata

import (
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// TestCheckpointFreezeTime: CheckpointFreezeTime counts the time a
// checkpoint holds the writer lock (commits wait for it then), not the
// time it waits for the lock behind a running transaction (it used to
// count from before the wait: a checkpoint behind a 200 ms Update showed
// a 200 ms stall of commits that never waited for it).
func TestCheckpointFreezeTime(t *testing.T) {
	db := openWithKey(t)
	const hold = 200 * time.Millisecond
	updateDone := startUpdate(db, func() { time.Sleep(hold) })
	ckptDone := make(chan error, 1)
	go func() { ckptDone <- db.Checkpoint() }()
	if err := <-updateDone; err != nil {
		t.Fatal(err)
	}
	if err := <-ckptDone; err != nil {
		t.Fatal(err)
	}
	st := db.Stats()
	if st.CheckpointFreezeTime >= hold/2 {
		t.Fatalf("freeze %v of a checkpoint that waited %v for the writer lock", st.CheckpointFreezeTime, hold)
	}
	if st.CheckpointTime < st.CheckpointFreezeTime {
		t.Fatalf("checkpoint time %v under its freeze %v", st.CheckpointTime, st.CheckpointFreezeTime)
	}
}

// startUpdate starts an Update that calls wait, holding the writer lock
// (a checkpoint started meanwhile waits for it), then sets "k"; it returns
// once the Update is inside, with the channel that gets its result.
func startUpdate(db *DB, wait func()) <-chan error {
	inUpdate, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- db.Update(func(tx *Tx) error {
			close(inUpdate)
			wait()
			return tx.Set([]byte("k"), []byte("w"))
		})
	}()
	<-inUpdate
	return done
}

// openWithKey opens a database on a MemFS holding "k", closed when the
// test ends (after its deferred calls).
func openWithKey(t *testing.T) *DB {
	t.Helper()
	db, err := Open("db", memOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	return db
}

package strata

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/vfs"
)

// TestZeroBatchRefused: a Batch not made by NewBatch (its zero value)
// refuses writes with an error; it panicked.
func TestZeroBatchRefused(t *testing.T) {
	var b Batch
	if err := b.Set([]byte("k"), []byte("v")); err == nil {
		t.Fatal("Set on a zero Batch succeeded")
	}
	if err := b.Delete([]byte("k")); err == nil {
		t.Fatal("Delete on a zero Batch succeeded")
	}
	if err := b.Commit(nil); err != nil {
		t.Fatalf("Commit of an empty zero Batch: %v", err)
	}
}

// TestNegativeCheckpointWALRefused: a negative CheckpointWAL is an error
// (it was taken as a threshold every commit passes: a checkpoint per
// commit).
func TestNegativeCheckpointWALRefused(t *testing.T) {
	o := memOptions(vfs.NewMem())
	o.CheckpointWAL = -1
	if db, err := Open("db", o); err == nil {
		db.Close()
		t.Fatal("Open accepted CheckpointWAL -1")
	}
}

// TestTxDoneSentinel: a transaction used after Update returned fails with
// ErrTxDone, which callers can test for.
func TestTxDoneSentinel(t *testing.T) {
	db, err := Open("db", memOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var leaked *Tx
	if err := db.Update(func(tx *Tx) error { leaked = tx; return tx.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	if err := leaked.Set([]byte("k2"), []byte("v")); !errors.Is(err, ErrTxDone) {
		t.Fatalf("Set after Update returned: %v", err)
	}
}

// TestOpenIteratorsFillTheCache: open iterators pin their leaves; enough
// of them in the smallest cache leave a partition no frame to free, and a
// read then fails with ErrCacheFull (after the frame wait, shortened
// here), not a hang and not an error callers cannot test for. Closing the
// iterators makes reads work again.
func TestOpenIteratorsFillTheCache(t *testing.T) {
	defer func(d time.Duration) { bufferpool.FrameWaitLimit = d }(bufferpool.FrameWaitLimit)
	bufferpool.FrameWaitLimit = 100 * time.Millisecond
	o := memOptions(vfs.NewMem())
	o.CacheSize = 2 * (8*4096 + 64<<10) // the smallest cache Open accepts
	db, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const rows = 20000
	key := func(i int) []byte { return []byte(fmt.Sprintf("key%08d", i)) }
	b := db.NewBatch()
	for i := 0; i < rows; i++ {
		b.Set(key(i), make([]byte, 200))
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	var its []*Iterator
	defer func() {
		for _, it := range its {
			it.Close()
		}
	}()
	var full error
	for i := 0; i < 1000 && full == nil; i++ {
		it, err := db.NewIter(nil)
		if err != nil {
			full = err
			break
		}
		its = append(its, it)
		if !it.SeekGE(key(i * 19 % rows)) {
			full = it.Error()
		}
	}
	if !errors.Is(full, ErrCacheFull) {
		t.Fatalf("%d open iterators: %v, want ErrCacheFull", len(its), full)
	}
	for _, it := range its {
		it.Close()
	}
	its = nil
	if _, err := db.Get(key(7)); err != nil {
		t.Fatalf("Get after the iterators closed: %v", err)
	}
}

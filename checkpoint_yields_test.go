package strata

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestCheckpointYieldsTheProcessor: a checkpoint writing back hundreds of
// dirty pages (a compression each) lets other goroutines run between its
// pages, instead of holding the processor until the scheduler preempts it
// (up to 10 ms): with the CPUs busy writing back, commits woken for their
// locks waited for a processor behind it, up to 120 ms at 15,000 paced
// updates a second (docs/BENCHMARKS.md, seventeenth session). With one P,
// the test's goroutine runs only when the checkpoint's goroutine yields
// or is preempted; it counts the distinct numbers of pages written that
// it sees while the checkpoint runs. No timing is measured.
func TestCheckpointYieldsTheProcessor(t *testing.T) {
	opts := memOptions(vfs.NewMem())
	opts.CacheSize, opts.Codec = 16<<20, "zstd"
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	value := make([]byte, 100)
	for i := 0; i < 30000; i += 1000 {
		b := db.NewBatch()
		for j := i; j < i+1000; j++ {
			for k := range value {
				value[k] = byte(j * (k + 1))
			}
			if err := b.Set([]byte(fmt.Sprintf("key%08d", j)), value); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(NoSync); err != nil {
			t.Fatal(err)
		}
	}
	before := db.pool.Stats().FlushAllWrites
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	done := make(chan error, 1)
	go func() { done <- db.Checkpoint() }()
	seen := make(map[int64]bool)
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		default:
			seen[db.pool.Stats().FlushAllWrites] = true
			runtime.Gosched()
		}
	}
	written := db.pool.Stats().FlushAllWrites - before
	if written < 200 {
		t.Fatalf("the checkpoint wrote %d pages: want hundreds for the test to mean anything", written)
	}
	if int64(len(seen)) < written/4 {
		t.Fatalf("the checkpoint wrote %d pages and let another goroutine run at %d of them: want it to yield after each page", written, len(seen))
	}
}

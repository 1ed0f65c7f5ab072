package strata

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestCommitThatCannotBeUndoneShowsNothing: a commit fails part-way (page
// reads fail), and putting back the pages it had changed in place fails
// too (the pages were written back and evicted meanwhile, and the reads
// still fail). The tree then holds part of a commit that never happened:
// no read may return it, no checkpoint may make it durable, and reopening
// recovers the last commit.
func TestCommitThatCannotBeUndoneShowsNothing(t *testing.T) {
	undoFailed := 0
	for _, after := range []int{25, 50, 75, 100, 150} {
		fs := vfs.NewMem()
		opts := memOptions(fs)
		opts.CacheSize = 256 << 10 // small: changed pages are written back and evicted during the commit
		opts.CheckpointWAL = 1 << 40
		opts.CheckpointReplaced = -1
		opts.DisableDeferredCommits = true // the commit itself meets the failures
		db, err := Open("db", opts)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		random := func(n int) []byte {
			v := make([]byte, n)
			for i := range v {
				v[i] = byte(rng.Uint32())
			}
			return v
		}
		model := map[string]string{}
		commit := func(step int) {
			b := db.NewBatch()
			for i := 0; i < 4000; i += step {
				k, v := fmt.Sprintf("k%05d", i), random(200)
				b.Set([]byte(k), v)
				model[k] = string(v)
			}
			if err := b.Commit(nil); err != nil {
				t.Fatal(err)
			}
		}
		commit(1)
		if err := db.Checkpoint(); err != nil {
			t.Fatal(err)
		}
		commit(5) // leaves copied once: the failing commit changes them in place
		var reads atomic.Int64
		var on atomic.Bool
		fs.SetInjector(func(op vfs.Op, path string) error {
			if op == vfs.OpRead && on.Load() && !strings.Contains(path, "/wal/") && reads.Add(1) > int64(after) {
				return vfs.InjectedError(op, path)
			}
			return nil
		})
		b := db.NewBatch()
		for i := 0; i < 4000; i += 3 {
			b.Set([]byte(fmt.Sprintf("k%05d", i)), []byte("FAILED"))
		}
		on.Store(true)
		err = b.Commit(nil)
		on.Store(false)
		fs.SetInjector(nil)
		if err == nil {
			for i := 0; i < 4000; i += 3 {
				model[fmt.Sprintf("k%05d", i)] = "FAILED"
			}
		}
		failed := db.failed != nil
		if failed {
			undoFailed++
		}
		for i := 0; i < 4000; i += 3 {
			k := fmt.Sprintf("k%05d", i)
			if v, gerr := db.Get([]byte(k)); gerr == nil && string(v) != model[k] {
				t.Fatalf("reads after %d: %s = %.10q from a failed commit (commit: %v)", after, k, v, err)
			}
		}
		if cerr := db.Checkpoint(); failed && cerr == nil {
			t.Fatalf("reads after %d: a checkpoint succeeded after a commit that could not be undone", after)
		}
		db.Close()
		db, err = Open("db", opts)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		got := scanAll(t, db)
		for k, v := range model {
			if got[k] != v {
				t.Fatalf("reads after %d, reopened: %s = %.10q, want %.10q", after, k, got[k], v)
			}
		}
		db.Close()
	}
	if undoFailed == 0 {
		t.Fatal("no commit failed to be undone: the test checks nothing")
	}
}

package strata

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// undoFixture is a database whose next large commit changes leaves in
// place while its small cache writes changed pages back and evicts them,
// so that putting them back (the commit's undo) must read them again.
type undoFixture struct {
	fs    *vfs.MemFS
	opts  *Options
	db    *DB
	model map[string]string
}

func newUndoFixture(t *testing.T, logger *slog.Logger) *undoFixture {
	t.Helper()
	f := &undoFixture{fs: vfs.NewMem(), model: map[string]string{}}
	f.opts = memOptions(f.fs)
	f.opts.CacheSize = 256 << 10 // small: changed pages are written back and evicted during the commit
	f.opts.CheckpointWAL = 1 << 40
	f.opts.CheckpointReplaced = -1
	f.opts.DisableDeferredCommits = true // the commit itself meets the failures
	if logger != nil {
		f.opts.Logger = logger
	}
	db, err := Open("db", f.opts)
	if err != nil {
		t.Fatal(err)
	}
	f.db = db
	rng := rand.New(rand.NewPCG(1, 2))
	commit := func(step int) {
		b := db.NewBatch()
		for i := 0; i < 4000; i += step {
			k, v := fmt.Sprintf("k%05d", i), make([]byte, 200)
			for j := range v {
				v[j] = byte(rng.Uint32())
			}
			b.Set([]byte(k), v)
			f.model[k] = string(v)
		}
		if err := b.Commit(nil); err != nil {
			t.Fatal(err)
		}
	}
	commit(1)
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	commit(5) // leaves copied once: the next commit changes them in place
	return f
}

// failingCommit commits "FAILED" to every third key with reads of the
// segment files failing as fail says (called with the count of such reads
// so far, from 1), and returns the commit's error. A commit that
// succeeded goes into the model.
func (f *undoFixture) failingCommit(fail func(n int64) bool) error {
	var reads atomic.Int64
	var on atomic.Bool
	f.fs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpRead && on.Load() && !strings.Contains(path, "/wal/") && fail(reads.Add(1)) {
			return vfs.InjectedError(op, path)
		}
		return nil
	})
	b := f.db.NewBatch()
	for i := 0; i < 4000; i += 3 {
		b.Set([]byte(fmt.Sprintf("k%05d", i)), []byte("FAILED"))
	}
	on.Store(true)
	err := b.Commit(nil)
	on.Store(false)
	f.fs.SetInjector(nil)
	if err == nil {
		for i := 0; i < 4000; i += 3 {
			f.model[fmt.Sprintf("k%05d", i)] = "FAILED"
		}
	}
	return err
}

// checkReopened closes the database, reopens it and compares every key
// with the model.
func (f *undoFixture) checkReopened(t *testing.T, what string) {
	t.Helper()
	f.db.Close()
	db, err := Open("db", f.opts)
	if err != nil {
		t.Fatalf("%s: reopen: %v", what, err)
	}
	defer db.Close()
	got := scanAll(t, db)
	for k, v := range f.model {
		if got[k] != v {
			t.Fatalf("%s, reopened: %s = %.10q, want %.10q", what, k, got[k], v)
		}
	}
}

// TestCommitThatCannotBeUndoneShowsNothing: a commit fails part-way (page
// reads fail), and putting back the pages it had changed in place fails
// too (the pages were written back and evicted meanwhile, and the reads
// still fail, through every try). The tree then holds part of a commit
// that never happened: no read may return it, no checkpoint may make it
// durable, and reopening recovers the last commit.
func TestCommitThatCannotBeUndoneShowsNothing(t *testing.T) {
	undoFailed := 0
	for _, after := range []int{25, 50, 75, 100, 150} {
		f := newUndoFixture(t, nil)
		db, model := f.db, f.model
		err := f.failingCommit(func(n int64) bool { return n > int64(after) })
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
		f.checkReopened(t, fmt.Sprintf("reads after %d", after))
	}
	if undoFailed == 0 {
		t.Fatal("no commit failed to be undone: the test checks nothing")
	}
}

// TestCommitUndoSurvivesATransientReadError: a commit fails part-way
// (page reads fail), and the first reads of its undo fail too, then reads
// work again. The undo is tried again where it stopped, so the database
// keeps the last commit and accepts writes, without a reopen.
func TestCommitUndoSurvivesATransientReadError(t *testing.T) {
	retried := 0
	for _, after := range []int{10, 25, 50, 75, 100} {
		for _, failing := range []int64{2, 3} {
			var logged lockedBuffer
			f := newUndoFixture(t, slog.New(slog.NewTextHandler(&logged, nil)))
			what := fmt.Sprintf("reads after %d failing %d", after, failing)
			// The commit meets the first failure and stops; the undo meets
			// the others.
			err := f.failingCommit(func(n int64) bool { return n > int64(after) && n <= int64(after)+failing })
			if err == nil { // it needed fewer reads
				f.checkReopened(t, what)
				continue
			}
			if f.db.failed != nil {
				t.Fatalf("%s: the database refuses writes after a transient error: %v", what, f.db.failed)
			}
			if strings.Contains(logged.String(), "undoing a failed commit, trying again") {
				retried++
			}
			got := scanAll(t, f.db)
			for k, v := range f.model {
				if got[k] != v {
					t.Fatalf("%s: %s = %.10q, want %.10q", what, k, got[k], v)
				}
			}
			if len(got) != len(f.model) {
				t.Fatalf("%s: %d keys, want %d", what, len(got), len(f.model))
			}
			b := f.db.NewBatch()
			b.Set([]byte("k00000"), []byte("after"))
			if err := b.Commit(nil); err != nil {
				t.Fatalf("%s: a commit after the undo: %v", what, err)
			}
			f.model["k00000"] = "after"
			f.checkReopened(t, what)
		}
	}
	if retried == 0 {
		t.Fatal("no undo met a failed read: the test checks nothing")
	}
}

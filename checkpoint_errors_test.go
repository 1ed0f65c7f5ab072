package strata

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestCheckpointFailingAfterItsMetaPageKeepsItsTree: a checkpoint that
// fails after its meta page reached the store (here: removing the old WAL
// file fails, at its rename out of the log) may still be the one recovery starts from. The pages of its
// tree must then outlive later commits until a checkpoint succeeds: a crash
// finds them intact, whatever the commits in between freed.
func TestCheckpointFailingAfterItsMetaPageKeepsItsTree(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs)
	opts.Sync = SyncNever
	opts.CheckpointWAL = 1 << 40
	opts.CheckpointReplaced = -1
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	model := map[string]string{}
	write := func(round int) {
		b := db.NewBatch()
		for i := 0; i < 2000; i++ {
			k := fmt.Sprintf("key%05d", i)
			v := fmt.Sprintf("round%d-%d", round, i)
			b.Set([]byte(k), []byte(v))
			model[k] = v
		}
		if err := b.Commit(nil); err != nil {
			t.Fatal(err)
		}
	}
	write(0)
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	// Every leaf is copied (the checkpoint froze them): the copies are
	// new since that checkpoint.
	write(1)
	var failRemove, failWALSync atomic.Bool
	fs.SetInjector(func(op vfs.Op, path string) error {
		switch {
		case op == vfs.OpRename && failRemove.Load() && strings.Contains(path, "/wal/"),
			op == vfs.OpSync && failWALSync.Load() && strings.Contains(path, "/wal/"):
			return vfs.InjectedError(op, path)
		}
		return nil
	})
	failRemove.Store(true)
	if err := db.Checkpoint(); err == nil {
		t.Fatal("checkpoint with a failing WAL file removal succeeded")
	}
	failRemove.Store(false)
	want := make(map[string]string, len(model))
	for k, v := range model {
		want[k] = v // the failed checkpoint's meta page is durable
	}
	// Copy every leaf again, replacing the pages of the failed
	// checkpoint's tree, then a checkpoint that writes the tree's pages
	// (and the frees) but fails before its meta page: the crash finds
	// the failed checkpoint's meta page and the WAL lost.
	write(2)
	failWALSync.Store(true)
	if err := db.Checkpoint(); err == nil {
		t.Fatal("checkpoint with a failing WAL fsync succeeded")
	}
	crashed := fs.CrashClone(vfs.CrashDropUnsynced, nil)
	fs.SetInjector(nil)
	db.Close()

	db, err = Open("db", memOptions(crashed))
	if err != nil {
		t.Fatalf("reopen after the crash: %v", err)
	}
	defer db.Close()
	got := scanAll(t, db)
	if len(got) != len(want) {
		t.Fatalf("after the crash: %d keys, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("after the crash: %s = %q, want %q", k, got[k], v)
		}
	}
}

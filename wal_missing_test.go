package strata

import (
	"fmt"
	"path"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestMissingWALContinuesNumbering: with the WAL's files removed after a
// clean close, Open numbers new commits after the checkpoint, so synced
// commits made then survive a crash (they were skipped as already
// checkpointed when the log restarted at record 1).
func TestMissingWALContinuesNumbering(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs)
	opts.CheckpointWAL = 1 << 30
	opts.CheckpointReplaced = -1
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if err := db.Set([]byte(fmt.Sprintf("old%03d", i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	names, err := fs.List("db/wal")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := fs.Remove(path.Join("db/wal", n)); err != nil {
			t.Fatal(err)
		}
	}
	if db, err = Open("db", opts); err != nil {
		t.Fatalf("open without WAL files: %v", err)
	}
	for i := 0; i < 10; i++ {
		b := db.NewBatch()
		if err := b.Set([]byte(fmt.Sprintf("new%03d", i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(Sync); err != nil {
			t.Fatal(err)
		}
	}
	db = reopenAfterCrash(t, fs, db)
	for _, k := range []string{"old049", "new000", "new009"} {
		if _, err := db.Get([]byte(k)); err != nil {
			t.Errorf("get %s after the crash: %v", k, err)
		}
	}
}

package strata

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestReopenAfterFailedWALSync: a database reopened in the same boot after
// a WAL fsync failed (its process restarted on the error) replays commits
// that may be only in the OS's cache (MemFS loses a failed Sync's dirty
// bytes), and it skips the WAL's own rewrite of them (wal.Options
// SkipRecoveryRewrite): Open checkpoints them and rotates the log, so the
// commits of the new session, synced, survive a power loss, and so do the
// replayed ones.
func TestReopenAfterFailedWALSync(t *testing.T) {
	fs := vfs.NewMem()
	opts := func() *Options {
		o := memOptions(fs)
		o.Sync = SyncNever
		return o
	}
	db, err := Open("db", opts())
	if err != nil {
		t.Fatal(err)
	}
	val := func(i int) []byte { return []byte(fmt.Sprintf("%d %s", i, strings.Repeat("v", 1000))) }
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%03d", i)) }
	for i := range 20 {
		if err := db.Set(key(i), val(i)); err != nil {
			t.Fatal(err)
		}
	}
	fs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpSync && strings.Contains(path, "wal") {
			return vfs.InjectedError(op, path) // the kernel's fsync failed: the dirty bytes are lost
		}
		return nil
	})
	if err := db.Sync(); err == nil {
		t.Fatal("sync did not fail")
	}
	fs.SetInjector(nil)
	db.Close() // its error is the failed sync's

	db, err = Open("db", opts())
	if err != nil {
		t.Fatal(err)
	}
	for i := 20; i < 25; i++ {
		b := db.NewBatch()
		if err := b.Set(key(i), val(i)); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(Sync); err != nil {
			t.Fatal(err)
		}
	}
	after := fs.CrashClone(vfs.CrashDropUnsynced, nil) // a power loss now
	db.Close()
	o := opts()
	o.fs = after
	db, err = Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 25 {
		if v, err := db.Get(key(i)); err != nil || string(v) != string(val(i)) {
			t.Fatalf("key %d after the power loss: %v", i, err)
		}
	}
}

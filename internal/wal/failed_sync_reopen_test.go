package wal

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestReopenAfterFailedSync: a log reopened in the same boot after a
// failed fsync (its process restarted on the error) claims as synced the
// records it read back, and appends after them. Linux marks the pages
// whose write-back failed clean, so those records read back from the
// cache but a later fsync does not write them (MemFS loses a failed
// Sync's dirty bytes): after a power loss they were a hole, and the
// records appended and synced after them were dropped with it as a torn
// tail. Recovery writes them again before it syncs (vfs.RewriteRange).
func TestReopenAfterFailedSync(t *testing.T) {
	fs := vfs.NewMem()
	opts := Options{FS: fs, SyncMode: SyncNever}
	l, err := Open("wal", opts)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 20 {
		// 1 KiB each: pages that the appends after the restart do not
		// touch (a write dirties its whole page again, lost bytes too).
		p := fmt.Sprintf("before the failed sync %d %s", i, strings.Repeat("x", 1000))
		if _, err := l.Append([]byte(p)); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	fs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpSync {
			return vfs.InjectedError(op, path) // the kernel's fsync failed: MemFS loses the dirty bytes
		}
		return nil
	})
	if err := l.Sync(); err == nil {
		t.Fatal("sync did not fail")
	}
	fs.SetInjector(nil)
	l.Close() // its error is the failed sync's

	// The same boot: the records read back from the cache.
	l2, err := Open("wal", opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := l2.SyncedLSN(); got != 20 {
		t.Fatalf("SyncedLSN after reopening = %d, want 20", got)
	}
	for i := range 5 {
		p := fmt.Sprintf("after the restart %d", i)
		if _, err := l2.Append([]byte(p)); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	if err := l2.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	fs.Crash(vfs.CrashDropUnsynced, nil)

	l3, err := Open("wal", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l3.Close()
	var got []string
	if err := l3.Replay(1, func(_ uint64, p []byte) error {
		got = append(got, string(p))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after a power loss the log holds %d records, want the %d it synced", len(got), len(want))
	}
}

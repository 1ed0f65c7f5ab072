package wal

import (
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestMinNextLSN: a log behind its caller's checkpoint moves on, at Open,
// to a new file numbered from there; the records appended then are
// replayed from that LSN after a crash, and the old files are removable. A
// log already past MinNextLSN is unchanged.
func TestMinNextLSN(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, testDir, Options{FS: fs})
	for i := 0; i < 3; i++ {
		lsn, err := l.Append([]byte("old"))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.WaitDurable(lsn); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	l = mustOpen(t, testDir, Options{FS: fs, MinNextLSN: 2})
	if l.NextLSN() != 4 {
		t.Fatalf("MinNextLSN below the end: next %d, want 4", l.NextLSN())
	}
	l.Close()
	l = mustOpen(t, testDir, Options{FS: fs, MinNextLSN: 10})
	lsn, err := l.Append([]byte("new"))
	if err != nil || lsn != 10 {
		t.Fatalf("append after MinNextLSN 10: lsn %d, %v", lsn, err)
	}
	if err := l.WaitDurable(lsn); err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone(vfs.CrashDropUnsynced, nil)
	l.Close()
	l = mustOpen(t, testDir, Options{FS: crashed})
	defer l.Close()
	if recs := replayAll(t, l, 10); len(recs) != 1 || recs[0].lsn != 10 || string(recs[0].payload) != "new" {
		t.Fatalf("replay from 10: %v", recs)
	}
	if l.NextLSN() != 11 {
		t.Fatalf("next LSN after reopen: %d", l.NextLSN())
	}
	if err := l.TruncateBefore(10); err != nil {
		t.Fatal(err)
	}
	if l.FirstLSN() != 10 {
		t.Fatalf("first LSN after truncation: %d", l.FirstLSN())
	}
}

package wal

import (
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestSkipTo: a log behind its caller's checkpoint moves on to a new file
// numbered from there; the records appended then are replayed from that
// LSN after a crash, and the old files are removable.
func TestSkipTo(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, testDir, Options{FS: fs})
	for i := 0; i < 3; i++ {
		if _, err := l.Append([]byte("old"), true); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.SkipTo(2); err != nil || l.NextLSN() != 4 {
		t.Fatalf("SkipTo below the end: %v, next %d", err, l.NextLSN())
	}
	if err := l.SkipTo(10); err != nil {
		t.Fatal(err)
	}
	if lsn, err := l.Append([]byte("new"), true); err != nil || lsn != 10 {
		t.Fatalf("append after SkipTo: lsn %d, %v", lsn, err)
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

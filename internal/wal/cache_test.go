package wal

import (
	"errors"
	"os"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// writebackFS gives the log's files a Writebacker that records the ranges
// dropped and can fail.
type writebackFS struct {
	vfs.FS
	dropped []int64 // ends of the ranges DropWritten was given, in order
	fail    error
}

func (w *writebackFS) OpenFile(name string, flag int, perm os.FileMode, o vfs.OpenOptions) (vfs.File, error) {
	f, err := w.FS.OpenFile(name, flag, perm, o)
	if err != nil {
		return nil, err
	}
	return &writebackFile{File: f, fs: w}, nil
}

type writebackFile struct {
	vfs.File
	fs *writebackFS
}

func (f *writebackFile) StartWriteback(off, n int64) error { return nil }

func (f *writebackFile) DropWritten(off, n int64) error {
	if f.fs.fail != nil {
		return f.fs.fail
	}
	if k := len(f.fs.dropped); k > 0 && off != f.fs.dropped[k-1] && off != 0 {
		return errors.New("a gap between dropped ranges")
	}
	f.fs.dropped = append(f.fs.dropped, off+n)
	return nil
}

// TestCacheReleased: the writer drops the log's written pages from the
// page cache chunk by chunk, leaving at most about two chunks (plus the
// batches that crossed them) of the active file, and drops the rest of a
// file when it moves on from it. A failed writeback fails the log, since
// waiting for it consumed the error a later fsync would have reported.
func TestCacheReleased(t *testing.T) {
	const queueSize = 16 << 10
	fs := &writebackFS{FS: vfs.NewMem()}
	l := mustOpen(t, testDir, Options{FS: fs, SyncMode: SyncNever, QueueSize: queueSize, FileSize: 4 << 20})
	p := make([]byte, 1000)
	for range 3000 { // 3 MB: one file
		if _, err := l.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.settle(); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	end := l.off
	l.mu.Unlock()
	if len(fs.dropped) == 0 {
		t.Fatalf("nothing dropped after writing %d bytes", end)
	}
	if last := fs.dropped[len(fs.dropped)-1]; end-last > 2*(cacheChunk+queueSize) {
		t.Errorf("%d bytes written, dropped up to %d: %d left in the page cache", end, last, end-last)
	}
	if err := l.Rotate(); err != nil {
		t.Fatal(err)
	}
	if last := fs.dropped[len(fs.dropped)-1]; last != end {
		t.Errorf("after the rotation dropped up to %d, want the old file's end %d", last, end)
	}

	fs.fail = errors.New("writeback failed")
	for range 1000 {
		if _, err := l.Append(p); err != nil {
			break
		}
	}
	if err := l.Sync(); !errors.Is(err, fs.fail) {
		t.Errorf("Sync after a failed writeback: %v, want the writeback's error", err)
	}
	if err := l.Close(); !errors.Is(err, fs.fail) {
		t.Errorf("Close: %v, want the writeback's error", err)
	}
}

package pagestore

import (
	"errors"
	"fmt"
	"io"

	"github.com/stratadb/strata/internal/vfs"
)

// This file gives the record walk (walkRecords) the bytes of a segment:
// from memory (Inspect, tests) or through a window that slides over the
// file (recovery), so that replaying a log of any length holds one window
// of it, not whole segments. Neither kind is safe for concurrent use; a
// store's recovery runs before anything else uses the store.

// segmentBytes are the bytes of one segment file.
type segmentBytes interface {
	// size is the number of bytes.
	size() int64
	// span returns bytes [off, min(off+n, size)), valid until the next
	// call. off < size and n <= maxSpan().
	span(off, n int64) ([]byte, error)
	// maxSpan is the largest n span accepts.
	maxSpan() int64
}

// memBytes is a segment held in memory.
type memBytes []byte

func (b memBytes) size() int64                       { return int64(len(b)) }
func (b memBytes) span(off, n int64) ([]byte, error) { return b[off:min(off+n, int64(len(b)))], nil }
func (b memBytes) maxSpan() int64                    { return int64(len(b)) }

// replayWindow is the size of the window recovery reads segments through
// (a variable: tests shrink it so that records straddle refills).
var replayWindow = 1 << 20

// segmentWindow reads a segment file through an aligned buffer, whole
// blocks at a time (the file may be open for direct I/O). Each refill reads
// a window's worth from the block holding the first byte asked for.
type segmentWindow struct {
	f     vfs.File
	end   int64  // the file's size
	buf   []byte // BlockSize-aligned
	start int64  // file offset of buf[0]
	n     int64  // bytes of buf read from the file
}

// newSegmentWindow returns a window of at least replayWindow bytes, and of
// at least one record of pageSize-byte pages plus a block.
func newSegmentWindow(pageSize int) *segmentWindow {
	return &segmentWindow{buf: vfs.AlignedBuffer(max(replayWindow, recordHeaderSize+pageSize+vfs.BlockSize))}
}

// reset points the window at f, size bytes long.
func (w *segmentWindow) reset(f vfs.File, size int64) {
	w.f, w.end, w.start, w.n = f, size, 0, 0
}

func (w *segmentWindow) size() int64    { return w.end }
func (w *segmentWindow) maxSpan() int64 { return int64(len(w.buf)) - vfs.BlockSize }

func (w *segmentWindow) span(off, n int64) ([]byte, error) {
	hi := min(off+n, w.end)
	if off < w.start || hi > w.start+w.n {
		start := off &^ (vfs.BlockSize - 1)
		want := min(int64(len(w.buf)), (w.end-start+vfs.BlockSize-1)&^(vfs.BlockSize-1))
		k, err := w.f.ReadAt(w.buf[:want], start)
		if err != nil && !errors.Is(err, io.EOF) {
			w.n = 0
			return nil, err
		}
		w.start, w.n = start, int64(k)
		if hi > start+w.n {
			w.n = 0
			return nil, fmt.Errorf("read %d bytes at %d of a %d-byte file: %w", k, start, w.end, io.ErrUnexpectedEOF)
		}
	}
	return w.buf[off-w.start : hi-w.start], nil
}

// allZeroFrom reports whether bytes [off, size) of src are all zero.
func allZeroFrom(src segmentBytes, off int64) (bool, error) {
	for end := src.size(); off < end; {
		b, err := src.span(off, src.maxSpan())
		if err != nil {
			return false, err
		}
		if !allZero(b) {
			return false, nil
		}
		off += int64(len(b))
	}
	return true, nil
}

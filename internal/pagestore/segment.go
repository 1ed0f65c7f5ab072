package pagestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/vfs"
)

// Segment header layout (little endian), see docs/FORMAT.md:
//
//	0  magic     [8]byte "STRATSEG"
//	8  version   uint32  2 (1: written before there were two streams)
//	12 page size uint32
//	16 segment   uint32  the segment's number (also in its file name)
//	20 stream    uint32  0: pages written by callers, 1: pages relocated by the cleaner (version 1: zero)
//	24 crc       uint32  CRC32C of bytes 0..24
//	28 reserved  uint32  zero
//
// Records follow from offset segmentHeaderSize, packed back to back. When
// the store syncs, it pads the rest of the current 4 KiB block with zeros so
// that no block holding synced records is ever written with other bytes
// (a torn rewrite of such a block could destroy acknowledged data).
// Recovery writes the blocks it replays again, byte for byte the same
// (vfs.RewriteRange, after a failed fsync), so a torn rewrite leaves each
// sector as it was. A zero where a record's magic would be therefore means
// "skip to the next block boundary".
const (
	segmentHeaderSize = 32
	segmentVersion    = 2
	segmentSuffix     = ".seg"
)

// Streams: the log has two heads. Pages written by callers go to the hot
// stream; the cleaner appends the live records it relocates to the cold
// stream, so that data that survived a cleaning pass (likely to stay) is not
// mixed with fresh writes (likely to be overwritten soon).
const (
	streamHot  = 0
	streamCold = 1
	numStreams = 2
)

var segmentMagic = [8]byte{'S', 'T', 'R', 'A', 'T', 'S', 'E', 'G'}

func encodeSegmentHeader(dst []byte, pageSize int, num uint32, stream int) {
	_ = dst[segmentHeaderSize-1]
	copy(dst, segmentMagic[:])
	binary.LittleEndian.PutUint32(dst[8:], segmentVersion)
	binary.LittleEndian.PutUint32(dst[12:], uint32(pageSize))
	binary.LittleEndian.PutUint32(dst[16:], num)
	binary.LittleEndian.PutUint32(dst[20:], uint32(stream))
	binary.LittleEndian.PutUint32(dst[24:], crc32.Checksum(dst[:24], castagnoli))
	binary.LittleEndian.PutUint32(dst[28:], 0)
}

// checkSegmentHeader verifies a segment header and returns the segment's
// stream.
func checkSegmentHeader(b []byte, pageSize int, num uint32) (int, error) {
	if len(b) < segmentHeaderSize {
		return 0, errors.New("short segment header")
	}
	if [8]byte(b[:8]) != segmentMagic {
		return 0, fmt.Errorf("bad segment magic %q", b[:8])
	}
	if got, want := binary.LittleEndian.Uint32(b[24:]), crc32.Checksum(b[:24], castagnoli); got != want {
		return 0, fmt.Errorf("segment header checksum mismatch (computed %#x, stored %#x)", want, got)
	}
	v := binary.LittleEndian.Uint32(b[8:])
	if v != 1 && v != segmentVersion {
		return 0, fmt.Errorf("unsupported segment version %d", v)
	}
	if ps := binary.LittleEndian.Uint32(b[12:]); ps != uint32(pageSize) {
		return 0, fmt.Errorf("segment page size %d, store page size %d", ps, pageSize)
	}
	if n := binary.LittleEndian.Uint32(b[16:]); n != num {
		return 0, fmt.Errorf("segment header says number %d, file name says %d", n, num)
	}
	stream := binary.LittleEndian.Uint32(b[20:])
	if stream >= numStreams || (v == 1 && stream != 0) {
		return 0, fmt.Errorf("segment stream %d out of range", stream)
	}
	return int(stream), nil
}

func segmentFileName(num uint32) string { return fmt.Sprintf("%08d%s", num, segmentSuffix) }

// parseSegmentFileName returns the number of a segment file name, or false.
func parseSegmentFileName(name string) (uint32, bool) {
	s, ok := strings.CutSuffix(name, segmentSuffix)
	// Names have at least 8 digits; numbers past 99,999,999 take more.
	if !ok || len(s) < 8 || len(s) > 10 || (len(s) > 8 && s[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 {
		return 0, false
	}
	return uint32(n), true
}

// segment is one log file. The Store's table holds one reference; readers
// and the writer of its buffers pin it while they use the file, so that the
// cleaner can drop a segment while a read is in flight and the file is
// closed only after the last user.
type segment struct {
	num    uint32
	stream int
	path   string
	f      vfs.File
	refs   atomic.Int32
	// freeing is set when its file was removed (Store.checkpoint, an
	// obsolete segment): the last unpin then hands the open file to a
	// goroutine of its own, counted in freeing, which frees its blocks a
	// few MiB at a time before it closes it (the close of a removed 64
	// MiB file freed them all at once, 7–8 ms in the kernel on ext4,
	// holding a Go processor: vfs.RemoveGradually says why that stalls
	// others). Not on the unpinning goroutine: that may be a read a
	// commit waits for.
	freeing atomic.Pointer[sync.WaitGroup]

	// Guarded by Store.mu.
	size    int64  // bytes of the segment holding data (for a head: its append position)
	live    int64  // bytes of the records the page map points to
	written int64  // bytes [0, written) are in the file; [written, size) are in write buffers
	synced  int64  // bytes [0, synced) are durable
	sealed  bool   // no more records will be appended: the stream rolled over to a new segment
	stamp   uint64 // sequence number of its newest record: its age for the cleaner (clean.go)
	// stampDirty: stamp changed since the last checkpoint recorded it.
	stampDirty bool
}

// cleanable says whether the cleaner may take seg as a victim: it is whole
// and durable, so its records can be read from the file and recovery will
// never replay it. Called with Store.mu held.
func (s *segment) cleanable() bool { return s.sealed && s.synced >= s.size }

func (s *segment) pin() { s.refs.Add(1) }

// freeStep is how much of a removed segment's file each truncation frees
// (tests make it smaller).
var freeStep int64 = vfs.RemoveStep

// unpin drops a reference; the last one closes the file and returns the
// error of that (a removed file is freed and closed in the background).
func (s *segment) unpin() error {
	if s.refs.Add(-1) != 0 {
		return nil
	}
	if wg := s.freeing.Load(); wg != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = vfs.FreeGradually(s.f, freeStep) // what it leaves, the close frees
			s.f.Close()                          // removed: nothing to report an error to
		}()
		return nil
	}
	return s.f.Close()
}

// readAligned reads the n bytes at off into scratch and returns them. With
// direct I/O the read covers whole blocks, so scratch must be BlockSize
// aligned and at least n+2*BlockSize long. Reading up to the end of the file
// is fine: a record can end at EOF after recovery truncated the tail.
func readAligned(f vfs.File, scratch []byte, off int64, n int) ([]byte, error) {
	start := off &^ (vfs.BlockSize - 1)
	end := (off + int64(n) + vfs.BlockSize - 1) &^ (vfs.BlockSize - 1)
	if !f.Direct() {
		start, end = off, off+int64(n)
	}
	buf := scratch[:end-start]
	got, err := f.ReadAt(buf, start)
	if int64(got) < off-start+int64(n) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf[off-start : off-start+int64(n)], nil
}

func segmentPath(dir string, num uint32) string { return filepath.Join(dir, segmentFileName(num)) }

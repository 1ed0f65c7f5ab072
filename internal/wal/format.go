package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// File header layout (little endian), see docs/WAL.md:
//
//	0  magic     [8]byte "STRATWAL"
//	8  version   uint32  1
//	12 number    uint32  the file's number (also in its name)
//	16 first LSN uint64  LSN of the file's first record (the next LSN when
//	                     the file was created, so also valid for an empty file)
//	24 reserved  uint32  zero
//	28 crc       uint32  CRC-32C of bytes 0..28
const (
	fileHeaderSize = 32
	fileVersion    = 1
	filePrefix     = "wal-"
	fileSuffix     = ".log"
	// deadSuffix marks a file TruncateBefore removed from the log and is
	// freeing (it ends the name of a log file).
	deadSuffix = ".dead"
	lockName   = "wal.lock"
)

var fileMagic = [8]byte{'S', 'T', 'R', 'A', 'T', 'W', 'A', 'L'}

// Record layout (little endian), packed back to back after the file header:
//
//	0  crc     uint32  CRC-32C of the payload followed by bytes 4..16
//	4  length  uint32  payload length, at most MaxRecordSize
//	8  lsn     uint64  log sequence number
//	16 payload [length]byte
//
// The checksum covers the payload first so that Append can checksum a
// payload before it takes the log's lock and finish with the 12 header
// bytes (which hold the LSN assigned under the lock) inside it.
const recordHeaderSize = 16

// MaxRecordSize is the largest payload Append accepts. It bounds what
// recovery allocates for a record whose length field is garbage, and keeps a
// single record from monopolising a group-commit batch.
const MaxRecordSize = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func encodeFileHeader(dst []byte, num uint32, firstLSN uint64) {
	_ = dst[fileHeaderSize-1]
	copy(dst, fileMagic[:])
	binary.LittleEndian.PutUint32(dst[8:], fileVersion)
	binary.LittleEndian.PutUint32(dst[12:], num)
	binary.LittleEndian.PutUint64(dst[16:], firstLSN)
	binary.LittleEndian.PutUint32(dst[24:], 0)
	binary.LittleEndian.PutUint32(dst[28:], crc32.Checksum(dst[:28], castagnoli))
}

// decodeFileHeader checks a file header against the number in the file's
// name and returns the first LSN it records.
func decodeFileHeader(b []byte, num uint32) (firstLSN uint64, err error) {
	if len(b) < fileHeaderSize {
		return 0, fmt.Errorf("short file header (%d bytes)", len(b))
	}
	if [8]byte(b[:8]) != fileMagic {
		return 0, fmt.Errorf("bad file magic %q", b[:8])
	}
	if got, want := binary.LittleEndian.Uint32(b[28:]), crc32.Checksum(b[:28], castagnoli); got != want {
		return 0, fmt.Errorf("file header checksum mismatch (computed %#x, stored %#x)", want, got)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != fileVersion {
		return 0, fmt.Errorf("unsupported WAL version %d", v)
	}
	if n := binary.LittleEndian.Uint32(b[12:]); n != num {
		return 0, fmt.Errorf("file header says number %d, file name says %d", n, num)
	}
	firstLSN = binary.LittleEndian.Uint64(b[16:])
	if firstLSN == 0 {
		return 0, errors.New("file header has first LSN 0")
	}
	return firstLSN, nil
}

// payloadCRC is the first part of a record checksum; see appendRecord.
func payloadCRC(payload []byte) uint32 { return crc32.Update(0, castagnoli, payload) }

// appendRecord appends the record (lsn, payload) to dst. pcrc must be
// payloadCRC(payload).
func appendRecord(dst []byte, lsn uint64, payload []byte, pcrc uint32) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, recordHeaderSize)...) // no allocation if it fits
	putRecordHeader(dst[n:], lsn, len(payload), pcrc)
	return append(dst, payload...)
}

// putRecordHeader writes into h the header of record lsn whose payload is
// n bytes with checksum pcrc (payloadCRC).
func putRecordHeader(h []byte, lsn uint64, n int, pcrc uint32) {
	binary.LittleEndian.PutUint32(h[4:], uint32(n))
	binary.LittleEndian.PutUint64(h[8:], lsn)
	binary.LittleEndian.PutUint32(h[0:], crc32.Update(pcrc, castagnoli, h[4:recordHeaderSize]))
}

// Errors of decodeRecord. errShortRecord means the bytes end inside the
// record: at the end of the newest file that is a torn write.
var (
	errShortRecord = errors.New("record extends past the end of the data")
	errTooLarge    = errors.New("record length exceeds MaxRecordSize")
	errChecksum    = errors.New("record checksum mismatch")
)

// recordLength returns the payload length in a record header, which must
// be at least recordHeaderSize bytes.
func recordLength(h []byte) uint32 { return binary.LittleEndian.Uint32(h[4:]) }

// decodeRecord decodes the record at the start of b. It returns the LSN, the
// payload (aliasing b) and the record's total size. It never reads past b
// and never allocates, whatever b holds.
func decodeRecord(b []byte) (lsn uint64, payload []byte, size int, err error) {
	if len(b) < recordHeaderSize {
		return 0, nil, 0, errShortRecord
	}
	n := recordLength(b)
	if n > MaxRecordSize {
		return 0, nil, 0, fmt.Errorf("%w: %d bytes", errTooLarge, n)
	}
	size = recordHeaderSize + int(n)
	if len(b) < size {
		return 0, nil, 0, errShortRecord
	}
	payload = b[recordHeaderSize:size]
	want := crc32.Update(payloadCRC(payload), castagnoli, b[4:recordHeaderSize])
	if got := binary.LittleEndian.Uint32(b); got != want {
		return 0, nil, 0, errChecksum
	}
	return binary.LittleEndian.Uint64(b[8:]), payload, size, nil
}

// recordReader reads the records of one file sequentially. Its buffer is
// reused: a payload is valid until the next call to next.
type recordReader struct {
	r   io.Reader // positioned at off
	off int64     // file offset of the next record
	end int64     // file offset where the data ends
	buf []byte
}

// next returns the next record. At the end of the data it returns io.EOF.
// A record that does not decode (it runs past end, its length is too large
// or its checksum fails) is an error that does not wrap io.EOF, so that the
// caller can tell a clean end from a bad record; a read error is returned
// wrapped in readError.
func (rr *recordReader) next() (lsn uint64, payload []byte, err error) {
	if rr.off >= rr.end {
		return 0, nil, io.EOF
	}
	left := rr.end - rr.off
	if left < recordHeaderSize {
		return 0, nil, errShortRecord
	}
	if cap(rr.buf) < recordHeaderSize {
		rr.buf = make([]byte, recordHeaderSize, 64<<10)
	}
	h := rr.buf[:recordHeaderSize]
	if _, err := io.ReadFull(rr.r, h); err != nil {
		return 0, nil, readError{err}
	}
	n := recordLength(h)
	if n > MaxRecordSize {
		return 0, nil, fmt.Errorf("%w: %d bytes", errTooLarge, n)
	}
	size := int64(recordHeaderSize) + int64(n)
	if size > left {
		// Checked before allocating: a garbage length must not make
		// recovery allocate 64 MiB.
		return 0, nil, errShortRecord
	}
	if int64(cap(rr.buf)) < size {
		nb := make([]byte, size)
		copy(nb, h)
		rr.buf = nb
	}
	rec := rr.buf[:size]
	if _, err := io.ReadFull(rr.r, rec[recordHeaderSize:]); err != nil {
		return 0, nil, readError{err}
	}
	lsn, payload, _, err = decodeRecord(rec)
	if err != nil {
		return 0, nil, err
	}
	rr.off += size
	return lsn, payload, nil
}

// readError marks an I/O error (as opposed to bad data) from recordReader.
type readError struct{ err error }

func (e readError) Error() string { return e.err.Error() }
func (e readError) Unwrap() error { return e.err }

func fileName(num uint32) string { return fmt.Sprintf("%s%08d%s", filePrefix, num, fileSuffix) }

func filePath(dir string, num uint32) string { return filepath.Join(dir, fileName(num)) }

// parseFileName returns the number of a WAL file name, or false. Names have
// at least 8 digits; numbers past 99,999,999 take more, without leading
// zeros, so every number has exactly one name.
func parseFileName(name string) (uint32, bool) {
	s, ok := strings.CutPrefix(name, filePrefix)
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, fileSuffix)
	if !ok || len(s) < 8 || len(s) > 10 || (len(s) > 8 && s[0] == '0') {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 {
		return 0, false
	}
	return uint32(n), true
}

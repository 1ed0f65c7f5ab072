package pagestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/stratadb/strata/internal/vfs"
)

// The map log (file MAPLOG) holds delta checkpoints: each record is the
// page map entries that changed since the previous checkpoint (full or
// delta) and the log state at that point. A checkpoint appends a delta
// instead of rewriting the whole map as long as the log stays smaller than
// MapLogRatio times the full map; then it writes a full checkpoint of the
// next generation and empties the log. Recovery applies the full map and
// then the log's deltas of the same generation, in order.
//
// Record layout (little endian), see docs/FORMAT.md:
//
//	0  magic      [8]byte "STRATMDL"
//	8  length     uint32  bytes of the record from the magic to the crc, inclusive
//	12 version    uint32  1
//	16 generation uint64  of the full checkpoint the record extends
//	24 number     uint64  1, 2, ... within the generation
//	32 state      [32]byte ckptState
//	64 seg count S   uint32
//	68 entry count E uint32
//	72 segments   S × (num uint32, reserved uint32, stamp uint64)
//	.. entries    E × (page id uint32, seg uint32, off uint32, len uint32)
//	.. crc        uint32  CRC32C of the record before it
//
// followed by zeros to the next 4 KiB boundary: each record starts on a
// fresh block, so appending one never rewrites a block holding a synced
// record.
const (
	mapLogName       = "MAPLOG"
	mapDeltaHeader   = 72
	mapDeltaVersion  = 1
	mapDeltaEntry    = 16
	maxMapDeltaBytes = 1 << 30
)

var mapDeltaMagic = [8]byte{'S', 'T', 'R', 'A', 'T', 'M', 'D', 'L'}

// mapDelta is one decoded map log record.
type mapDelta struct {
	generation uint64
	number     uint64
	ckptState
	segs    []segInfo
	entries []mapEntry
}

func mapDeltaSize(nsegs, nentries int) int {
	return mapDeltaHeader + nsegs*segInfoSize + nentries*mapDeltaEntry + 4
}

// paddedSize rounds n up to a whole number of blocks.
func paddedSize(n int) int { return (n + vfs.BlockSize - 1) &^ (vfs.BlockSize - 1) }

// encode returns the record padded to whole blocks.
func (d *mapDelta) encode() []byte {
	n := mapDeltaSize(len(d.segs), len(d.entries))
	b := make([]byte, paddedSize(n))
	copy(b, mapDeltaMagic[:])
	binary.LittleEndian.PutUint32(b[8:], uint32(n))
	binary.LittleEndian.PutUint32(b[12:], mapDeltaVersion)
	binary.LittleEndian.PutUint64(b[16:], d.generation)
	binary.LittleEndian.PutUint64(b[24:], d.number)
	d.ckptState.encode(b[32:])
	binary.LittleEndian.PutUint32(b[64:], uint32(len(d.segs)))
	binary.LittleEndian.PutUint32(b[68:], uint32(len(d.entries)))
	p := encodeSegInfos(b[mapDeltaHeader:], d.segs)
	for _, e := range d.entries {
		binary.LittleEndian.PutUint32(p[0:], uint32(e.id))
		encodeLocation(p[4:], e.loc)
		p = p[mapDeltaEntry:]
	}
	binary.LittleEndian.PutUint32(p, crc32.Checksum(b[:n-4], castagnoli))
	return b
}

// mapDeltaLength returns the length a record claims, checking only what is
// needed to know how many bytes to read: the magic and a length in range.
func mapDeltaLength(b []byte) (int, error) {
	if len(b) < mapDeltaHeader+4 {
		return 0, errors.New("short map log record")
	}
	if [8]byte(b[:8]) != mapDeltaMagic {
		return 0, fmt.Errorf("bad map log record magic %q", b[:8])
	}
	n := binary.LittleEndian.Uint32(b[8:])
	if n < mapDeltaHeader+4 || n > maxMapDeltaBytes {
		return 0, fmt.Errorf("map log record length %d out of range", n)
	}
	return int(n), nil
}

// decodeMapDelta parses and validates one record at the start of b (which
// holds at least its length, padding not required). As with checkpoints,
// every field later code relies on is range-checked.
func decodeMapDelta(b []byte, pageSize uint32) (*mapDelta, error) {
	n, err := mapDeltaLength(b)
	if err != nil {
		return nil, err
	}
	if len(b) < n {
		return nil, fmt.Errorf("map log record of %d bytes cut at %d", n, len(b))
	}
	b = b[:n]
	if got, want := binary.LittleEndian.Uint32(b[n-4:]), crc32.Checksum(b[:n-4], castagnoli); got != want {
		return nil, fmt.Errorf("map log record checksum mismatch (computed %#x, stored %#x)", want, got)
	}
	if v := binary.LittleEndian.Uint32(b[12:]); v != mapDeltaVersion {
		return nil, fmt.Errorf("unsupported map log record version %d", v)
	}
	d := &mapDelta{
		generation: binary.LittleEndian.Uint64(b[16:]),
		number:     binary.LittleEndian.Uint64(b[24:]),
	}
	if d.ckptState, err = decodeCkptState(b[32:]); err != nil {
		return nil, err
	}
	nsegs := int(binary.LittleEndian.Uint32(b[64:]))
	nentries := int(binary.LittleEndian.Uint32(b[68:]))
	if uint64(nsegs) > uint64(d.nextSegNum) || mapDeltaSize(nsegs, nentries) != n {
		return nil, fmt.Errorf("map log record counts %d, %d do not match its length %d", nsegs, nentries, n)
	}
	var p []byte
	if d.segs, p, err = decodeSegInfos(b[mapDeltaHeader:], nsegs, d.nextSegNum); err != nil {
		return nil, err
	}
	d.entries = make([]mapEntry, nentries)
	for i := range d.entries {
		id := binary.LittleEndian.Uint32(p[0:])
		loc, err := decodeLocation(p[4:], uint64(id), pageSize, d.nextSegNum)
		if err != nil {
			return nil, err
		}
		d.entries[i] = mapEntry{id: PageID(id), loc: loc}
		p = p[mapDeltaEntry:]
	}
	return d, nil
}

// readMapLog reads the deltas of generation gen from f. It returns them in
// order and the size of the valid prefix of the file: what follows it is a
// record torn by a crash while it was being appended, or records of an older
// generation that a crash kept the log from being emptied of. Either was
// never acknowledged or is obsolete, so the caller truncates the file
// there. A valid record of gen after an invalid one is corruption: records
// are appended one at a time, each synced before the next. With that error
// it still returns the deltas before the invalid record.
func readMapLog(f vfs.File, gen uint64, pageSize uint32) ([]*mapDelta, int64, error) {
	size, err := f.Size()
	if err != nil {
		return nil, 0, err
	}
	var deltas []*mapDelta
	off := int64(0)
	block := make([]byte, vfs.BlockSize)
	for off < size {
		d, err := readMapDeltaAt(f, off, size, pageSize, block)
		var re *recordError
		if errors.As(err, &re) || (err == nil && (d.generation != gen || d.number != uint64(len(deltas))+1)) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		deltas = append(deltas, d)
		off += int64(paddedSize(mapDeltaSize(len(d.segs), len(d.entries))))
	}
	// Nothing valid of this generation may follow.
	for next := off + vfs.BlockSize; next < size; next += vfs.BlockSize {
		d, err := readMapDeltaAt(f, next, size, pageSize, block)
		var re *recordError
		if errors.As(err, &re) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		if d.generation == gen && d.number > uint64(len(deltas)) {
			return deltas, off, fmt.Errorf("%w: map log record %d of generation %d at offset %d follows an invalid record at offset %d", ErrCorrupt, d.number, gen, next, off)
		}
	}
	return deltas, off, nil
}

// readMapDeltaAt reads the record that starts at off of the map log f,
// size bytes long; block is a BlockSize scratch buffer. A *recordError says
// why no valid record is there; other errors are I/O errors.
func readMapDeltaAt(f vfs.File, off, size int64, pageSize uint32, block []byte) (*mapDelta, error) {
	k, err := f.ReadAt(block, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	n, lerr := mapDeltaLength(block[:k])
	if lerr != nil {
		return nil, &recordError{lerr.Error()}
	}
	if int64(n) > size-off {
		return nil, &recordError{"map log record runs past the end of the file"}
	}
	rec := make([]byte, n)
	if _, err := f.ReadAt(rec, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	d, derr := decodeMapDelta(rec, pageSize)
	if derr != nil {
		return nil, &recordError{derr.Error()}
	}
	return d, nil
}

package pagestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/stratadb/strata/internal/vfs"
)

// Checkpoint file layout, version 2 (little endian), see docs/FORMAT.md:
//
//	0  magic        [8]byte "STRATCKP"
//	8  version      uint32  2
//	12 page size    uint32
//	16 generation   uint64  the map log's records extend this checkpoint only
//	24 state        [32]byte (ckptState: sequence, segments, replay positions)
//	56 seg count S  uint32
//	60 reserved     uint32  zero
//	64 count N      uint64  number of page map entries
//	72 segments     S × (num uint32, reserved uint32, stamp uint64)
//	.. entries      N × (seg uint32, off uint32, len uint32)
//	.. crc          uint32  CRC32C of every byte before it
//
// Version 1 (read, never written) had no generation, one replay position
// and no segment table:
//
//	16 next seq uint64, 24 replay seg uint32, 28 replay off uint32,
//	32 next segment uint32, 36 flags uint32, 40 count uint64, 48 entries, crc
const (
	checkpointName         = "CHECKPOINT"
	checkpointTmpName      = "CHECKPOINT.tmp"
	checkpointHeaderSize   = 72
	checkpointV1HeaderSize = 48
	checkpointVersion      = 2
	checkpointFlagClean    = 1
	ckptStateSize          = 32
	segInfoSize            = 16
)

var checkpointMagic = [8]byte{'S', 'T', 'R', 'A', 'T', 'C', 'K', 'P'}

// replayPos is where recovery starts replaying one stream: the records of
// segment seg from offset off on (seg 0: the stream had no head).
type replayPos struct {
	seg uint32
	off uint32
}

// ckptState is what a checkpoint (full or delta) says about the log besides
// the page map:
//
//	0  next seq     uint64  sequence number of the next record
//	8  next segment uint32  number of the next segment file to create
//	12 flags        uint32  bit 0: written by a clean Close
//	16 hot replay   seg uint32, off uint32
//	24 cold replay  seg uint32, off uint32 (seg 0: no cold head)
//
// Every record before a stream's replay position, and every record of a
// segment numbered below next segment that is not a replay segment, is
// reflected in the map; recovery replays the rest.
type ckptState struct {
	nextSeq    uint64
	nextSegNum uint32
	flags      uint32
	replay     [numStreams]replayPos
}

func (c *ckptState) encode(b []byte) {
	_ = b[ckptStateSize-1]
	binary.LittleEndian.PutUint64(b[0:], c.nextSeq)
	binary.LittleEndian.PutUint32(b[8:], c.nextSegNum)
	binary.LittleEndian.PutUint32(b[12:], c.flags)
	for i, r := range c.replay {
		binary.LittleEndian.PutUint32(b[16+8*i:], r.seg)
		binary.LittleEndian.PutUint32(b[20+8*i:], r.off)
	}
}

func decodeCkptState(b []byte) (ckptState, error) {
	c := ckptState{
		nextSeq:    binary.LittleEndian.Uint64(b[0:]),
		nextSegNum: binary.LittleEndian.Uint32(b[8:]),
		flags:      binary.LittleEndian.Uint32(b[12:]),
	}
	for i := range c.replay {
		c.replay[i] = replayPos{binary.LittleEndian.Uint32(b[16+8*i:]), binary.LittleEndian.Uint32(b[20+8*i:])}
	}
	if c.flags&^checkpointFlagClean != 0 {
		return c, fmt.Errorf("unknown flags %#x", c.flags)
	}
	if c.nextSegNum == 0 {
		return c, errors.New("next segment number 0")
	}
	// The hot stream always has a replay position (at worst the segment
	// to be created next); the cold one only once it has a head.
	hot, cold := c.replay[streamHot], c.replay[streamCold]
	if hot.seg == 0 || hot.seg > c.nextSegNum {
		return c, fmt.Errorf("hot replay segment %d out of range (next segment %d)", hot.seg, c.nextSegNum)
	}
	if cold.seg >= c.nextSegNum || cold.seg == hot.seg || (cold.seg == 0 && cold.off != 0) {
		return c, fmt.Errorf("cold replay segment %d out of range (next segment %d, hot %d)", cold.seg, c.nextSegNum, hot.seg)
	}
	return c, nil
}

// segInfo is what a checkpoint keeps about a segment besides its records:
// the age stamp the cleaner's victim choice needs.
type segInfo struct {
	num   uint32
	stamp uint64
}

func encodeSegInfos(b []byte, infos []segInfo) []byte {
	for _, si := range infos {
		binary.LittleEndian.PutUint32(b[0:], si.num)
		binary.LittleEndian.PutUint32(b[4:], 0)
		binary.LittleEndian.PutUint64(b[8:], si.stamp)
		b = b[segInfoSize:]
	}
	return b
}

// decodeSegInfos reads n infos: numbers strictly increasing, below
// nextSegNum.
func decodeSegInfos(b []byte, n int, nextSegNum uint32) ([]segInfo, []byte, error) {
	infos := make([]segInfo, n)
	for i := range infos {
		si := segInfo{num: binary.LittleEndian.Uint32(b[0:]), stamp: binary.LittleEndian.Uint64(b[8:])}
		if binary.LittleEndian.Uint32(b[4:]) != 0 {
			return nil, nil, fmt.Errorf("segment info %d: nonzero reserved field", i)
		}
		if si.num == 0 || si.num >= nextSegNum || (i > 0 && si.num <= infos[i-1].num) {
			return nil, nil, fmt.Errorf("segment info %d: segment %d out of order or range", i, si.num)
		}
		infos[i] = si
		b = b[segInfoSize:]
	}
	return infos, b, nil
}

func encodeLocation(b []byte, e location) {
	binary.LittleEndian.PutUint32(b[0:], e.seg)
	binary.LittleEndian.PutUint32(b[4:], e.off)
	binary.LittleEndian.PutUint32(b[8:], e.len)
}

// decodeLocation reads and range-checks one page map entry.
func decodeLocation(b []byte, id uint64, pageSize, nextSegNum uint32) (location, error) {
	e := location{
		seg: binary.LittleEndian.Uint32(b[0:]),
		off: binary.LittleEndian.Uint32(b[4:]),
		len: binary.LittleEndian.Uint32(b[8:]),
	}
	if e.present() {
		if e.seg >= nextSegNum || e.off < segmentHeaderSize || e.len <= recordHeaderSize || e.len > recordHeaderSize+pageSize {
			return e, fmt.Errorf("entry for page %d is out of range: segment %d offset %d length %d", id, e.seg, e.off, e.len)
		}
	} else if e != (location{}) {
		return e, fmt.Errorf("entry for page %d is malformed", id)
	}
	return e, nil
}

// checkpoint is the decoded content of a checkpoint file: the whole page
// map.
type checkpoint struct {
	version    uint32 // of the file it was decoded from; encode writes checkpointVersion
	pageSize   uint32
	generation uint64
	ckptState
	segs    []segInfo
	entries []location
}

func (c *checkpoint) encodedSize() int {
	return checkpointHeaderSize + len(c.segs)*segInfoSize + len(c.entries)*locationSize + 4
}

func (c *checkpoint) encode() []byte {
	b := make([]byte, c.encodedSize())
	copy(b, checkpointMagic[:])
	binary.LittleEndian.PutUint32(b[8:], checkpointVersion)
	binary.LittleEndian.PutUint32(b[12:], c.pageSize)
	binary.LittleEndian.PutUint64(b[16:], c.generation)
	c.ckptState.encode(b[24:])
	binary.LittleEndian.PutUint32(b[56:], uint32(len(c.segs)))
	binary.LittleEndian.PutUint32(b[60:], 0)
	binary.LittleEndian.PutUint64(b[64:], uint64(len(c.entries)))
	p := encodeSegInfos(b[checkpointHeaderSize:], c.segs)
	for _, e := range c.entries {
		encodeLocation(p, e)
		p = p[locationSize:]
	}
	binary.LittleEndian.PutUint32(p, crc32.Checksum(b[:len(b)-4], castagnoli))
	return b
}

// decodeCheckpoint parses and validates a checkpoint. Every field that later
// code relies on is range-checked here, so a corrupt file is an error rather
// than a wrong map.
func decodeCheckpoint(b []byte) (*checkpoint, error) {
	if len(b) < checkpointV1HeaderSize+4 {
		return nil, fmt.Errorf("short file (%d bytes)", len(b))
	}
	if [8]byte(b[:8]) != checkpointMagic {
		return nil, fmt.Errorf("bad magic %q", b[:8])
	}
	if got, want := binary.LittleEndian.Uint32(b[len(b)-4:]), crc32.Checksum(b[:len(b)-4], castagnoli); got != want {
		return nil, fmt.Errorf("checksum mismatch (computed %#x, stored %#x)", want, got)
	}
	c := &checkpoint{
		version:  binary.LittleEndian.Uint32(b[8:]),
		pageSize: binary.LittleEndian.Uint32(b[12:]),
	}
	var count uint64
	var p []byte
	switch c.version {
	case 1:
		c.nextSeq = binary.LittleEndian.Uint64(b[16:])
		c.replay[streamHot] = replayPos{binary.LittleEndian.Uint32(b[24:]), binary.LittleEndian.Uint32(b[28:])}
		c.nextSegNum = binary.LittleEndian.Uint32(b[32:])
		c.flags = binary.LittleEndian.Uint32(b[36:])
		count = binary.LittleEndian.Uint64(b[40:])
		if hot := c.replay[streamHot]; hot.seg == 0 || hot.seg > c.nextSegNum {
			return nil, fmt.Errorf("replay segment %d out of range (next segment %d)", hot.seg, c.nextSegNum)
		}
		if count > MaxPageID+1 || uint64(len(b)) != checkpointV1HeaderSize+count*locationSize+4 {
			return nil, fmt.Errorf("entry count %d does not match file size %d", count, len(b))
		}
		p = b[checkpointV1HeaderSize:]
	case checkpointVersion:
		if len(b) < checkpointHeaderSize+4 {
			return nil, fmt.Errorf("short file (%d bytes)", len(b))
		}
		c.generation = binary.LittleEndian.Uint64(b[16:])
		st, err := decodeCkptState(b[24:])
		if err != nil {
			return nil, err
		}
		c.ckptState = st
		nsegs := uint64(binary.LittleEndian.Uint32(b[56:]))
		if binary.LittleEndian.Uint32(b[60:]) != 0 {
			return nil, errors.New("nonzero reserved field")
		}
		count = binary.LittleEndian.Uint64(b[64:])
		if count > MaxPageID+1 || nsegs > uint64(c.nextSegNum) ||
			uint64(len(b)) != checkpointHeaderSize+nsegs*segInfoSize+count*locationSize+4 {
			return nil, fmt.Errorf("segment count %d and entry count %d do not match file size %d", nsegs, count, len(b))
		}
		c.segs, p, err = decodeSegInfos(b[checkpointHeaderSize:], int(nsegs), c.nextSegNum)
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unsupported version %d", c.version)
	}
	if err := validatePageSize(int(c.pageSize)); err != nil {
		return nil, err
	}
	c.entries = make([]location, count)
	for i := range c.entries {
		e, err := decodeLocation(p, uint64(i), c.pageSize, c.nextSegNum)
		if err != nil {
			return nil, err
		}
		p = p[locationSize:]
		c.entries[i] = e
	}
	return c, nil
}

// readCheckpoint loads dir's checkpoint. It returns (nil, nil) if there is none.
func readCheckpoint(fs vfs.FS, dir string) (*checkpoint, error) {
	name := filepath.Join(dir, checkpointName)
	f, err := fs.OpenFile(name, os.O_RDONLY, 0, vfs.OpenOptions{})
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("pagestore: open checkpoint: %w", err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, fmt.Errorf("pagestore: checkpoint %s: %w", name, err)
	}
	if size > checkpointHeaderSize+segInfoSize*(1<<32)+locationSize*(MaxPageID+1)+4 {
		return nil, fmt.Errorf("pagestore: checkpoint %s: %w: size %d too large", name, ErrCorrupt, size)
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("pagestore: read checkpoint %s: %w", name, err)
	}
	c, err := decodeCheckpoint(b)
	if err != nil {
		return nil, fmt.Errorf("pagestore: checkpoint %s: %w: %v", name, ErrCorrupt, err)
	}
	return c, nil
}

// writeCheckpoint installs c atomically: write a temporary file, sync it,
// rename it over the old checkpoint, sync the directory. A crash at any point
// leaves either the old or the new checkpoint in place, never a mix.
func writeCheckpoint(fs vfs.FS, dir string, c *checkpoint) (int64, error) {
	tmp := filepath.Join(dir, checkpointTmpName)
	f, err := fs.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644, vfs.OpenOptions{})
	if err != nil {
		return 0, fmt.Errorf("pagestore: create checkpoint: %w", err)
	}
	b := c.encode()
	if _, err := f.WriteAt(b, 0); err != nil {
		f.Close()
		return 0, fmt.Errorf("pagestore: write checkpoint %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return 0, fmt.Errorf("pagestore: sync checkpoint %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("pagestore: close checkpoint %s: %w", tmp, err)
	}
	if err := fs.Rename(tmp, filepath.Join(dir, checkpointName)); err != nil {
		return 0, fmt.Errorf("pagestore: install checkpoint: %w", err)
	}
	if err := fs.SyncDir(dir); err != nil {
		return 0, fmt.Errorf("pagestore: sync directory %s: %w", dir, err)
	}
	return int64(len(b)), nil
}

package pagestore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/stratadb/strata/internal/vfs"
)

// Checkpoint file layout (little endian), see docs/FORMAT.md:
//
//	0  magic        [8]byte "STRATCKP"
//	8  version      uint32  1
//	12 page size    uint32
//	16 next seq     uint64  sequence number of the next record
//	24 replay seg   uint32  recovery replays the log from here...
//	28 replay off   uint32  ...this offset in that segment
//	32 next segment uint32  number of the next segment file to create
//	36 flags        uint32  bit 0: written by a clean Close
//	40 count        uint64  number of page map entries
//	48 entries      count × (seg uint32, off uint32, len uint32)
//	.. crc          uint32  CRC32C of every byte before it
const (
	checkpointName       = "CHECKPOINT"
	checkpointTmpName    = "CHECKPOINT.tmp"
	checkpointHeaderSize = 48
	checkpointVersion    = 1
	checkpointFlagClean  = 1
)

var checkpointMagic = [8]byte{'S', 'T', 'R', 'A', 'T', 'C', 'K', 'P'}

// checkpoint is the decoded content of a checkpoint file.
type checkpoint struct {
	pageSize   uint32
	nextSeq    uint64
	replaySeg  uint32
	replayOff  uint32
	nextSegNum uint32
	flags      uint32
	entries    []location
}

func (c *checkpoint) encode() []byte {
	b := make([]byte, checkpointHeaderSize+len(c.entries)*locationSize+4)
	copy(b, checkpointMagic[:])
	binary.LittleEndian.PutUint32(b[8:], checkpointVersion)
	binary.LittleEndian.PutUint32(b[12:], c.pageSize)
	binary.LittleEndian.PutUint64(b[16:], c.nextSeq)
	binary.LittleEndian.PutUint32(b[24:], c.replaySeg)
	binary.LittleEndian.PutUint32(b[28:], c.replayOff)
	binary.LittleEndian.PutUint32(b[32:], c.nextSegNum)
	binary.LittleEndian.PutUint32(b[36:], c.flags)
	binary.LittleEndian.PutUint64(b[40:], uint64(len(c.entries)))
	p := b[checkpointHeaderSize:]
	for _, e := range c.entries {
		binary.LittleEndian.PutUint32(p[0:], e.seg)
		binary.LittleEndian.PutUint32(p[4:], e.off)
		binary.LittleEndian.PutUint32(p[8:], e.len)
		p = p[locationSize:]
	}
	binary.LittleEndian.PutUint32(p, crc32.Checksum(b[:len(b)-4], castagnoli))
	return b
}

// decodeCheckpoint parses and validates a checkpoint. Every field that later
// code relies on is range-checked here, so a corrupt file is an error rather
// than a wrong map.
func decodeCheckpoint(b []byte) (*checkpoint, error) {
	if len(b) < checkpointHeaderSize+4 {
		return nil, fmt.Errorf("short file (%d bytes)", len(b))
	}
	if [8]byte(b[:8]) != checkpointMagic {
		return nil, fmt.Errorf("bad magic %q", b[:8])
	}
	if got, want := binary.LittleEndian.Uint32(b[len(b)-4:]), crc32.Checksum(b[:len(b)-4], castagnoli); got != want {
		return nil, fmt.Errorf("checksum mismatch (computed %#x, stored %#x)", want, got)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != checkpointVersion {
		return nil, fmt.Errorf("unsupported version %d", v)
	}
	c := &checkpoint{
		pageSize:   binary.LittleEndian.Uint32(b[12:]),
		nextSeq:    binary.LittleEndian.Uint64(b[16:]),
		replaySeg:  binary.LittleEndian.Uint32(b[24:]),
		replayOff:  binary.LittleEndian.Uint32(b[28:]),
		nextSegNum: binary.LittleEndian.Uint32(b[32:]),
		flags:      binary.LittleEndian.Uint32(b[36:]),
	}
	if err := validatePageSize(int(c.pageSize)); err != nil {
		return nil, err
	}
	if c.replaySeg == 0 || c.replaySeg > c.nextSegNum {
		return nil, fmt.Errorf("replay segment %d out of range (next segment %d)", c.replaySeg, c.nextSegNum)
	}
	count := binary.LittleEndian.Uint64(b[40:])
	if count > MaxPageID+1 || uint64(len(b)) != checkpointHeaderSize+count*locationSize+4 {
		return nil, fmt.Errorf("entry count %d does not match file size %d", count, len(b))
	}
	c.entries = make([]location, count)
	p := b[checkpointHeaderSize:]
	maxLen := uint32(recordHeaderSize) + c.pageSize
	for i := range c.entries {
		e := location{
			seg: binary.LittleEndian.Uint32(p[0:]),
			off: binary.LittleEndian.Uint32(p[4:]),
			len: binary.LittleEndian.Uint32(p[8:]),
		}
		p = p[locationSize:]
		if e.present() {
			if e.seg >= c.nextSegNum || e.off < segmentHeaderSize || e.len <= recordHeaderSize || e.len > maxLen {
				return nil, fmt.Errorf("entry for page %d is out of range: segment %d offset %d length %d", i, e.seg, e.off, e.len)
			}
		} else if e != (location{}) {
			return nil, fmt.Errorf("entry for page %d is malformed", i)
		}
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
	if size > checkpointHeaderSize+locationSize*(MaxPageID+1)+4 {
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

package flashcache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// The on-flash format (docs/FORMAT.md, "Flash cache"): encoders and
// decoders of the superblock, the entry header, the index snapshot and the
// marker file the cache keeps in the database's directory. Every decoder
// checks lengths, magic numbers, ranges and a CRC-32C before it returns
// anything, and never panics on bad input (FuzzDecode).
//
// Lock rules: none; these are pure functions.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errFormat is returned (wrapped) by the decoders for bytes that are not
// what they should be. It is never returned to callers of the package:
// bad on-flash metadata makes the cache start cold, bad entries are misses.
var errFormat = errors.New("flashcache: bad on-flash bytes")

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errFormat, fmt.Sprintf(format, args...))
}

const (
	formatVersion = 1
	blockSize     = 4096 // direct I/O alignment (vfs.BlockSize)

	// The file starts with two superblock slots; the one with the higher
	// valid generation is current, so a torn superblock write leaves the
	// other one intact.
	superblockSlots = 2
	superblockSize  = 168 // encoded bytes at the start of each 4 KiB slot

	entryHeaderSize   = 32
	snapshotHeader    = 64
	snapshotEntrySize = 16
	markerSize        = 48
)

var (
	superMagic    = [8]byte{'S', 'T', 'R', 'F', 'L', 'A', 'S', 'H'}
	snapshotMagic = [8]byte{'S', 'T', 'R', 'F', 'S', 'N', 'A', 'P'}
	markerMagic   = [8]byte{'S', 'T', 'R', 'F', 'C', 'M', 'R', 'K'}
)

// entryMagic starts every entry; its first byte is nonzero, so a zeroed
// (never written) block is never taken for an entry.
const entryMagic = 0x31454346 // "FCE1"

// Superblock states.
const (
	stateOpen  = 1 // a session is (or was, if it crashed) using the cache
	stateClean = 2 // closed cleanly: the snapshot is the index at close
)

// layout is where things are in the file: fixed when the file is
// formatted, recorded in the superblock.
type layout struct {
	fileSize   int64
	pageSize   int
	regionSize int64
	regions    int
	unit       int64 // entries start at multiples of unit; index offsets are in units
	maxEntries int   // capacity of the RAM index (and of the snapshot)
	snapOff    int64 // snapshot area
	snapCap    int64 // its size
	dataStart  int64 // first region
}

// regionBase is the file offset of region r.
func (l *layout) regionBase(r int) int64 { return l.dataStart + int64(r)*l.regionSize }

// regionOf is the region holding file offset off.
func (l *layout) regionOf(off int64) int { return int((off - l.dataStart) / l.regionSize) }

// superblock is the cache's root: its layout, identity, state and where
// the writer was.
type superblock struct {
	gen         uint64 // bumped at every write; the higher valid slot wins
	id          [16]byte
	session     uint64
	state       uint32
	lay         layout
	nextVersion uint32
	headRegion  uint32
	headOff     int64  // write position in the head region
	snapEntries uint64 // entries in the snapshot (clean state)
	snapLen     uint64 // bytes of the snapshot
	snapCRC     uint32
	dbState     DBState // clean state: the database's state at Close
}

func (s *superblock) encode(b []byte) {
	clear(b[:superblockSize])
	copy(b, superMagic[:])
	le := binary.LittleEndian
	le.PutUint32(b[8:], formatVersion)
	le.PutUint32(b[12:], uint32(s.lay.pageSize))
	le.PutUint64(b[16:], s.gen)
	copy(b[24:40], s.id[:])
	le.PutUint64(b[40:], s.session)
	le.PutUint32(b[48:], s.state)
	le.PutUint32(b[52:], uint32(s.lay.regions))
	le.PutUint64(b[56:], uint64(s.lay.fileSize))
	le.PutUint64(b[64:], uint64(s.lay.regionSize))
	le.PutUint64(b[72:], uint64(s.lay.dataStart))
	le.PutUint64(b[80:], uint64(s.lay.snapOff))
	le.PutUint64(b[88:], uint64(s.lay.snapCap))
	le.PutUint64(b[96:], s.snapEntries)
	le.PutUint64(b[104:], s.snapLen)
	le.PutUint32(b[112:], s.snapCRC)
	le.PutUint32(b[116:], uint32(s.lay.unit))
	le.PutUint32(b[120:], s.nextVersion)
	le.PutUint32(b[124:], s.headRegion)
	le.PutUint64(b[128:], uint64(s.headOff))
	le.PutUint64(b[136:], uint64(s.lay.maxEntries))
	copy(b[144:160], s.dbState[:])
	// 160..164 reserved (zero)
	le.PutUint32(b[164:], crc32.Checksum(b[:164], castagnoli))
}

// decodeSuperblock decodes and checks one superblock slot: magic, version,
// checksum, and a layout that fits in the file.
func decodeSuperblock(b []byte) (superblock, error) {
	var s superblock
	if len(b) < superblockSize {
		return s, formatErr("superblock of %d bytes", len(b))
	}
	if [8]byte(b[:8]) != superMagic {
		return s, formatErr("no superblock magic")
	}
	le := binary.LittleEndian
	if got, want := le.Uint32(b[164:]), crc32.Checksum(b[:164], castagnoli); got != want {
		return s, formatErr("superblock checksum %#x, computed %#x", got, want)
	}
	if v := le.Uint32(b[8:]); v != formatVersion {
		return s, formatErr("format version %d", v)
	}
	s.lay.pageSize = int(le.Uint32(b[12:]))
	s.gen = le.Uint64(b[16:])
	copy(s.id[:], b[24:40])
	s.session = le.Uint64(b[40:])
	s.state = le.Uint32(b[48:])
	s.lay.regions = int(le.Uint32(b[52:]))
	s.lay.fileSize = int64(le.Uint64(b[56:]))
	s.lay.regionSize = int64(le.Uint64(b[64:]))
	s.lay.dataStart = int64(le.Uint64(b[72:]))
	s.lay.snapOff = int64(le.Uint64(b[80:]))
	s.lay.snapCap = int64(le.Uint64(b[88:]))
	s.snapEntries = le.Uint64(b[96:])
	s.snapLen = le.Uint64(b[104:])
	s.snapCRC = le.Uint32(b[112:])
	s.lay.unit = int64(le.Uint32(b[116:]))
	s.nextVersion = le.Uint32(b[120:])
	s.headRegion = le.Uint32(b[124:])
	s.headOff = int64(le.Uint64(b[128:]))
	s.lay.maxEntries = int(le.Uint64(b[136:]))
	copy(s.dbState[:], b[144:160])
	if err := s.check(); err != nil {
		return superblock{}, err
	}
	return s, nil
}

// check validates the superblock's fields against each other.
func (s *superblock) check() error {
	l := &s.lay
	switch {
	case s.state != stateOpen && s.state != stateClean:
		return formatErr("state %d", s.state)
	case l.pageSize < 512 || l.pageSize > 1<<20 || l.pageSize&(l.pageSize-1) != 0:
		return formatErr("page size %d", l.pageSize)
	case l.unit < 16 || l.unit > blockSize || l.unit&(l.unit-1) != 0:
		return formatErr("offset unit %d", l.unit)
	case l.regionSize < blockSize || l.regionSize%blockSize != 0 || l.regionSize > 1<<30:
		return formatErr("region size %d", l.regionSize)
	case l.regions < 2 || l.regions > 1<<24:
		return formatErr("%d regions", l.regions)
	case l.maxEntries < 1 || l.maxEntries > 1<<32:
		return formatErr("index capacity %d", l.maxEntries)
	case l.snapOff != superblockSlots*blockSize || l.snapCap < snapshotSize(l.maxEntries, l.regions) || l.snapCap%blockSize != 0:
		return formatErr("snapshot area at %d of %d bytes", l.snapOff, l.snapCap)
	case l.dataStart != l.snapOff+l.snapCap:
		return formatErr("data at %d", l.dataStart)
	case l.fileSize <= 0 || l.dataStart+int64(l.regions)*l.regionSize > l.fileSize:
		return formatErr("%d regions of %d bytes from %d do not fit in %d bytes", l.regions, l.regionSize, l.dataStart, l.fileSize)
	case (l.dataStart+int64(l.regions)*l.regionSize)/l.unit > 1<<32:
		return formatErr("offset unit %d too small for %d bytes", l.unit, l.fileSize)
	case int(s.headRegion) >= l.regions || s.headOff < 0 || s.headOff > l.regionSize || s.headOff%blockSize != 0:
		return formatErr("write position %d in region %d", s.headOff, s.headRegion)
	case s.state == stateClean && (s.snapEntries > uint64(l.maxEntries) || s.snapLen != uint64(snapshotHeader+badMapBytes(l.regions))+s.snapEntries*snapshotEntrySize):
		return formatErr("snapshot of %d entries in %d bytes", s.snapEntries, s.snapLen)
	}
	return nil
}

// snapshotSize is the largest snapshot of n entries over r regions.
func snapshotSize(n, r int) int64 {
	return int64(snapshotHeader) + int64(badMapBytes(r)) + int64(n)*snapshotEntrySize
}

// badMapBytes is the size of the bad-region bitmap, padded to 8 bytes.
func badMapBytes(regions int) int { return (regions + 63) / 64 * 8 }

// entryHeader precedes every cached image in a region.
type entryHeader struct {
	id      uint32 // page id
	version uint32 // admission version (see Cache)
	size    uint32 // payload bytes
	codec   uint8
}

// entryCRC is the checksum of an entry: CRC-32C over the header after the
// checksum field and the payload, seeded with the cache's identity so that
// an entry written by an earlier incarnation of the file never validates.
func entryCRC(seed uint32, hdr, payload []byte) uint32 {
	c := crc32.Update(seed, castagnoli, hdr[8:entryHeaderSize])
	return crc32.Update(c, castagnoli, payload)
}

func encodeEntry(dst []byte, seed uint32, h entryHeader, payload []byte) {
	le := binary.LittleEndian
	le.PutUint32(dst[0:], entryMagic)
	le.PutUint32(dst[8:], h.id)
	le.PutUint32(dst[12:], h.version)
	le.PutUint32(dst[16:], h.size)
	dst[20] = h.codec
	clear(dst[21:entryHeaderSize])
	copy(dst[entryHeaderSize:], payload)
	le.PutUint32(dst[4:], entryCRC(seed, dst[:entryHeaderSize], payload))
}

// decodeEntry checks that b starts with the entry of page id, version ver,
// of size payload bytes, whole and with a valid checksum, and returns its
// codec and payload (aliasing b).
func decodeEntry(b []byte, seed, id, ver, size uint32) (uint8, []byte, error) {
	if len(b) < entryHeaderSize {
		return 0, nil, formatErr("entry of %d bytes", len(b))
	}
	le := binary.LittleEndian
	if m := le.Uint32(b); m != entryMagic {
		return 0, nil, formatErr("entry magic %#x", m)
	}
	h := entryHeader{id: le.Uint32(b[8:]), version: le.Uint32(b[12:]), size: le.Uint32(b[16:]), codec: b[20]}
	if h.id != id || h.version != ver || h.size != size {
		return 0, nil, formatErr("entry of page %d version %d size %d, want page %d version %d size %d", h.id, h.version, h.size, id, ver, size)
	}
	if uint64(len(b)) < entryHeaderSize+uint64(h.size) {
		return 0, nil, formatErr("entry of %d payload bytes cut at %d", h.size, len(b)-entryHeaderSize)
	}
	payload := b[entryHeaderSize : entryHeaderSize+int(h.size)]
	if got, want := le.Uint32(b[4:]), entryCRC(seed, b[:entryHeaderSize], payload); got != want {
		return 0, nil, formatErr("entry checksum %#x, computed %#x", got, want)
	}
	return h.codec, payload, nil
}

// snapEntry is one index entry in the snapshot: page id, version, payload
// size and file offset in units.
type snapEntry struct {
	id, version, size, loc uint32
}

// encodeSnapshotHeader writes the snapshot's header and bad-region bitmap
// into b (snapshotHeader + badMapBytes bytes).
func encodeSnapshotHeader(b []byte, entries uint64, regions int, bad []bool) {
	le := binary.LittleEndian
	clear(b[:snapshotHeader+badMapBytes(regions)])
	copy(b, snapshotMagic[:])
	le.PutUint32(b[8:], formatVersion)
	le.PutUint32(b[12:], uint32(regions))
	le.PutUint64(b[16:], entries)
	for r, isBad := range bad {
		if isBad {
			b[snapshotHeader+r/8] |= 1 << (r % 8)
		}
	}
}

func encodeSnapEntry(b []byte, e snapEntry) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], e.id)
	le.PutUint32(b[4:], e.version)
	le.PutUint32(b[8:], e.size)
	le.PutUint32(b[12:], e.loc)
}

// decodeSnapshot checks a snapshot (its checksum against the
// superblock's, its header against the layout) and returns the bad-region
// flags and the entries, unvalidated (rebuild validates each).
func decodeSnapshot(b []byte, sb *superblock) ([]bool, []snapEntry, error) {
	if uint64(len(b)) < sb.snapLen || sb.snapLen < snapshotHeader {
		return nil, nil, formatErr("snapshot of %d bytes, superblock says %d", len(b), sb.snapLen)
	}
	b = b[:sb.snapLen]
	if got := crc32.Checksum(b, castagnoli); got != sb.snapCRC {
		return nil, nil, formatErr("snapshot checksum %#x, superblock says %#x", got, sb.snapCRC)
	}
	le := binary.LittleEndian
	if [8]byte(b[:8]) != snapshotMagic {
		return nil, nil, formatErr("no snapshot magic")
	}
	if v := le.Uint32(b[8:]); v != formatVersion {
		return nil, nil, formatErr("snapshot version %d", v)
	}
	regions := int(le.Uint32(b[12:]))
	n := le.Uint64(b[16:])
	if regions != sb.lay.regions || n != sb.snapEntries {
		return nil, nil, formatErr("snapshot of %d entries over %d regions, superblock says %d over %d", n, regions, sb.snapEntries, sb.lay.regions)
	}
	mapLen := badMapBytes(regions)
	if uint64(len(b)) != uint64(snapshotHeader+mapLen)+n*snapshotEntrySize {
		return nil, nil, formatErr("snapshot length %d for %d entries", len(b), n)
	}
	bad := make([]bool, regions)
	for r := range bad {
		bad[r] = b[snapshotHeader+r/8]&(1<<(r%8)) != 0
	}
	entries := make([]snapEntry, n)
	p := b[snapshotHeader+mapLen:]
	for i := range entries {
		q := p[i*snapshotEntrySize:]
		entries[i] = snapEntry{id: le.Uint32(q), version: le.Uint32(q[4:]), size: le.Uint32(q[8:]), loc: le.Uint32(q[12:])}
	}
	return bad, entries, nil
}

// marker is the file the cache keeps in the database's directory: it names
// the flash file (its identity) and the session that last attached it. The
// cache trusts what it finds on flash only if the marker names the same
// identity and session as a cleanly closed superblock.
type marker struct {
	id      [16]byte
	session uint64
}

func (m *marker) encode() []byte {
	b := make([]byte, markerSize)
	copy(b, markerMagic[:])
	le := binary.LittleEndian
	le.PutUint32(b[8:], formatVersion)
	copy(b[16:32], m.id[:])
	le.PutUint64(b[32:], m.session)
	le.PutUint32(b[44:], crc32.Checksum(b[:44], castagnoli))
	return b
}

func decodeMarker(b []byte) (marker, error) {
	var m marker
	if len(b) != markerSize {
		return m, formatErr("marker of %d bytes", len(b))
	}
	if [8]byte(b[:8]) != markerMagic {
		return m, formatErr("no marker magic")
	}
	le := binary.LittleEndian
	if got, want := le.Uint32(b[44:]), crc32.Checksum(b[:44], castagnoli); got != want {
		return m, formatErr("marker checksum %#x, computed %#x", got, want)
	}
	if v := le.Uint32(b[8:]); v != formatVersion {
		return m, formatErr("marker version %d", v)
	}
	copy(m.id[:], b[16:32])
	m.session = le.Uint64(b[32:])
	return m, nil
}

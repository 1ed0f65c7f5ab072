package strata

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// The meta page is page 0 of the page store, rewritten at each checkpoint:
//
//	0  magic     [8]byte "STRATADB"
//	8  version   uint32  1
//	12 page size uint32
//	16 root      uint64  root page of the B+tree (0: empty)
//	24 txid      uint64  last transaction in the tree
//	32 lsn       uint64  last WAL record applied to the tree
//	40 crc       uint32  CRC-32C of bytes 0..40
//	44 flags     uint32  bit 0 (metaClean): written by a clean Close
//	48 flags crc uint32  CRC-32C of bytes 0..48
//
// The rest of the page is zero. Flags of 0 are written as 8 zero bytes at
// 44 (flags and its CRC both 0): exactly the page of a binary built before
// the flags, which wrote nothing after byte 44, so such a page reads as
// "not clean". Such a binary reads a page with flags as its own (it checks
// bytes 0..44 only), walks the tree at every Open as it always did, and
// its checkpoints clear the flags (they zero the page): the next Open of
// this binary walks too.
//
// metaClean says that the store holds no page the tree does not reach: it
// is written once Close's final checkpoint has freed every replaced page,
// and every other meta page (each checkpoint, Open's first of all) clears
// it. Open skips its walk for unreachable pages when it is set and the WAL
// holds nothing after lsn.
type meta struct {
	pageSize uint32
	root     uint64
	txid     uint64
	lsn      uint64
	clean    bool
}

var metaMagic = [8]byte{'S', 'T', 'R', 'A', 'T', 'A', 'D', 'B'}

const (
	metaVersion = 1
	metaSize    = 52
	// metaClean: the flag of a meta page written by a clean Close.
	metaClean = 1 << 0
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (m *meta) encode(page []byte) {
	clear(page)
	copy(page, metaMagic[:])
	binary.LittleEndian.PutUint32(page[8:], metaVersion)
	binary.LittleEndian.PutUint32(page[12:], m.pageSize)
	binary.LittleEndian.PutUint64(page[16:], m.root)
	binary.LittleEndian.PutUint64(page[24:], m.txid)
	binary.LittleEndian.PutUint64(page[32:], m.lsn)
	binary.LittleEndian.PutUint32(page[40:], crc32.Checksum(page[:40], castagnoli))
	if m.clean {
		binary.LittleEndian.PutUint32(page[44:], metaClean)
		binary.LittleEndian.PutUint32(page[48:], crc32.Checksum(page[:48], castagnoli))
	}
}

func decodeMeta(page []byte) (meta, error) {
	var m meta
	if len(page) < metaSize || [8]byte(page[:8]) != metaMagic {
		return m, fmt.Errorf("page 0 is not a Strata meta page")
	}
	if got, want := binary.LittleEndian.Uint32(page[40:]), crc32.Checksum(page[:40], castagnoli); got != want {
		return m, fmt.Errorf("meta page checksum mismatch (computed %#x, stored %#x)", want, got)
	}
	if v := binary.LittleEndian.Uint32(page[8:]); v != metaVersion {
		return m, fmt.Errorf("unsupported database format version %d", v)
	}
	m.pageSize = binary.LittleEndian.Uint32(page[12:])
	m.root = binary.LittleEndian.Uint64(page[16:])
	m.txid = binary.LittleEndian.Uint64(page[24:])
	m.lsn = binary.LittleEndian.Uint64(page[32:])
	if int(m.pageSize) != len(page) {
		return m, fmt.Errorf("meta page says %d-byte pages, store has %d", m.pageSize, len(page))
	}
	switch flags, crc := binary.LittleEndian.Uint32(page[44:]), binary.LittleEndian.Uint32(page[48:]); {
	case flags == 0 && crc == 0:
	case flags == 0:
		return m, fmt.Errorf("meta page has no flags but a flags checksum %#x", crc)
	case crc != crc32.Checksum(page[:48], castagnoli):
		return m, fmt.Errorf("meta page flags checksum mismatch (computed %#x, stored %#x)", crc32.Checksum(page[:48], castagnoli), crc)
	case flags&^metaClean != 0:
		return m, fmt.Errorf("meta page has unknown flags %#x", flags)
	default:
		m.clean = true
	}
	return m, nil
}

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
//
// The rest of the page is zero.
type meta struct {
	pageSize uint32
	root     uint64
	txid     uint64
	lsn      uint64
}

var metaMagic = [8]byte{'S', 'T', 'R', 'A', 'T', 'A', 'D', 'B'}

const (
	metaVersion = 1
	metaSize    = 44
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
	return m, nil
}

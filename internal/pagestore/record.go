package pagestore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/stratadb/strata/internal/codec"
)

// Record layout (little endian), see docs/FORMAT.md:
//
//	0  magic      uint32  recordMagic
//	4  crc        uint32  CRC32C of the payload followed by header bytes 8..36
//	8  page id    uint64
//	16 seq        uint64  store-wide sequence number, increasing in log order
//	24 raw len    uint32  logical page size (0 for a free record)
//	28 stored len uint32  payload length
//	32 codec      uint8   codec.ID of the payload
//	33 kind       uint8   kindPage or kindFree
//	34 reserved   uint16  zero
//	36 payload    [stored len]byte
const (
	recordHeaderSize = 36
	// recordMagic is "STR1" as little-endian bytes. Its first byte is
	// nonzero, which recovery relies on: a zero byte where a record would
	// start is padding, however few bytes are left in the block.
	recordMagic = 0x31525453
)

// Record kinds.
const (
	kindPage uint8 = 1 // a page image
	kindFree uint8 = 2 // the page was freed (a tombstone)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordHeader is the decoded fixed part of a record.
type recordHeader struct {
	pageID    PageID
	seq       uint64
	rawLen    uint32
	storedLen uint32
	codec     codec.ID
	kind      uint8
}

// size is the total length of the record on disk.
func (h *recordHeader) size() int { return recordHeaderSize + int(h.storedLen) }

// payloadCRC is the first half of a record checksum. The payload comes first
// so that writers can checksum it before they take the store's lock, and
// finish with the 28 header bytes (which hold the sequence number assigned
// under the lock) inside it.
func payloadCRC(payload []byte) uint32 { return crc32.Update(0, castagnoli, payload) }

// encodeRecordHeader writes h into dst[:recordHeaderSize] and sets the CRC,
// continuing crc, the payloadCRC of the record's payload.
func encodeRecordHeader(dst []byte, h *recordHeader, crc uint32) {
	_ = dst[recordHeaderSize-1]
	binary.LittleEndian.PutUint32(dst[0:], recordMagic)
	binary.LittleEndian.PutUint64(dst[8:], uint64(h.pageID))
	binary.LittleEndian.PutUint64(dst[16:], h.seq)
	binary.LittleEndian.PutUint32(dst[24:], h.rawLen)
	binary.LittleEndian.PutUint32(dst[28:], h.storedLen)
	dst[32] = byte(h.codec)
	dst[33] = h.kind
	dst[34], dst[35] = 0, 0
	crc = crc32.Update(crc, castagnoli, dst[8:recordHeaderSize])
	binary.LittleEndian.PutUint32(dst[4:], crc)
}

// recordError says why bytes are not a valid record.
type recordError struct{ reason string }

func (e *recordError) Error() string { return e.reason }

// decodeRecord parses and verifies one record at the start of b. pageSize
// bounds the lengths a valid record may claim, so a corrupt length can
// neither make the caller read past its buffer nor allocate.
//
// It returns the header and the payload (a sub-slice of b). Any problem
// (short buffer, bad magic, impossible lengths, checksum mismatch) is a
// *recordError; the caller decides whether that means corruption or the torn
// tail of the log.
func decodeRecord(b []byte, pageSize int) (recordHeader, []byte, error) {
	var h recordHeader
	if len(b) < recordHeaderSize {
		return h, nil, &recordError{"short record header"}
	}
	if m := binary.LittleEndian.Uint32(b[0:]); m != recordMagic {
		return h, nil, &recordError{fmt.Sprintf("bad record magic %#x", m)}
	}
	h.pageID = PageID(binary.LittleEndian.Uint64(b[8:]))
	h.seq = binary.LittleEndian.Uint64(b[16:])
	h.rawLen = binary.LittleEndian.Uint32(b[24:])
	h.storedLen = binary.LittleEndian.Uint32(b[28:])
	h.codec = codec.ID(b[32])
	h.kind = b[33]
	if b[34] != 0 || b[35] != 0 {
		return h, nil, &recordError{"nonzero reserved bytes"}
	}
	switch h.kind {
	case kindPage:
		if h.rawLen != uint32(pageSize) {
			return h, nil, &recordError{fmt.Sprintf("raw length %d, page size is %d", h.rawLen, pageSize)}
		}
		if h.storedLen == 0 || h.storedLen > uint32(pageSize) {
			return h, nil, &recordError{fmt.Sprintf("stored length %d out of range", h.storedLen)}
		}
		if h.codec == codec.None && h.storedLen != h.rawLen {
			return h, nil, &recordError{"raw record with stored length != page size"}
		}
	case kindFree:
		if h.rawLen != 0 || h.storedLen != 0 || h.codec != codec.None {
			return h, nil, &recordError{"free record with payload"}
		}
	default:
		return h, nil, &recordError{fmt.Sprintf("unknown record kind %d", h.kind)}
	}
	if h.pageID > MaxPageID {
		return h, nil, &recordError{fmt.Sprintf("page id %d out of range", h.pageID)}
	}
	if len(b) < h.size() {
		return h, nil, &recordError{"short record payload"}
	}
	payload := b[recordHeaderSize:h.size()]
	crc := crc32.Update(payloadCRC(payload), castagnoli, b[8:recordHeaderSize])
	if want := binary.LittleEndian.Uint32(b[4:]); crc != want {
		return h, nil, &recordError{fmt.Sprintf("record checksum mismatch (computed %#x, stored %#x)", crc, want)}
	}
	return h, payload, nil
}

package flashcache

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to every decoder of on-flash (and
// marker) bytes: none may panic, and whatever decodes must encode back to
// the same bytes.
func FuzzDecode(f *testing.F) {
	o := Options{Path: "x", Size: 8 << 20, PageSize: 4096}.withDefaults()
	sb := superblock{gen: 3, state: stateClean, session: 7, lay: o.layout(), nextVersion: 9, headRegion: 1, headOff: 8192}
	sb.snapEntries = 2
	sb.snapLen = uint64(snapshotHeader+badMapBytes(sb.lay.regions)) + 2*snapshotEntrySize
	sbuf := make([]byte, blockSize)
	snap := make([]byte, sb.snapLen)
	encodeSnapshotHeader(snap, 2, sb.lay.regions, make([]bool, sb.lay.regions))
	encodeSnapEntry(snap[snapshotHeader+badMapBytes(sb.lay.regions):], snapEntry{id: 1, version: 2, size: 100, loc: 4096})
	sb.snapCRC = crc32.Checksum(snap, castagnoli)
	sb.encode(sbuf)
	entry := make([]byte, entryHeaderSize+10)
	encodeEntry(entry, 5, entryHeader{id: 1, version: 2, size: 10, codec: 1}, []byte("0123456789"))
	m := marker{session: 99}
	f.Add(sbuf[:superblockSize])
	f.Add(entry)
	f.Add(m.encode())
	f.Add(append(sbuf[:superblockSize:superblockSize], snap...))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := decodeSuperblock(b); err == nil {
			out := make([]byte, superblockSize)
			s.encode(out)
			if !bytes.Equal(out, b[:superblockSize]) {
				t.Fatal("superblock does not round-trip")
			}
			if len(b) > superblockSize {
				// The rest as its snapshot.
				if bad, entries, err := decodeSnapshot(b[superblockSize:], &s); err == nil {
					if len(bad) != s.lay.regions || uint64(len(entries)) != s.snapEntries {
						t.Fatal("snapshot decoded to the wrong sizes")
					}
				}
			}
		}
		if m, err := decodeMarker(b); err == nil && !bytes.Equal(m.encode(), b) {
			t.Fatal("marker does not round-trip")
		}
		if len(b) >= entryHeaderSize {
			le := binary.LittleEndian
			id, ver, size := le.Uint32(b[8:]), le.Uint32(b[12:]), le.Uint32(b[16:])
			if c, payload, err := decodeEntry(b, 5, id, ver, size); err == nil {
				out := make([]byte, entryHeaderSize+len(payload))
				encodeEntry(out, 5, entryHeader{id: id, version: ver, size: size, codec: c}, payload)
				if !bytes.Equal(out[entryHeaderSize:], b[entryHeaderSize:entryHeaderSize+len(payload)]) || !bytes.Equal(out[:21], b[:21]) {
					t.Fatal("entry does not round-trip")
				}
			}
		}
	})
}

package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// FuzzDecodeRecord checks the record decoder on arbitrary bytes (no panic,
// no read past the input, and a record it accepts re-encodes to exactly the
// bytes it consumed) and on encoded records (they decode to what was
// encoded; every truncation is short; any bit flip outside the length field
// is caught).
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte{}, uint64(1), []byte{})
	f.Add(appendRecord(nil, 7, []byte("hello"), payloadCRC([]byte("hello"))), uint64(7), []byte("hello"))
	f.Add(make([]byte, 40), uint64(1<<63), bytes.Repeat([]byte{0xff}, 100))
	huge := make([]byte, recordHeaderSize)
	binary.LittleEndian.PutUint32(huge[4:], 0xffffffff)
	f.Add(huge, uint64(0), []byte("x"))
	f.Fuzz(func(t *testing.T, data []byte, lsn uint64, payload []byte) {
		if l, p, n, err := decodeRecord(data); err == nil {
			if n > len(data) || n != recordHeaderSize+len(p) {
				t.Fatalf("decoded size %d from %d bytes", n, len(data))
			}
			if re := appendRecord(nil, l, p, payloadCRC(p)); !bytes.Equal(re, data[:n]) {
				t.Fatal("accepted record does not re-encode to its bytes")
			}
		} else if n != 0 || p != nil {
			t.Fatal("failed decode returned data")
		}

		enc := appendRecord(nil, lsn, payload, payloadCRC(payload))
		l, p, n, err := decodeRecord(append(enc, data...))
		if err != nil || l != lsn || !bytes.Equal(p, payload) || n != len(enc) {
			t.Fatalf("round trip: lsn %d, %d bytes, size %d, %v", l, len(p), n, err)
		}
		for _, cut := range []int{0, 1, recordHeaderSize - 1, recordHeaderSize, len(enc) - 1} {
			if cut >= 0 && cut < len(enc) {
				if _, _, _, err := decodeRecord(enc[:cut]); !errors.Is(err, errShortRecord) {
					t.Fatalf("record cut to %d of %d bytes: %v", cut, len(enc), err)
				}
			}
		}
		// CRC-32C detects every single-bit error in a message of fixed
		// length; flipping a length bit changes which bytes are checked.
		bit := int(lsn % uint64(len(enc)*8))
		if bit/8 < 4 || bit/8 >= 8 {
			bad := bytes.Clone(enc)
			bad[bit/8] ^= 1 << (bit % 8)
			if _, _, _, err := decodeRecord(bad); err == nil {
				t.Fatalf("bit %d flipped: accepted", bit)
			}
		}
	})
}

// FuzzOpen writes arbitrary bytes after a valid file header and opens and
// replays the log, with the bytes either in the newest file (where a bad
// record is a torn tail) or in an older one (where it is corruption). It
// must not panic; an error must be ErrCorrupt; and the records replayed
// must be exactly the valid records at the start of the bytes, which in the
// newest file must be all that remains of it.
func FuzzOpen(f *testing.F) {
	var valid []byte
	for i := uint64(1); i <= 3; i++ {
		p := bytes.Repeat([]byte{byte(i)}, int(i*10))
		valid = appendRecord(valid, i, p, payloadCRC(p))
	}
	f.Add(valid, false, uint64(4))
	f.Add(valid, true, uint64(4))
	f.Add(valid[:len(valid)-5], false, uint64(4))
	f.Add(valid[:len(valid)-5], true, uint64(3))
	f.Add(append(bytes.Clone(valid), 0, 0, 0), true, uint64(4))
	f.Add([]byte{}, true, uint64(1))
	f.Add(bytes.Repeat([]byte{0xff}, 64), false, uint64(2))
	f.Fuzz(func(t *testing.T, data []byte, older bool, nextFirst uint64) {
		fs := vfs.NewMem()
		hdr := make([]byte, fileHeaderSize)
		encodeFileHeader(hdr, 1, 1)
		if err := fs.MkdirAll(testDir, 0o755); err != nil {
			t.Fatal(err)
		}
		put := func(num uint32, b []byte) {
			file, err := fs.OpenFile(filePath(testDir, num), os.O_RDWR|os.O_CREATE, 0o644, vfs.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			file.WriteAt(b, 0)
			file.Close()
		}
		put(1, append(hdr, data...))
		if older {
			h2 := make([]byte, fileHeaderSize)
			encodeFileHeader(h2, 2, max(nextFirst, 1))
			put(2, h2)
		}
		l, err := Open(testDir, Options{FS: fs})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: %v", err)
			}
			return
		}
		defer l.Close()
		var replayed []byte // the records replayed, re-encoded
		var n uint64
		err = l.Replay(0, func(lsn uint64, p []byte) error {
			n++
			if lsn != n {
				t.Fatalf("LSN %d, expected %d", lsn, n)
			}
			replayed = appendRecord(replayed, lsn, p, payloadCRC(p))
			return nil
		})
		if !bytes.HasPrefix(data, replayed) {
			t.Fatal("replayed records are not the ones at the start of the file")
		}
		if older {
			// Valid only if the file is exactly the records before the
			// next file's first LSN.
			if err == nil && (len(replayed) != len(data) || n+1 != max(nextFirst, 1)) {
				t.Fatalf("older file accepted with %d of %d bytes as records, %d records before first LSN %d",
					len(replayed), len(data), n, nextFirst)
			}
			if err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Replay: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Replay after a successful Open: %v", err)
		}
		if l.NextLSN() != n+1 {
			t.Fatalf("NextLSN %d after %d records", l.NextLSN(), n)
		}
		if len(replayed) < len(data) {
			// The tail was dropped: it must not have started with a
			// valid record.
			if _, _, _, err := decodeRecord(data[len(replayed):]); err == nil {
				t.Fatal("a valid record was dropped as a torn tail")
			}
		}
		st, err := fs.Stat(filePath(testDir, 1))
		if err != nil || st.Size() != int64(fileHeaderSize+len(replayed)) {
			t.Fatalf("file not truncated to its valid records: %v, %v", st.Size(), err)
		}
	})
}

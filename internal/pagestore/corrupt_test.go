package pagestore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/vfs"
)

// buildStore writes pages 0..n-1 (version = id) and closes the store.
func buildStore(t *testing.T, fs vfs.FS, n int) {
	t.Helper()
	s, err := Open("db", testOptions(fs, mustCodec(t, "zstd")))
	if err != nil {
		t.Fatal(err)
	}
	for id := PageID(0); id < PageID(n); id++ {
		if _, _, err := s.WritePage(id, pageContent(id, int(id), testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func flipByte(t *testing.T, fs vfs.FS, name string, off int64, mask byte) {
	t.Helper()
	f, err := fs.OpenFile(name, os.O_RDWR, 0, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= mask
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, fs vfs.FS, name string) int64 {
	t.Helper()
	st, err := fs.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestCorruptSegment flips random bytes in segment files of a cleanly closed
// store: every read returns the right page or an error wrapping ErrCorrupt
// that names the segment; never wrong bytes, never a panic. A flip inside a
// live record must make that page's read fail.
func TestCorruptSegment(t *testing.T) {
	const n = 40
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 200; trial++ {
		fs := vfs.NewMem()
		buildStore(t, fs, n)
		names, _ := fs.List("db")
		var segs []string
		for _, name := range names {
			if _, ok := parseSegmentFileName(name); ok && fileSize(t, fs, filepath.Join("db", name)) > segmentHeaderSize {
				segs = append(segs, name)
			}
		}
		name := filepath.Join("db", segs[rng.IntN(len(segs))])
		off := rng.Int64N(fileSize(t, fs, name))
		flipByte(t, fs, name, off, byte(1+rng.IntN(255)))

		s, err := Open("db", testOptions(fs, nil))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("open after flip at %s:%d: %v", name, off, err)
			}
			continue
		}
		buf := make([]byte, testPageSize)
		num, _ := parseSegmentFileName(filepath.Base(name))
		for id := PageID(0); id < n; id++ {
			loc := s.pmap.get(id)
			err := s.ReadPage(id, buf)
			inRecord := loc.seg == num && off >= int64(loc.off) && off < int64(loc.off)+int64(loc.len)
			switch {
			case err == nil && !bytes.Equal(buf, pageContent(id, int(id), testPageSize)):
				t.Fatalf("flip at %s:%d: page %d read wrong bytes", name, off, id)
			case err == nil && inRecord:
				t.Fatalf("flip at %s:%d inside page %d's record went unnoticed", name, off, id)
			case err != nil && !errors.Is(err, ErrCorrupt):
				t.Fatalf("page %d: error does not wrap ErrCorrupt: %v", id, err)
			case err != nil && !bytes.Contains([]byte(err.Error()), []byte(filepath.Base(name))):
				t.Fatalf("page %d: error does not name the segment: %v", id, err)
			}
		}
		s.Close()
	}
}

// TestCorruptCheckpoint flips bytes in the checkpoint and truncates it:
// Open must fail with ErrCorrupt, never open a wrong map.
func TestCorruptCheckpoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	name := filepath.Join("db", checkpointName)
	for trial := 0; trial < 100; trial++ {
		fs := vfs.NewMem()
		buildStore(t, fs, 30)
		size := fileSize(t, fs, name)
		if trial%4 == 3 {
			f, _ := fs.OpenFile(name, os.O_RDWR, 0, vfs.OpenOptions{})
			f.Truncate(rng.Int64N(size))
			f.Close()
		} else {
			flipByte(t, fs, name, rng.Int64N(size), byte(1+rng.IntN(255)))
		}
		s, err := Open("db", testOptions(fs, nil))
		if err == nil {
			s.Close()
			t.Fatalf("trial %d: corrupt checkpoint accepted", trial)
		}
		if !errors.Is(err, ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte(checkpointName)) {
			t.Fatalf("trial %d: %v", trial, err)
		}
	}
}

// TestMissingSegment: a checkpoint that refers to a deleted segment file is
// reported, not silently turned into missing pages.
func TestMissingSegment(t *testing.T) {
	fs := vfs.NewMem()
	buildStore(t, fs, 40)
	if err := fs.Remove(filepath.Join("db", segmentFileName(1))); err != nil {
		t.Fatal(err)
	}
	if _, err := Open("db", testOptions(fs, nil)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open with a missing segment: %v", err)
	}
}

// TestNotAStore: a directory whose files are not a store's.
func TestNotAStore(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("db", 0o755); err != nil {
		t.Fatal(err)
	}
	f, _ := fs.OpenFile(filepath.Join("db", checkpointName), os.O_CREATE|os.O_RDWR, 0o644, vfs.OpenOptions{})
	f.WriteAt([]byte("hello, I am a text file, not a checkpoint at all......"), 0)
	f.Close()
	if _, err := Open("db", testOptions(fs, nil)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open of a foreign directory: %v", err)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	c, _ := codec.New(codec.LZ4, 0)
	page := pageContent(3, 2, testPageSize)
	img, used, _ := codec.EncodePage(c, nil, page)
	rec := make([]byte, recordHeaderSize+len(img))
	copy(rec[recordHeaderSize:], img)
	encodeRecordHeader(rec, &recordHeader{pageID: 3, seq: 9, rawLen: testPageSize, storedLen: uint32(len(img)), codec: used, kind: kindPage}, payloadCRC(img))
	f.Add(rec)
	free := make([]byte, recordHeaderSize)
	encodeRecordHeader(free, &recordHeader{pageID: 3, seq: 10, kind: kindFree}, payloadCRC(nil))
	f.Add(free)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, payload, err := decodeRecord(b, testPageSize)
		if err != nil {
			return
		}
		if h.size() > len(b) || len(payload) != int(h.storedLen) {
			t.Fatalf("decoded record claims %d bytes of %d", h.size(), len(b))
		}
		if h.kind == kindPage {
			dst := make([]byte, testPageSize)
			_ = codec.Decompress(h.codec, dst, payload) // must not panic
		}
	})
}

func FuzzDecodeCheckpoint(f *testing.F) {
	c := &checkpoint{pageSize: testPageSize, generation: 7,
		ckptState: ckptState{nextSeq: 5, nextSegNum: 4, replay: [numStreams]replayPos{{2, 100}, {3, 4096}}},
		segs:      []segInfo{{1, 3}, {2, 4}},
		entries:   []location{{1, 32, 100}, {}, {2, 4096, 4132}}}
	f.Add(c.encode())
	f.Add(encodeCheckpointV1(testPageSize, 5, 2, 100, 3, []location{{1, 32, 100}, {}, {2, 4096, 4132}}))
	f.Add([]byte("STRATCKP"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCheckpoint(b)
		if err != nil {
			return
		}
		var again []byte
		if c.version == 1 {
			again = encodeCheckpointV1(c.pageSize, c.nextSeq, c.replay[streamHot].seg, c.replay[streamHot].off, c.nextSegNum, c.entries)
			if c.flags != 0 {
				return // encodeCheckpointV1 writes no flags
			}
		} else {
			again = c.encode()
		}
		if !bytes.Equal(again, b) {
			t.Fatal("accepted checkpoint does not re-encode to the same bytes")
		}
	})
}

// encodeCheckpointV1 writes a checkpoint in the format of version 1, which
// the store reads but no longer writes.
func encodeCheckpointV1(pageSize uint32, nextSeq uint64, replaySeg, replayOff, nextSegNum uint32, entries []location) []byte {
	b := make([]byte, checkpointV1HeaderSize+len(entries)*locationSize+4)
	copy(b, checkpointMagic[:])
	binary.LittleEndian.PutUint32(b[8:], 1)
	binary.LittleEndian.PutUint32(b[12:], pageSize)
	binary.LittleEndian.PutUint64(b[16:], nextSeq)
	binary.LittleEndian.PutUint32(b[24:], replaySeg)
	binary.LittleEndian.PutUint32(b[28:], replayOff)
	binary.LittleEndian.PutUint32(b[32:], nextSegNum)
	binary.LittleEndian.PutUint64(b[40:], uint64(len(entries)))
	p := b[checkpointV1HeaderSize:]
	for _, e := range entries {
		encodeLocation(p, e)
		p = p[locationSize:]
	}
	binary.LittleEndian.PutUint32(p, crc32.Checksum(b[:len(b)-4], castagnoli))
	return b
}

// FuzzRecover opens a store whose newest segment holds arbitrary bytes after
// a valid header: recovery must not panic, and must either fail with
// ErrCorrupt or succeed with a store whose pages read back cleanly.
func FuzzRecover(f *testing.F) {
	fs := vfs.NewMem()
	s, _ := Open("db", testOptions(fs, mustCodec(f, "lz4")))
	for id := PageID(0); id < 5; id++ {
		s.WritePage(id, pageContent(id, int(id)+2, testPageSize))
	}
	s.Sync()
	seg := s.streams[streamHot].head
	data := make([]byte, seg.size)
	seg.f.ReadAt(data, 0)
	s.Close()
	f.Add(data[segmentHeaderSize:])
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, tail []byte) {
		fs := vfs.NewMem()
		fs.MkdirAll("db", 0o755)
		c := &checkpoint{pageSize: testPageSize, generation: 1}
		c.nextSegNum = 2
		c.replay[streamHot] = replayPos{seg: 1}
		if _, err := writeCheckpoint(fs, "db", c); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, segmentHeaderSize, segmentHeaderSize+len(tail))
		encodeSegmentHeader(b, testPageSize, 1, streamHot)
		b = append(b, tail...)
		sf, _ := fs.OpenFile(filepath.Join("db", segmentFileName(1)), os.O_CREATE|os.O_RDWR, 0o644, vfs.OpenOptions{})
		sf.WriteAt(b, 0)
		sf.Close()
		s, err := Open("db", testOptions(fs, nil))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("recovery error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		defer s.Close()
		buf := make([]byte, testPageSize)
		for id := PageID(0); id < PageID(len(s.pmap.entries)) && id < 1000; id++ {
			if err := s.ReadPage(id, buf); err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("page %d: %v", id, err)
			}
		}
	})
}

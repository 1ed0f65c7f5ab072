package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// buildLog writes 60 records of 0 to 200 bytes into files of about 512
// bytes, then 6 smaller ones into a new file, closes the log and returns
// the file system and the payloads.
func buildLog(t *testing.T) (*vfs.MemFS, [][]byte) {
	t.Helper()
	fs := vfs.NewMem()
	l := mustOpen(t, testDir, Options{FS: fs, SyncMode: SyncNever, FileSize: 512})
	rng := rand.New(rand.NewPCG(9, 9))
	var want [][]byte
	for i := 0; i < 60; i++ {
		p := randPayload(rng, rng.IntN(200))
		if _, err := appendWait(l, p, false); err != nil {
			t.Fatal(err)
		}
		if err := l.settle(); err != nil { // one record per write
			t.Fatal(err)
		}
		want = append(want, p)
	}
	// A newest file with several records.
	if err := l.Rotate(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		p := randPayload(rng, rng.IntN(50))
		if _, err := appendWait(l, p, false); err != nil {
			t.Fatal(err)
		}
		if err := l.settle(); err != nil { // one record per write
			t.Fatal(err)
		}
		want = append(want, p)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(walFiles(t, fs, testDir)); n < 5 {
		t.Fatalf("only %d files", n)
	}
	return fs, want
}

func readFile(t *testing.T, fs vfs.FS, path string) []byte {
	t.Helper()
	f, err := fs.OpenFile(path, os.O_RDONLY, 0, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size, _ := f.Size()
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, fs vfs.FS, path string, b []byte) {
	t.Helper()
	if err := fs.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fs.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
}

// patch applies fn to a copy of the file system's file.
func patch(t *testing.T, fs *vfs.MemFS, name string, fn func([]byte) []byte) *vfs.MemFS {
	t.Helper()
	c := fs.CrashClone(vfs.CrashDropUnsynced, nil) // everything was synced: an exact copy
	path := filepath.Join(testDir, name)
	writeFile(t, c, path, fn(readFile(t, c, path)))
	return c
}

// openAndReplay opens the log and replays it, checking every payload it
// is given against want; it returns the first error and the number of
// records replayed.
func openAndReplay(t *testing.T, fs vfs.FS, want [][]byte) (int, error) {
	t.Helper()
	l, err := Open(testDir, Options{FS: fs})
	if err != nil {
		return 0, err
	}
	defer l.Close()
	n := 0
	err = l.Replay(0, func(lsn uint64, p []byte) error {
		if lsn != uint64(n+1) || lsn > uint64(len(want)) || !bytes.Equal(p, want[lsn-1]) {
			t.Fatalf("Replay gave a wrong record: LSN %d (expected %d)", lsn, n+1)
		}
		n++
		return nil
	})
	return n, err
}

// TestCorruptOlderFile flips every bit position class of every byte of an
// older file, one byte at a time. Each must be reported as ErrCorrupt
// naming the file, by Open (file header) or Replay (records), and Replay
// must never hand out a wrong record.
func TestCorruptOlderFile(t *testing.T) {
	fs, want := buildLog(t)
	name := walFiles(t, fs, testDir)[1]
	orig := readFile(t, fs, filepath.Join(testDir, name))
	for off := range orig {
		c := patch(t, fs, name, func(b []byte) []byte {
			b[off] ^= 1 << (off % 8)
			return b
		})
		_, err := openAndReplay(t, c, want)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), name) {
			t.Fatalf("byte %d of %s flipped: got %v, want ErrCorrupt naming the file", off, name, err)
		}
	}
}

// TestCorruptNewestFile flips each byte of the newest file. A flip in its
// header is corruption (the file holds records, so it is not a file whose
// creation was interrupted); a flip in a record is indistinguishable from
// a torn write, so the log must be truncated exactly before that record,
// keeping every record before it, and go on working.
func TestCorruptNewestFile(t *testing.T) {
	fs, want := buildLog(t)
	files := walFiles(t, fs, testDir)
	name := files[len(files)-1]
	orig := readFile(t, fs, filepath.Join(testDir, name))
	first := binary.LittleEndian.Uint64(orig[16:])
	// Record boundaries in the file.
	var starts []int
	for off := fileHeaderSize; off < len(orig); {
		_, _, n, err := decodeRecord(orig[off:])
		if err != nil {
			t.Fatal(err)
		}
		starts = append(starts, off)
		off += n
	}
	if len(starts) < 2 {
		t.Fatalf("newest file has %d records", len(starts))
	}
	for off := range orig {
		c := patch(t, fs, name, func(b []byte) []byte {
			b[off] ^= 0x40
			return b
		})
		n, err := openAndReplay(t, c, want)
		if off < fileHeaderSize {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("header byte %d flipped: %v", off, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("byte %d flipped: %v", off, err)
		}
		rec := 0 // index in the file of the record holding off
		for rec+1 < len(starts) && starts[rec+1] <= off {
			rec++
		}
		if wantN := int(first) - 1 + rec; n != wantN {
			t.Fatalf("byte %d (record %d of the file) flipped: %d records survive, want %d", off, rec, n, wantN)
		}
		l := mustOpen(t, testDir, Options{FS: c})
		if lsn, err := appendWait(l, []byte("more"), true); err != nil || lsn != uint64(n+1) {
			t.Fatalf("Append after recovery: %d, %v", lsn, err)
		}
		l.Close()
	}
}

// TestCorruptStructure damages the log in ways a crash cannot explain and
// checks that each is reported as ErrCorrupt naming the file.
func TestCorruptStructure(t *testing.T) {
	fs, want := buildLog(t)
	files := walFiles(t, fs, testDir)
	newest := files[len(files)-1]
	header := func(num uint32, first uint64) []byte {
		h := make([]byte, fileHeaderSize)
		encodeFileHeader(h, num, first)
		return h
	}
	firstOf := func(name string) uint64 {
		return binary.LittleEndian.Uint64(readFile(t, fs, filepath.Join(testDir, name))[16:])
	}
	cases := []struct {
		name    string
		mutate  func() *vfs.MemFS
		mention string // the file the error must name
	}{
		{"missing middle file", func() *vfs.MemFS {
			c := fs.CrashClone(vfs.CrashDropUnsynced, nil)
			if err := c.Remove(filepath.Join(testDir, files[2])); err != nil {
				t.Fatal(err)
			}
			return c
		}, files[2]},
		{"older file cut inside a record", func() *vfs.MemFS {
			return patch(t, fs, files[1], func(b []byte) []byte { return b[:len(b)-3] })
		}, files[1]},
		{"older file cut at a record boundary", func() *vfs.MemFS {
			return patch(t, fs, files[1], cutLastRecord)
		}, files[1]},
		{"garbage after an older file's records", func() *vfs.MemFS {
			return patch(t, fs, files[1], func(b []byte) []byte { return append(b, 1, 2, 3) })
		}, files[1]},
		{"zeros after an older file's records", func() *vfs.MemFS {
			return patch(t, fs, files[1], func(b []byte) []byte { return append(b, make([]byte, 100)...) })
		}, files[1]},
		{"valid extra record in an older file", func() *vfs.MemFS {
			next := firstOf(files[2])
			return patch(t, fs, files[1], func(b []byte) []byte {
				return appendRecord(b, next, []byte("dup"), payloadCRC([]byte("dup")))
			})
		}, files[1]},
		{"file header names another number", func() *vfs.MemFS {
			return patch(t, fs, files[1], func(b []byte) []byte { return append(header(7, firstOf(files[1])), b[fileHeaderSize:]...) })
		}, files[1]},
		{"first LSN below the previous file's", func() *vfs.MemFS {
			return patch(t, fs, files[2], func(b []byte) []byte { return append(header(3, 1), b[fileHeaderSize:]...) })
		}, files[2]},
		{"gap in the LSNs between files", func() *vfs.MemFS {
			f := firstOf(files[2])
			return patch(t, fs, files[2], func(b []byte) []byte {
				out := header(3, f+1)
				for off := fileHeaderSize; off < len(b); {
					lsn, p, n, _ := decodeRecord(b[off:])
					out = appendRecord(out, lsn+1, p, payloadCRC(p))
					off += n
				}
				return out
			})
		}, files[1]},
		{"newest file's header damaged, records follow", func() *vfs.MemFS {
			return patch(t, fs, newest, func(b []byte) []byte { b[3] ^= 1; return b })
		}, newest},
		{"record with a valid checksum and a wrong LSN in the newest file", func() *vfs.MemFS {
			return patch(t, fs, newest, func(b []byte) []byte {
				return appendRecord(b, 1000, []byte("x"), payloadCRC([]byte("x")))
			})
		}, newest},
		{"unsupported version", func() *vfs.MemFS {
			return patch(t, fs, files[0], func(b []byte) []byte {
				binary.LittleEndian.PutUint32(b[8:], 2)
				binary.LittleEndian.PutUint32(b[28:], payloadCRC(b[:28]))
				return b
			})
		}, files[0]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := openAndReplay(t, tc.mutate(), want)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("got %v, want ErrCorrupt naming %s", err, tc.mention)
			}
		})
	}
}

// TestInterruptedCreation checks the one case where an invalid file header
// is not corruption: the newest file, no longer than a header, whose
// creation a crash interrupted before its header was fsynced. It is
// removed and the log goes on from the file before it (or, for the first
// file of a log, starts afresh). The same file as the only file of a log
// whose first file is not number 1 cannot come from a crash.
func TestInterruptedCreation(t *testing.T) {
	fs, want := buildLog(t)
	files := walFiles(t, fs, testDir)
	next, _ := parseFileName(files[len(files)-1])
	next++
	for _, size := range []int{0, 5, fileHeaderSize} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			c := fs.CrashClone(vfs.CrashDropUnsynced, nil)
			junk := make([]byte, size)
			for i := range junk {
				junk[i] = byte(i * 7)
			}
			writeFile(t, c, filePath(testDir, next), junk)
			n, err := openAndReplay(t, c, want)
			if err != nil || n != len(want) {
				t.Fatalf("%d records, %v", n, err)
			}
			if got := walFiles(t, c, testDir); len(got) != len(files) {
				t.Fatalf("files after recovery: %v", got)
			}
			// The fresh-log case.
			c = vfs.NewMem()
			writeFile(t, c, filePath(testDir, 1), junk)
			l := mustOpen(t, testDir, Options{FS: c})
			if l.NextLSN() != 1 || l.Stats().Files != 1 {
				t.Fatalf("fresh log after interrupted creation: NextLSN %d, %d files", l.NextLSN(), l.Stats().Files)
			}
			l.Close()
			// A lone file numbered above 1 cannot be an interrupted creation.
			c = vfs.NewMem()
			writeFile(t, c, filePath(testDir, 5), junk)
			if _, err := Open(testDir, Options{FS: c}); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("lone torn file 5: %v", err)
			}
		})
	}
}

// cutLastRecord returns a log file's bytes without its last record.
func cutLastRecord(b []byte) []byte {
	var ends []int
	for off := fileHeaderSize; off < len(b); {
		_, _, n, _ := decodeRecord(b[off:])
		off += n
		ends = append(ends, off)
	}
	return b[:ends[len(ends)-2]]
}

package wal

// Inspection: a read-only verification of a log's files, for `strata
// check`. It applies the rules of Open (recover.go) and Replay to every
// file, without writing, truncating, removing or locking anything, and
// hands each valid record to a callback. The caller must make sure no
// process has the log open.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/stratadb/strata/internal/vfs"
)

// Finding is one problem in a log file.
type Finding struct {
	File   string
	Offset int64 // -1: the file as a whole
	Msg    string
	// Repairable: a state a crash explains and Open repairs (a torn tail
	// of the newest file, an interrupted file creation). Every other
	// finding is corruption, which Open or Replay would refuse.
	Repairable bool
}

func (f Finding) String() string {
	if f.Offset < 0 {
		return fmt.Sprintf("%s: %s", f.File, f.Msg)
	}
	return fmt.Sprintf("%s offset %d: %s", f.File, f.Offset, f.Msg)
}

// Inspection is the result of Inspect.
type Inspection struct {
	Dir   string
	Files []string
	// FirstLSN is the first file's first LSN; NextLSN the LSN Open would
	// give the next record (0 and 1 for a log with no files).
	FirstLSN, NextLSN uint64
	Records           int64
	Findings          []Finding
	// Skips are the places where the log moves forward: a file ends
	// before the LSN the next one starts at, as Open with MinNextLSN
	// leaves it (and as an older file that lost its last records would
	// look). Open accepts them; Replay from below one fails (ErrCorrupt).
	// Whether records are missing depends on where the caller's recovery
	// starts: a skip that ends at or below it is no loss.
	Skips []Skip
}

// Skip is a forward move of the log: no records From to To-1; File, the
// file that starts at To.
type Skip struct {
	From, To uint64
	File     string
}

// Inspect verifies the log in dir and calls fn with every valid record in
// LSN order (payload valid during the call), up to the first corruption.
// The error is for I/O failures and errors fn returns; damage goes to
// Findings.
func Inspect(fs vfs.FS, dir string, fn func(lsn uint64, payload []byte) error) (*Inspection, error) {
	in := &Inspection{Dir: dir, NextLSN: 1}
	names, err := fs.List(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return in, nil // Open creates it
		}
		return nil, fmt.Errorf("wal: list %s: %w", dir, err)
	}
	var nums []uint32
	for _, name := range names {
		if n, ok := parseFileName(name); ok {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	note := func(path string, off int64, repairable bool, format string, args ...any) {
		in.Findings = append(in.Findings, Finding{File: path, Offset: off, Msg: fmt.Sprintf(format, args...), Repairable: repairable})
	}
	for i := 1; i < len(nums); i++ {
		if nums[i] != nums[i-1]+1 {
			note(filePath(dir, nums[i-1]+1), -1, false, "missing (found %s and %s)", fileName(nums[i-1]), fileName(nums[i]))
			return in, nil
		}
	}
	var files []fileInfo
	for i, n := range nums {
		path := filePath(dir, n)
		hdr, size, err := readHeader(fs, path)
		if err != nil {
			return nil, err
		}
		first, herr := decodeFileHeader(hdr, n)
		if herr != nil {
			if i == len(nums)-1 && size <= fileHeaderSize && (i > 0 || n == 1) {
				note(path, 0, true, "%v: a file whose creation was interrupted; Open removes it", herr)
				break
			}
			note(path, 0, false, "%v", herr)
			return in, nil
		}
		if i > 0 && first < files[i-1].first {
			note(path, 16, false, "first LSN %d is below the previous file's first LSN %d", first, files[i-1].first)
			return in, nil
		}
		files = append(files, fileInfo{num: n, first: first})
		in.Files = append(in.Files, path)
	}
	if len(files) == 0 {
		return in, nil
	}
	in.FirstLSN = files[0].first
	var buf []byte
	for i, fi := range files {
		path := filePath(dir, fi.num)
		newest := i == len(files)-1
		f, err := fs.OpenFile(path, os.O_RDONLY, 0, vfs.OpenOptions{})
		if err != nil {
			return nil, fmt.Errorf("wal: open %s: %w", path, err)
		}
		size, err := f.Size()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("wal: size of %s: %w", path, err)
		}
		rr := newRecordReader(f, size, buf)
		want := fi.first
		var stop bool
		for {
			off := rr.off
			lsn, payload, err := rr.next()
			if err == io.EOF {
				break
			}
			var re readError
			if errors.As(err, &re) {
				f.Close()
				return nil, fmt.Errorf("wal: read %s: %w", path, err)
			}
			if err != nil {
				if newest {
					msg := fmt.Sprintf("%v: a torn write at the end of the log; Open truncates the %d bytes from here", err, size-off)
					if n, first, last := validAfter(f, off, size, want); n > 0 {
						// A crash tears only what was not yet synced, so these
						// records were not acknowledged as durable, unless the
						// damage is not a crash's (then they are lost).
						msg += fmt.Sprintf(", with %d valid records after the damage (LSN %d to %d): if any was acknowledged as durable, this is damage, not a torn write, and Open drops them", n, first, last)
					}
					note(path, off, true, "%s", msg)
				} else {
					note(path, off, false, "%v", err)
				}
				stop = true
				break
			}
			if lsn != want {
				note(path, off, false, "record has LSN %d, expected %d", lsn, want)
				stop = true
				break
			}
			if !newest && lsn >= files[i+1].first {
				note(path, off, false, "record LSN %d, but the next file starts at LSN %d", lsn, files[i+1].first)
				stop = true
				break
			}
			want++
			in.Records++
			if fn != nil {
				if err := fn(lsn, payload); err != nil {
					f.Close()
					return nil, err
				}
			}
		}
		buf = rr.buf
		f.Close()
		in.NextLSN = want
		if stop && !newest {
			return in, nil
		}
		if !newest && want != files[i+1].first {
			// Records at or above the next file's first LSN stopped the
			// loop above: the next file starts beyond this one's end.
			in.Skips = append(in.Skips, Skip{From: want, To: files[i+1].first, File: filePath(dir, files[i+1].num)})
		}
	}
	return in, nil
}

// validAfter counts the valid records with LSN at or above want that
// start after offset off of f (size bytes): records beyond a damaged one,
// which recovery drops with the torn tail. It reads what is after off
// once and tries each offset (offline: strata check).
func validAfter(f vfs.File, off, size int64, want uint64) (n int, first, last uint64) {
	if size-off > 256<<20 {
		return 0, 0, 0 // larger than any log file: not worth the memory
	}
	b := make([]byte, size-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return 0, 0, 0
	}
	most := want + uint64(len(b)/recordHeaderSize) // no more records fit
	for i := 1; i+recordHeaderSize <= len(b); {
		// An LSN out of range first (cheap), the checksum only then.
		if lsn := binary.LittleEndian.Uint64(b[i+8:]); lsn < want || lsn > most {
			i++
			continue
		}
		lsn, _, used, err := decodeRecord(b[i:])
		if err != nil {
			i++
			continue
		}
		if n == 0 {
			first = lsn
		}
		n, last = n+1, lsn
		i += used
	}
	return n, first, last
}

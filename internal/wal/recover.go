package wal

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stratadb/strata/internal/vfs"
)

// readBufferSize is the read-ahead of recovery and Replay, which read each
// file sequentially.
const readBufferSize = 256 << 10

// Open opens the log in dir, creating the directory and the log if needed,
// and recovers it after a crash. It checks that the files are numbered
// without gaps and that their headers are valid, and scans the newest file
// to find the end of the log: the first record there that is incomplete or
// fails its checksum is a torn write, and the file is truncated at it (and
// fsynced). Older files are only verified when Replay reads them, so that
// Open costs one file's read however long the log is. NextLSN continues
// after the last valid record.
//
// Open holds an exclusive lock on dir/wal.lock until Close, so a second Open
// of the same log, in this or another process, fails (with vfs.ErrLocked).
func Open(dir string, opts Options) (*Log, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	fs := opts.FS
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("wal: create %s: %w", dir, err)
	}
	lock, err := fs.Lock(filepath.Join(dir, lockName))
	if err != nil {
		return nil, fmt.Errorf("wal: lock %s: %w", dir, err)
	}
	l := &Log{
		dir:  dir,
		opts: opts,
		fs:   fs,
		log:  opts.Logger,
		lock: lock,
		kick: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	l.progress.L = &l.mu
	l.room.L = &l.mu
	err = l.recover()
	if err == nil && opts.MinNextLSN > 0 {
		err = l.skipTo(opts.MinNextLSN)
	}
	if err != nil {
		if l.f != nil {
			l.f.Close()
		}
		lock.Close()
		return nil, err
	}
	go l.writeLoop()
	return l, nil
}

// corrupt makes an ErrCorrupt error naming the file and offset.
func corrupt(path string, off int64, format string, args ...any) error {
	return fmt.Errorf("wal: %s offset %d: %w: %s", path, off, ErrCorrupt, fmt.Sprintf(format, args...))
}

// recover finds the log's files, checks them and opens the newest for
// appending. It runs before the Log is shared, so it takes no locks.
func (l *Log) recover() error {
	names, err := l.fs.List(l.dir)
	if err != nil {
		return fmt.Errorf("wal: list %s: %w", l.dir, err)
	}
	var nums []uint32
	for _, name := range names {
		if n, ok := parseFileName(name); ok {
			nums = append(nums, n)
		}
		if base, ok := strings.CutSuffix(name, deadSuffix); ok {
			if _, ok := parseFileName(base); ok {
				// Removed from the log by TruncateBefore; a crash came
				// before it was freed.
				if err := l.fs.Remove(filepath.Join(l.dir, name)); err != nil {
					l.log.Warn("wal: removing an obsolete file", "file", name, "err", err)
				}
			}
		}
	}
	slices.Sort(nums)
	if len(nums) == 0 {
		return l.create()
	}
	// TruncateBefore deletes oldest first, one durable deletion at a
	// time, and a file is created only once its predecessor is durable:
	// the numbers on disk are always contiguous.
	for i := 1; i < len(nums); i++ {
		if nums[i] != nums[i-1]+1 {
			return fmt.Errorf("wal: %s: %w: file %s is missing (found %s and %s)", l.dir, ErrCorrupt,
				fileName(nums[i-1]+1), fileName(nums[i-1]), fileName(nums[i]))
		}
	}
	for i, n := range nums {
		path := filePath(l.dir, n)
		hdr, size, err := readHeader(l.fs, path)
		if err != nil {
			return err
		}
		first, herr := decodeFileHeader(hdr, n)
		if herr != nil {
			// A newest file no longer than a header, whose header is
			// invalid, was being created when the system crashed: its
			// header is fsynced before any record is written to it, so
			// it holds nothing. (If it is the only file, it must be the
			// first file of a new log: a later file is only created while
			// its predecessor exists, and that is deleted only after.)
			if i == len(nums)-1 && size <= fileHeaderSize && (i > 0 || n == 1) {
				l.log.Warn("wal: removing a file whose creation was interrupted", "file", path, "reason", herr)
				if err := l.fs.Remove(path); err != nil {
					return fmt.Errorf("wal: remove %s: %w", path, err)
				}
				if err := l.syncDir(l.dir); err != nil {
					return err
				}
				break
			}
			return corrupt(path, 0, "%v", herr)
		}
		if i > 0 && first < l.files[i-1].first {
			return corrupt(path, 16, "first LSN %d is below the previous file's first LSN %d", first, l.files[i-1].first)
		}
		l.files = append(l.files, fileInfo{num: n, first: first})
	}
	if len(l.files) == 0 {
		return l.create()
	}
	return l.recoverNewest()
}

// readHeader returns the first fileHeaderSize bytes of a file (fewer if it
// is shorter) and its size.
func readHeader(fs vfs.FS, path string) ([]byte, int64, error) {
	f, err := fs.OpenFile(path, os.O_RDONLY, 0, vfs.OpenOptions{})
	if err != nil {
		return nil, 0, fmt.Errorf("wal: open %s: %w", path, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, 0, fmt.Errorf("wal: size of %s: %w", path, err)
	}
	hdr := make([]byte, min(size, fileHeaderSize))
	if _, err := f.ReadAt(hdr, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, fmt.Errorf("wal: read %s: %w", path, err)
	}
	return hdr, size, nil
}

// create starts a new, empty log: file 1, whose first LSN is 1.
func (l *Log) create() error {
	// The log's directory, and any of its ancestors, may have just been
	// created (by this Open's MkdirAll, or by one that crashed): make
	// their entries durable before anything in them is acknowledged. A
	// new log is rare, so syncing every ancestor is cheaper than being
	// clever about which ones are new.
	l.stats.dirSyncs.Add(1)
	if err := vfs.SyncAncestors(l.fs, l.dir); err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	f, err := l.createFile(1, 1)
	if err != nil {
		return err
	}
	l.files = []fileInfo{{num: 1, first: 1}}
	l.f, l.off = f, fileHeaderSize
	l.nextLSN = 1
	return nil
}

// recoverNewest scans the newest file to the end of its valid records,
// truncates whatever follows (a torn write) and opens it for appending.
func (l *Log) recoverNewest() error {
	fi := l.files[len(l.files)-1]
	path := filePath(l.dir, fi.num)
	f, err := l.fs.OpenFile(path, os.O_RDWR, 0, vfs.OpenOptions{})
	if err != nil {
		return fmt.Errorf("wal: open %s: %w", path, err)
	}
	l.f = f // closed by Open if recovery fails
	size, err := f.Size()
	if err != nil {
		return fmt.Errorf("wal: size of %s: %w", path, err)
	}
	rr := newRecordReader(f, size, nil)
	next := fi.first
	var torn error
	end := rr.off
	for {
		end = rr.off
		lsn, _, err := rr.next()
		if err == io.EOF {
			break
		}
		var re readError
		if errors.As(err, &re) {
			return fmt.Errorf("wal: read %s: %w", path, err)
		}
		if err != nil {
			torn = err
			break
		}
		if lsn != next {
			// A record that passes its checksum is not a torn write.
			return corrupt(path, end, "record has LSN %d, expected %d", lsn, next)
		}
		next++
	}
	if torn != nil {
		l.log.Warn("wal: dropping torn tail", "file", path, "offset", end, "bytes", size-end, "reason", torn)
		if err := f.Truncate(end); err != nil {
			return fmt.Errorf("wal: truncate torn tail of %s at %d: %w", path, end, err)
		}
	}
	// Always fsync, torn or not: after a crash of the process alone the
	// records read may be in the OS cache only, and SyncedLSN below claims
	// them. Written again first: after a failed fsync they may be there
	// marked clean, which an fsync does not write (vfs.RewriteRange), and
	// records appended after them would then follow a hole that a power
	// loss turns into a torn tail. (The newest file holds at most FileSize
	// and a batch; records in older files were synced before the log moved
	// on, as errors stop it.)
	// Likewise the newest file's directory entry, in case its creation was
	// interrupted before the directory fsync.
	if !l.opts.SkipRecoveryRewrite {
		if err := vfs.RewriteRange(f, 0, end); err != nil {
			return fmt.Errorf("wal: %s: %w", path, err)
		}
	}
	err = f.Sync()
	l.stats.syncs.Add(1)
	if err != nil {
		return fmt.Errorf("wal: fsync %s: %w", path, err)
	}
	if err := l.syncDir(l.dir); err != nil {
		return err
	}
	l.off = end
	l.nextLSN = next
	l.writtenLSN = next - 1
	l.syncedLSN = next - 1
	return nil
}

func (l *Log) syncDir(dir string) error {
	err := l.fs.SyncDir(dir)
	l.stats.dirSyncs.Add(1)
	if err != nil {
		return fmt.Errorf("wal: fsync directory %s: %w", dir, err)
	}
	return nil
}

// newRecordReader reads the records of f from after its header up to end,
// reusing buf as its record buffer.
func newRecordReader(f vfs.File, end int64, buf []byte) *recordReader {
	n := max(end-fileHeaderSize, 0)
	return &recordReader{
		r:   bufio.NewReaderSize(io.NewSectionReader(f, fileHeaderSize, n), readBufferSize),
		off: fileHeaderSize,
		end: max(end, fileHeaderSize),
		buf: buf,
	}
}

// Replay calls fn for every record with an LSN of at least from, in LSN
// order, stopping at the first error fn returns (which Replay returns
// unchanged). payload is valid only until fn returns. Records below
// FirstLSN were removed by TruncateBefore and are not replayed.
//
// Replay verifies what it reads: every record's checksum, LSNs that follow
// each other without a gap across files, and files that end exactly where
// the next one begins. A violation is an ErrCorrupt error naming the file
// and offset; the records before it have been passed to fn, the one that
// failed and those after have not.
//
// Replay is meant for recovery, between Open and the first Append, but it
// may run concurrently with Append: it first waits for the writer to write
// every record appended before it started (without an fsync), and replays
// those. fn may call Append but must not call TruncateBefore or Close,
// which wait for Replay to finish. On a failed log it replays the records
// written before the failure.
func (l *Log) Replay(from uint64, fn func(lsn uint64, payload []byte) error) error {
	l.truncMu.RLock()
	defer l.truncMu.RUnlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.waitWrittenLocked(l.nextLSN)
	files := slices.Clone(l.files)
	endOff, endLSN := l.off, l.writtenLSN
	l.mu.Unlock()

	var buf []byte
	for i, fi := range files {
		next, limit := endLSN+1, endOff // the active file
		if i < len(files)-1 {
			next, limit = files[i+1].first, -1
		}
		if next <= from {
			continue // every record of this file is below from
		}
		var err error
		if buf, err = l.replayFile(fi, next, limit, from, buf, fn); err != nil {
			return err
		}
	}
	return nil
}

// replayFile replays one file, whose records must have LSNs fi.first to
// next-1. limit is where its data ends, or -1 for the end of the file.
func (l *Log) replayFile(fi fileInfo, next uint64, limit int64, from uint64, buf []byte,
	fn func(uint64, []byte) error) ([]byte, error) {
	path := filePath(l.dir, fi.num)
	f, err := l.fs.OpenFile(path, os.O_RDONLY, 0, vfs.OpenOptions{})
	if err != nil {
		return buf, fmt.Errorf("wal: open %s: %w", path, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return buf, fmt.Errorf("wal: size of %s: %w", path, err)
	}
	if limit < 0 {
		limit = size
	} else if size < limit {
		return buf, corrupt(path, size, "file is %d bytes, the log has written %d", size, limit)
	}
	hdr := make([]byte, min(size, fileHeaderSize))
	if _, err := f.ReadAt(hdr, 0); err != nil && !errors.Is(err, io.EOF) {
		return buf, fmt.Errorf("wal: read %s: %w", path, err)
	}
	if first, err := decodeFileHeader(hdr, fi.num); err != nil {
		return buf, corrupt(path, 0, "%v", err)
	} else if first != fi.first {
		return buf, corrupt(path, 16, "first LSN %d, was %d at Open", first, fi.first)
	}
	rr := newRecordReader(f, limit, buf)
	want := fi.first
	for {
		off := rr.off
		lsn, payload, err := rr.next()
		if err == io.EOF {
			break
		}
		var re readError
		if errors.As(err, &re) {
			return rr.buf, fmt.Errorf("wal: read %s: %w", path, err)
		}
		if err != nil {
			return rr.buf, corrupt(path, off, "%v", err)
		}
		if lsn != want {
			return rr.buf, corrupt(path, off, "record has LSN %d, expected %d", lsn, want)
		}
		if lsn >= next {
			return rr.buf, corrupt(path, off, "record LSN %d, but the next file starts at LSN %d", lsn, next)
		}
		want++
		if lsn >= from {
			if err := fn(lsn, payload); err != nil {
				return rr.buf, err
			}
		}
	}
	if want != next {
		return rr.buf, corrupt(path, rr.off, "file ends before LSN %d, but the next file starts at LSN %d", want, next)
	}
	return rr.buf, nil
}

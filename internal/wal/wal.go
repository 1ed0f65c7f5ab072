package wal

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

var (
	// ErrCorrupt: bytes on disk failed verification somewhere a crash
	// cannot explain (an older file, a file header, a gap in the LSNs or
	// in the file numbers). The wrapping error names the file and offset.
	ErrCorrupt = errors.New("wal: corrupt log")
	// ErrClosed: the log has been closed.
	ErrClosed = errors.New("wal: closed")
	// ErrTooLarge: Append was given a payload longer than MaxRecordSize.
	ErrTooLarge = errors.New("wal: record too large")
)

// maxSpareBuffer is the largest batch buffer kept for reuse; a larger one
// (left by a burst of big records) is dropped so that it does not pin memory.
const maxSpareBuffer = 4 << 20

// Log is an open write-ahead log. All its methods are safe for concurrent
// use.
type Log struct {
	dir  string
	opts Options
	fs   vfs.FS
	log  *slog.Logger
	lock io.Closer

	// truncMu keeps TruncateBefore from deleting a file that Replay is
	// about to read, and Close from finishing while either runs. Replay
	// holds it shared.
	truncMu sync.RWMutex

	mu sync.Mutex
	// cond (on mu) is broadcast whenever writtenLSN, syncedLSN, busy, err
	// or closed changes.
	cond sync.Cond

	// Guarded by mu.
	nextLSN    uint64 // LSN the next Append gets
	writtenLSN uint64 // records up to here are written to the files (OS page cache)
	syncedLSN  uint64 // records up to here are durable
	syncWant   uint64 // highest LSN some caller waits to see durable
	pending    []byte // encoded records not yet handed to a leader
	spare      []byte // the other batch buffer, for reuse
	// busy: a goroutine is the leader. Only the leader writes records,
	// fsyncs, moves to a new file and changes f and off; it releases mu
	// during its I/O, so that more records can queue up meanwhile.
	busy   bool
	err    error // sticky: the first write or fsync failure
	closed bool
	files  []fileInfo // oldest first; the last is the active file
	f      vfs.File   // the active file
	off    int64      // end of the data written to f

	stats counters

	stop chan struct{} // closed by Close to stop the periodic syncer
	done chan struct{} // closed when the periodic syncer has stopped
}

// fileInfo describes one file of the log.
type fileInfo struct {
	num   uint32
	first uint64 // first LSN, from the file header
}

type counters struct {
	records, bytes, writes, syncs, dirSyncs, rotations atomic.Int64
}

// Stats counts the log's work since Open.
type Stats struct {
	// Records and Bytes count the records written to files and their size
	// on disk (headers and payloads).
	Records, Bytes int64
	// Writes counts the writes that carried records: one per group-commit
	// batch, so Records/Writes is the average batch size.
	Writes int64
	// Syncs counts file fsyncs: those that made appended records durable
	// (shared by every record of the batches they cover), and those of
	// Open, Rotate, moving on to a new file, and Close.
	Syncs int64
	// DirSyncs counts directory fsyncs (file creation, TruncateBefore,
	// Open).
	DirSyncs int64
	// Rotations counts the files started since Open.
	Rotations int64
	// Files is the number of files the log consists of now.
	Files int
}

// Stats returns the counts so far.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	files := len(l.files)
	l.mu.Unlock()
	return Stats{
		Records:   l.stats.records.Load(),
		Bytes:     l.stats.bytes.Load(),
		Writes:    l.stats.writes.Load(),
		Syncs:     l.stats.syncs.Load(),
		DirSyncs:  l.stats.dirSyncs.Load(),
		Rotations: l.stats.rotations.Load(),
		Files:     files,
	}
}

// Dir is the log's directory.
func (l *Log) Dir() string { return l.dir }

// NextLSN is the LSN the next Append will get. After Open it follows the
// last record recovered.
func (l *Log) NextLSN() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nextLSN
}

// SyncedLSN is the highest LSN known to be durable: every record up to it
// survives a crash. It is 0 if there is none.
func (l *Log) SyncedLSN() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.syncedLSN
}

// FirstLSN is the lowest LSN the log still holds records from (the first
// LSN of its oldest file): records below it were removed by TruncateBefore.
// If the log is empty it equals NextLSN. A caller that needs to replay from
// some LSN must check that FirstLSN is not above it.
func (l *Log) FirstLSN() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.files[0].first
}

// Append adds a record holding payload (which may be empty, and may be
// reused by the caller once Append returns) and returns its LSN, one more
// than the previous record's. It returns once the record is written to the
// file and, if sync is true or the mode is SyncAlways, fsynced.
//
// Concurrent Appends are committed as a group: the records queued while a
// leader writes and fsyncs are written together by the next leader, with
// one write and at most one fsync (see the package comment). Records are
// acknowledged in LSN order: when Append returns, every record with a lower
// LSN is written too (and synced, if this one was).
//
// A write or fsync error is returned to every Append waiting on it and is
// sticky: after it the log refuses further appends with the same error,
// because after a failed fsync the state of the file is unknown. Reopen the
// log to recover.
func (l *Log) Append(payload []byte, sync bool) (uint64, error) {
	if len(payload) > MaxRecordSize {
		return 0, fmt.Errorf("%w: %d bytes (limit %d)", ErrTooLarge, len(payload), MaxRecordSize)
	}
	pcrc := payloadCRC(payload) // outside the lock: it can take a while
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, ErrClosed
	}
	if l.err != nil {
		return 0, l.err
	}
	lsn := l.nextLSN
	l.nextLSN++
	l.pending = appendRecord(l.pending, lsn, payload, pcrc)
	if err := l.waitLocked(lsn, sync || l.opts.SyncMode == SyncAlways); err != nil {
		return 0, err
	}
	return lsn, nil
}

// Sync makes every record appended before it durable. Concurrent Syncs and
// synced Appends share fsyncs.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if l.err != nil {
		return l.err
	}
	return l.waitLocked(l.nextLSN-1, true)
}

// waitLocked returns once record lsn is written (durable false) or fsynced
// (durable true), or the log has failed. It is the group commit: a waiter
// that finds no leader becomes the leader and commits everything queued
// (see commitLocked), for itself and for everyone else; the others sleep
// until a leader finishes and then check again. Called with mu held.
func (l *Log) waitLocked(lsn uint64, durable bool) error {
	if durable {
		l.syncWant = max(l.syncWant, lsn)
	}
	for {
		if durable && l.syncedLSN >= lsn || !durable && l.writtenLSN >= lsn {
			return nil
		}
		if l.err != nil {
			return l.err
		}
		if l.busy {
			l.cond.Wait()
			continue
		}
		l.commitLocked()
	}
}

// commitLocked makes the calling goroutine the leader for one round: it
// writes every queued record in one write and then, if anyone waits for a
// record to be durable, fsyncs once for all of them. Records queued during
// the round are left to the next leader, so that no caller leads more than
// once. Called with mu held and no leader; errors are sticky.
func (l *Log) commitLocked() error {
	l.busy = true
	defer func() {
		l.busy = false
		l.cond.Broadcast()
	}()
	if err := l.writeBatchLocked(); err != nil {
		return err
	}
	// Checked after the write, so that a sync wanted by a caller that
	// came while we wrote is not left waiting for another leader.
	if l.syncWant > l.syncedLSN && l.writtenLSN > l.syncedLSN {
		return l.syncLocked()
	}
	return nil
}

// writeBatchLocked writes every queued record in one write, first moving
// to a new file if the active one is full. The caller is the leader and
// holds mu, which is released during I/O. Errors are made sticky (and
// returned).
func (l *Log) writeBatchLocked() error {
	if len(l.pending) == 0 {
		return nil
	}
	if l.off >= l.opts.FileSize && l.off > fileHeaderSize {
		if err := l.rotateLocked(); err != nil {
			return err
		}
	}
	// rotateLocked released mu: more records may have been queued, and
	// they go in this batch too.
	batch, last := l.pending, l.nextLSN-1
	l.pending, l.spare = l.spare[:0], nil
	f, off := l.f, l.off
	l.mu.Unlock()
	n, err := f.WriteAt(batch, off)
	if err == nil && n < len(batch) {
		err = io.ErrShortWrite
	}
	l.stats.writes.Add(1)
	l.mu.Lock()
	if err != nil {
		return l.failLocked(fmt.Errorf("wal: write %s at offset %d: %w", f.Name(), off, err))
	}
	l.stats.records.Add(int64(last - l.writtenLSN))
	l.stats.bytes.Add(int64(len(batch)))
	l.writtenLSN = last
	l.off += int64(len(batch))
	if cap(batch) <= maxSpareBuffer {
		l.spare = batch[:0]
	}
	return nil
}

// syncLocked fsyncs the active file, which makes every record written so
// far durable: records in older files were synced when the log moved on
// from them. The caller is the leader and holds mu, which is released
// during the fsync.
func (l *Log) syncLocked() error {
	f, target := l.f, l.writtenLSN
	l.mu.Unlock()
	err := f.Sync()
	l.stats.syncs.Add(1)
	l.mu.Lock()
	if err != nil {
		return l.failLocked(fmt.Errorf("wal: fsync %s: %w", f.Name(), err))
	}
	l.syncedLSN = max(l.syncedLSN, target)
	return nil
}

// rotateLocked moves the log to a new file. The caller is the leader and
// holds mu, which is released during I/O.
//
// The order makes recovery's rules hold: the old file is fsynced whole
// before the new file exists, so only the newest file can ever have a torn
// tail; and the new file's header and directory entry are durable before
// any record is written to it, so a record acknowledged as synced cannot be
// lost with its file's directory entry.
func (l *Log) rotateLocked() error {
	old, written := l.f, l.writtenLSN
	num, first := l.files[len(l.files)-1].num+1, written+1
	l.mu.Unlock()
	err := old.Sync()
	l.stats.syncs.Add(1)
	oldSynced := err == nil
	var nf vfs.File
	if err != nil {
		err = fmt.Errorf("wal: fsync %s: %w", old.Name(), err)
	} else {
		nf, err = l.createFile(num, first)
	}
	l.mu.Lock()
	if oldSynced {
		// Even if the new file could not be made, the old one is
		// durable: its synced waiters may be acknowledged.
		l.syncedLSN = max(l.syncedLSN, written)
	}
	if err != nil {
		return l.failLocked(err)
	}
	l.files = append(l.files, fileInfo{num: num, first: first})
	l.f, l.off = nf, fileHeaderSize
	l.stats.rotations.Add(1)
	if err := old.Close(); err != nil {
		l.log.Warn("wal: close old file", "file", old.Name(), "err", err)
	}
	return nil
}

// createFile creates file num with a header saying its first LSN is first,
// and makes the file and its directory entry durable.
func (l *Log) createFile(num uint32, first uint64) (vfs.File, error) {
	path := filePath(l.dir, num)
	f, err := l.fs.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644, vfs.OpenOptions{})
	if err != nil {
		return nil, fmt.Errorf("wal: create %s: %w", path, err)
	}
	var hdr [fileHeaderSize]byte
	encodeFileHeader(hdr[:], num, first)
	if _, err := f.WriteAt(hdr[:], 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: write header of %s: %w", path, err)
	}
	err = f.Sync()
	l.stats.syncs.Add(1)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: fsync %s: %w", path, err)
	}
	err = l.fs.SyncDir(l.dir)
	l.stats.dirSyncs.Add(1)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: fsync directory %s: %w", l.dir, err)
	}
	return f, nil
}

// failLocked records err as the log's sticky error (unless there already is
// one) and returns the sticky error. Called with mu held.
func (l *Log) failLocked(err error) error {
	if l.err == nil {
		l.err = err
		l.log.Error("wal: log failed; further appends are refused", "err", err)
	}
	l.cond.Broadcast()
	return l.err
}

// Rotate writes the queued records, fsyncs the active file and starts a new
// one, so that the records appended so far can later be removed by
// TruncateBefore. If the active file holds no record it does nothing. Every
// record appended before Rotate is durable when it returns.
func (l *Log) Rotate() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if l.closed {
			return ErrClosed
		}
		if l.err != nil {
			return l.err
		}
		if !l.busy {
			break
		}
		l.cond.Wait()
	}
	l.busy = true
	defer func() {
		l.busy = false
		l.cond.Broadcast()
	}()
	if err := l.writeBatchLocked(); err != nil {
		return err
	}
	if l.off == fileHeaderSize {
		// Nothing in the active file; every record is in an older file,
		// and those were synced when the log moved on from them.
		return nil
	}
	return l.rotateLocked()
}

// TruncateBefore deletes the files all of whose records have LSNs below
// lsn, oldest first: typically lsn is one past the last record a checkpoint
// made unnecessary. It never deletes the active file (Rotate first to make
// its records removable), so the log keeps at most one file's worth of
// records below lsn.
//
// Each deletion is made durable (directory fsync) before the next one
// starts, so that a crash can only leave a contiguous run of files: a
// missing file in the middle of the log is always corruption.
func (l *Log) TruncateBefore(lsn uint64) error {
	l.truncMu.Lock()
	defer l.truncMu.Unlock()
	for {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return ErrClosed
		}
		if l.err != nil {
			err := l.err
			l.mu.Unlock()
			return err
		}
		// files[0] holds LSNs files[0].first .. files[1].first-1.
		if len(l.files) < 2 || l.files[1].first > lsn {
			l.mu.Unlock()
			return nil
		}
		victim := l.files[0]
		l.mu.Unlock()

		path := filePath(l.dir, victim.num)
		if err := l.fs.Remove(path); err != nil {
			return fmt.Errorf("wal: remove %s: %w", path, err)
		}
		l.mu.Lock()
		l.files = l.files[1:]
		l.mu.Unlock()
		err := l.fs.SyncDir(l.dir)
		l.stats.dirSyncs.Add(1)
		if err != nil {
			l.mu.Lock()
			err = l.failLocked(fmt.Errorf("wal: fsync directory %s: %w", l.dir, err))
			l.mu.Unlock()
			return err
		}
	}
}

// Close writes and fsyncs every record appended before it (Appends still
// waiting are completed), stops the periodic syncer and closes the files.
// It returns the log's sticky error if it failed earlier. Operations after
// Close fail with ErrClosed; Close waits for running Replay and
// TruncateBefore calls.
func (l *Log) Close() error {
	l.truncMu.Lock()
	defer l.truncMu.Unlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.closed = true
	l.mu.Unlock()

	close(l.stop)
	<-l.done

	l.mu.Lock()
	err := l.err
	if err == nil {
		err = l.waitLocked(l.nextLSN-1, true)
	}
	for l.busy {
		l.cond.Wait()
	}
	f := l.f
	l.f = nil
	l.cond.Broadcast()
	l.mu.Unlock()

	if cerr := f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("wal: close %s: %w", f.Name(), cerr)
	}
	if cerr := l.lock.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("wal: unlock %s: %w", l.dir, cerr)
	}
	return err
}

// syncLoop is SyncPeriodic's background syncer. Every interval, if records
// were written since the last fsync, it asks for them to be synced: it
// commits (and fsyncs) itself if there is no leader, and otherwise leaves
// the fsync to the current leader, which checks for wanted syncs after its
// write, or to the next tick. It never waits for a leader.
func (l *Log) syncLoop(interval time.Duration) {
	defer close(l.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		l.mu.Lock()
		if !l.closed && l.err == nil && l.syncedLSN < l.writtenLSN {
			l.syncWant = max(l.syncWant, l.writtenLSN)
			if !l.busy {
				// An error is sticky and logged by failLocked; the next
				// Append reports it.
				_ = l.commitLocked()
			}
		}
		l.mu.Unlock()
	}
}

package wal

// Lock rules. mu guards the log's state (the fields marked below). Only the
// writer goroutine (writer.go) writes records, fsyncs the active file and
// moves to a new file; it releases mu during that I/O. Every other method
// takes mu only to read or change state and to wait on a condition: Append,
// WaitDurable, Sync and Rotate do no I/O themselves, so a caller may hold
// its own lock across Append (to keep LSN order equal to its commit order)
// and release it before it waits for durability. truncMu is taken before
// mu, never while holding it.

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
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
	// progress (on mu) is broadcast when the writer ends a round (so
	// writtenLSN, syncedLSN or rotated may have changed), when the log
	// fails and when Close has stopped the writer.
	progress sync.Cond
	// room (on mu) is broadcast when the writer takes the queue, when the
	// log fails and when it is closed: Appends wait on it for room.
	room sync.Cond

	// Guarded by mu.
	nextLSN    uint64 // LSN the next Append gets
	writtenLSN uint64 // records up to here are written to the files (OS page cache)
	syncedLSN  uint64 // records up to here are durable
	syncWant   uint64 // highest LSN some caller waits to see durable
	queue      []byte // encoded records appended but not yet taken by the writer
	spare      []byte // the other batch buffer, for reuse
	batchHigh  int    // largest recent batch, decaying (see keptQueueBytes)
	// big is a record larger than QueueSize, not copied: its header and
	// the caller's payload, which the writer writes before the queue. Its
	// Append waits until it is written.
	big       [][]byte
	bigHeader [recordHeaderSize]byte
	bigLSN    uint64
	// rotateWant counts Rotate calls; rotated is the count the writer has
	// served. A Rotate returns once rotated reaches its number.
	rotateWant, rotated uint64
	inRound             bool // the writer is in a round (see roundLocked)
	// periodicAt is when SyncPeriodic last asked for an fsync (the
	// writer's; see askPeriodicSyncLocked).
	periodicAt time.Time
	err        error      // sticky: the first write or fsync failure
	closed     bool       // Close has begun: Append, Sync and Rotate refuse
	stopped    bool       // Close has stopped the writer
	files      []fileInfo // oldest first; the last is the active file
	f          vfs.File   // the active file; only the writer uses it
	off        int64      // end of the data written to f

	// The page cache of cacheFile, an active file (see cacheChunk): the
	// writer has dropped [0, cacheDropped) from it and started writing
	// back [cacheDropped, cacheStarted). Only the writer uses these, with
	// or without mu.
	cacheFile                  vfs.File
	cacheDropped, cacheStarted int64

	stats counters

	kick chan struct{} // (capacity 1) wakes the writer: there is work
	stop chan struct{} // closed by Close to stop the writer
	done chan struct{} // closed when the writer has stopped
}

// fileInfo describes one file of the log.
type fileInfo struct {
	num   uint32
	first uint64 // first LSN, from the file header
}

type counters struct {
	records, bytes, writes, syncs, dirSyncs, rotations, queueWaits atomic.Int64
}

// Stats counts the log's work since Open.
type Stats struct {
	// Records and Bytes count the records written to files and their size
	// on disk (headers and payloads).
	Records, Bytes int64
	// Writes counts the writes that carried records: one per batch the
	// writer took from the queue, so Records/Writes is the average batch
	// size.
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
	// QueueWaits counts the Appends that found the queue full and waited
	// for the writer (back-pressure).
	QueueWaits int64
	// Files is the number of files the log consists of now.
	Files int
}

// Stats returns the counts so far.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	files := len(l.files)
	l.mu.Unlock()
	return Stats{
		Records:    l.stats.records.Load(),
		Bytes:      l.stats.bytes.Load(),
		Writes:     l.stats.writes.Load(),
		Syncs:      l.stats.syncs.Load(),
		DirSyncs:   l.stats.dirSyncs.Load(),
		Rotations:  l.stats.rotations.Load(),
		QueueWaits: l.stats.queueWaits.Load(),
		Files:      files,
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
// than the previous record's. It only copies the record into the log's
// queue and never does I/O: the writer goroutine writes the queue in
// batches, one write each, and fsyncs as the SyncMode says. To know the
// record is durable, call WaitDurable(lsn) (or Sync) afterwards, typically
// after releasing whatever lock ordered the Appends; concurrent waiters
// share fsyncs.
//
// If the queue holds Options.QueueSize bytes or more, Append waits until
// the writer takes it (back-pressure); a record larger than QueueSize waits
// for an empty queue. Records are written in LSN order.
//
// A write or fsync error is sticky: it is returned to every WaitDurable,
// Sync and Rotate waiting on it, and after it the log refuses further
// appends with the same error, because after a failed fsync the state of
// the file is unknown. Records appended but not yet written when the error
// happened are lost. Reopen the log to recover.
func (l *Log) Append(payload []byte) (uint64, error) {
	if len(payload) > MaxRecordSize {
		return 0, fmt.Errorf("%w: %d bytes (limit %d)", ErrTooLarge, len(payload), MaxRecordSize)
	}
	pcrc := payloadCRC(payload) // outside the lock: it can take a while
	chunks := [1][]byte{payload}
	if recordHeaderSize+len(payload) > l.opts.QueueSize {
		return l.appendBig(chunks[:], len(payload), pcrc)
	}
	return l.appendQueued(chunks[:], len(payload), pcrc)
}

// appendQueued copies a record of n bytes (the concatenation of chunks,
// whose checksum is pcrc) into the queue, waiting for room.
func (l *Log) appendQueued(chunks [][]byte, n int, pcrc uint32) (uint64, error) {
	size := recordHeaderSize + n
	l.mu.Lock()
	waited := false
	for {
		if l.closed {
			l.mu.Unlock()
			return 0, ErrClosed
		}
		if l.err != nil {
			err := l.err
			l.mu.Unlock()
			return 0, err
		}
		if len(l.queue) == 0 || len(l.queue)+size <= l.opts.QueueSize {
			break
		}
		if !waited {
			waited = true
			l.stats.queueWaits.Add(1)
		}
		l.room.Wait()
	}
	lsn := l.nextLSN
	l.nextLSN++
	// The writer works until the queue is empty: it needs waking only
	// when this record is the first in the queue.
	wake := len(l.queue) == 0
	if need := len(l.queue) + size; need > cap(l.queue) {
		l.growQueueLocked(need)
	}
	h := len(l.queue)
	l.queue = l.queue[:h+recordHeaderSize]
	putRecordHeader(l.queue[h:], lsn, n, pcrc)
	for _, c := range chunks {
		l.queue = append(l.queue, c...)
	}
	l.mu.Unlock()
	if wake {
		l.kickWriter()
	}
	return lsn, nil
}

// AppendChunks appends a record whose payload is the concatenation of
// chunks, as Append does: a record that fits the queue is copied into it;
// a larger one is written from the chunks themselves, and AppendChunks
// returns once it is written (the caller may then reuse the chunks).
func (l *Log) AppendChunks(chunks [][]byte) (uint64, error) {
	n := 0
	pcrc := uint32(0)
	for _, c := range chunks {
		n += len(c)
		pcrc = crc32.Update(pcrc, castagnoli, c)
	}
	if n > MaxRecordSize {
		return 0, fmt.Errorf("%w: %d bytes (limit %d)", ErrTooLarge, n, MaxRecordSize)
	}
	if recordHeaderSize+n > l.opts.QueueSize {
		return l.appendBig(chunks, n, pcrc)
	}
	return l.appendQueued(chunks, n, pcrc)
}

// appendBig appends a record larger than the queue without copying it (a
// large batch would otherwise be held twice): once the queue is empty it
// hands the payload to the writer and waits until the record is written,
// so that the caller's buffer is not used after Append returns. Records
// appended meanwhile queue behind it.
func (l *Log) appendBig(payload [][]byte, n int, pcrc uint32) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	waited := false
	for {
		if l.closed {
			return 0, ErrClosed
		}
		if l.err != nil {
			return 0, l.err
		}
		if len(l.queue) == 0 && l.big == nil {
			break
		}
		if !waited {
			waited = true
			l.stats.queueWaits.Add(1)
		}
		l.room.Wait()
	}
	lsn := l.nextLSN
	l.nextLSN++
	putRecordHeader(l.bigHeader[:], lsn, n, pcrc)
	l.big, l.bigLSN = payload, lsn
	l.kickWriter()
	for l.writtenLSN < lsn {
		if l.err != nil {
			return 0, l.err
		}
		if l.stopped {
			return 0, ErrClosed
		}
		l.progress.Wait()
	}
	return lsn, nil
}

// growQueueLocked gives the queue room for need bytes. It doubles the
// buffer, but never past QueueSize unless one record needs more, so that
// the buffers the writer hands back stay reusable (see writeBatchLocked).
func (l *Log) growQueueLocked(need int) {
	n := min(max(2*cap(l.queue), need, 4<<10), max(l.opts.QueueSize, need))
	q := make([]byte, len(l.queue), n)
	copy(q, l.queue)
	l.queue = q
}

// kickWriter tells the writer there is work. It never blocks: a pending
// kick already makes the writer look at the log's state again.
func (l *Log) kickWriter() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// WaitDurable returns once record lsn, and so every record before it, is
// durable, or with the log's sticky error if it failed first. It asks the
// writer for an fsync if the SyncMode would not do one soon; concurrent
// waiters share it (group commit). lsn must have been returned by Append
// (or be below NextLSN); WaitDurable(0) returns nil at once. After Close,
// it returns nil for every record Close made durable.
func (l *Log) WaitDurable(lsn uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lsn >= l.nextLSN {
		return fmt.Errorf("wal: WaitDurable(%d): no such record (the next LSN is %d)", lsn, l.nextLSN)
	}
	return l.waitDurableLocked(lsn)
}

// Sync makes every record appended before it durable. Concurrent Syncs and
// WaitDurables share fsyncs.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if l.err != nil {
		return l.err
	}
	return l.waitDurableLocked(l.nextLSN - 1)
}

// waitDurableLocked waits until record lsn is durable. Called with mu
// held; it releases mu while it waits.
func (l *Log) waitDurableLocked(lsn uint64) error {
	if l.syncedLSN >= lsn {
		return nil
	}
	if l.syncWant < lsn {
		l.syncWant = lsn
		l.kickWriter()
	}
	for l.syncedLSN < lsn {
		if l.err != nil {
			return l.err
		}
		if l.stopped {
			return ErrClosed
		}
		l.progress.Wait()
	}
	return nil
}

// waitWrittenLocked waits until every record below next is written to the
// files (not necessarily durable), or the log failed. The writer writes
// the queue whenever it is not empty, so this needs no request. Called with
// mu held; it releases mu while it waits.
func (l *Log) waitWrittenLocked(next uint64) {
	for l.writtenLSN+1 < next && l.err == nil && !l.stopped {
		l.progress.Wait()
	}
}

// Rotate writes the queued records, fsyncs the active file and starts a new
// one, so that the records appended so far can later be removed by
// TruncateBefore. If the active file holds no record it does nothing. Every
// record appended before Rotate is durable when it returns. The writer
// does the work; concurrent Rotates may share one move.
func (l *Log) Rotate() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if l.err != nil {
		return l.err
	}
	l.rotateWant++
	want := l.rotateWant
	l.kickWriter()
	for l.rotated < want {
		if l.err != nil {
			return l.err
		}
		if l.stopped {
			return ErrClosed
		}
		l.progress.Wait()
	}
	return nil
}

// TruncateBefore deletes the files all of whose records have LSNs below
// lsn, oldest first: typically lsn is one past the last record a checkpoint
// made unnecessary. It never deletes the active file (Rotate first to make
// its records removable), so the log keeps at most one file's worth of
// records below lsn.
//
// Each deletion is made durable (directory fsync) before the next one
// starts, so that a crash can only leave a contiguous run of files: a
// missing file in the middle of the log is always corruption. A file is
// deleted by renaming it (deadSuffix), which the directory fsync makes
// durable, and then freeing it a few MiB at a time; Open removes what a
// crash left of such files.
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

		// Renamed, then freed a few MiB at a time (vfs.RemoveGradually):
		// one unlink of a whole file held a Go processor for 10 ms.
		path := filePath(l.dir, victim.num)
		dead := path + deadSuffix
		if err := l.fs.Rename(path, dead); err != nil {
			return fmt.Errorf("wal: remove %s (rename): %w", path, err)
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
		if err := vfs.RemoveGradually(l.fs, dead); err != nil {
			// No longer part of the log: the next Open removes it.
			l.log.Warn("wal: removing an obsolete file", "file", dead, "err", err)
		}
	}
}

// Close writes and fsyncs every record appended before it, serves the
// Rotates still waiting, stops the writer and closes the files. Appends
// waiting for room in the queue fail with ErrClosed. It returns the log's
// sticky error if it failed earlier (the records not written by then are
// lost). Operations after Close fail with ErrClosed, except WaitDurable of
// a record Close made durable; Close waits for running Replay and
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
	l.room.Broadcast()
	// Drain: everything appended is written and synced, and every
	// Rotate served, before the writer stops.
	l.syncWant = max(l.syncWant, l.nextLSN-1)
	l.kickWriter()
	for l.err == nil && (l.inRound || l.hasWorkLocked()) {
		l.progress.Wait()
	}
	err := l.err
	l.mu.Unlock()

	close(l.stop)
	<-l.done

	l.mu.Lock()
	l.stopped = true
	f := l.f
	l.f = nil
	l.progress.Broadcast()
	l.mu.Unlock()

	if cerr := f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("wal: close %s: %w", f.Name(), cerr)
	}
	if cerr := l.lock.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("wal: unlock %s: %w", l.dir, cerr)
	}
	return err
}

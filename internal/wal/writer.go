package wal

// The writer goroutine: the only code that writes records, fsyncs the
// active file and moves to a new file. Lock rules: every function here is
// called by the writer with mu held, and releases mu during its I/O (the
// writer is the only one to use f and off, and changes them only with mu
// held, so other goroutines may read them under mu). No function here
// waits for a caller.

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// writeLoop is the writer goroutine. Woken by a kick (records queued, an
// fsync or a rotation asked for), by SyncPeriodic's ticker, or by Close's
// stop, it runs rounds until there is no work left.
func (l *Log) writeLoop() {
	defer close(l.done)
	var tick <-chan time.Time
	if l.opts.SyncMode == SyncPeriodic {
		t := time.NewTicker(l.opts.SyncInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-l.stop:
			return
		case <-l.kick:
		case <-tick:
		}
		l.mu.Lock()
		for l.askPeriodicSyncLocked(); l.hasWorkLocked(); l.askPeriodicSyncLocked() {
			l.roundLocked()
		}
		l.mu.Unlock()
	}
}

// askPeriodicSyncLocked asks for an fsync of what was written once
// SyncInterval has passed since it last asked (SyncPeriodic only; records
// written later wait for the next time). The ticker wakes an idle writer;
// a busy one asks here between rounds, since it reaches the ticker's
// select only when a round leaves no work (a steady stream of appends kept
// it from there: no fsync at all until the file was full).
func (l *Log) askPeriodicSyncLocked() {
	if l.opts.SyncMode != SyncPeriodic || l.writtenLSN <= max(l.syncedLSN, l.syncWant) {
		// Nothing new to ask for: an ask now would only restart the
		// interval (a record appended to an idle log then waited up to
		// two intervals).
		return
	}
	if now := time.Now(); now.Sub(l.periodicAt) >= l.opts.SyncInterval {
		l.periodicAt = now
		l.syncWant = max(l.syncWant, l.writtenLSN)
	}
}

// hasWorkLocked reports whether the writer has something to do: records
// queued, a Rotate to serve, or written records to fsync because the mode
// is SyncAlways or someone waits for them. A failed log has no work.
func (l *Log) hasWorkLocked() bool {
	if l.err != nil {
		return false
	}
	return len(l.queue) > 0 || l.big != nil || l.rotateWant > l.rotated ||
		l.writtenLSN > l.syncedLSN && (l.opts.SyncMode == SyncAlways || l.syncWant > l.syncedLSN)
}

// roundLocked is one round of the writer: it writes the queue with one
// write, serves the Rotates asked for before the round began, and fsyncs
// once if the mode is SyncAlways or a waiter wants a written record to be
// durable. Records queued during the round's I/O go to the next round, so
// that they share its fsync. At the end it wakes the waiters. Errors are
// sticky (failLocked) and end the round.
func (l *Log) roundLocked() {
	l.inRound = true
	defer func() {
		l.inRound = false
		l.progress.Broadcast()
	}()
	rotate := l.rotateWant // the Rotates this round serves
	if l.big != nil {
		if err := l.writeBigLocked(); err != nil {
			return
		}
	}
	if len(l.queue) > 0 {
		if err := l.writeBatchLocked(); err != nil {
			return
		}
	}
	if rotate > l.rotated {
		// Every record appended before those Rotates was queued when the
		// round began, so it is written now.
		if l.off > fileHeaderSize {
			if err := l.rotateLocked(); err != nil {
				return
			}
		}
		// Otherwise the active file holds no record: every record is in
		// an older file, and those were synced when the log left them.
		l.rotated = rotate
	}
	// Checked after the write, so that a sync wanted by a caller that
	// came while we wrote is not left for the next round.
	if l.writtenLSN > l.syncedLSN && (l.opts.SyncMode == SyncAlways || l.syncWant > l.syncedLSN) {
		_ = l.syncLocked() // sticky, like every error here
	}
}

// writeBatchLocked takes the whole queue and writes it with one write,
// first moving to a new file if the active one is full. Errors are made
// sticky (and returned).
func (l *Log) writeBatchLocked() error {
	if l.off >= l.opts.FileSize && l.off > fileHeaderSize {
		if err := l.rotateLocked(); err != nil {
			return err
		}
	}
	// rotateLocked released mu: more records may have been queued, and
	// they go in this batch too.
	batch, last := l.queue, l.nextLSN-1
	l.queue, l.spare = l.spare[:0], nil
	l.room.Broadcast()
	f, off := l.f, l.off
	l.mu.Unlock()
	n, err := f.WriteAt(batch, off)
	if err == nil && n < len(batch) {
		err = io.ErrShortWrite
	}
	var cacheErr error
	if err == nil {
		cacheErr = l.releaseCache(f, off+int64(n))
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
	// Reuse the buffer as the next queue, unless a record larger than
	// QueueSize made it larger, or it is much larger than the batches
	// written lately: those are dropped, so that a burst (a bulk load
	// filling the queue) does not pin two QueueSize buffers for the life
	// of the log once commits are small again.
	l.batchHigh = max(len(batch), l.batchHigh-l.batchHigh/batchHighDecay)
	if cap(batch) <= l.opts.QueueSize && cap(batch) <= max(keptQueueBytes, 2*l.batchHigh) {
		l.spare = batch[:0]
	}
	if cacheErr != nil {
		return l.failLocked(cacheErr)
	}
	return nil
}

// The queue buffers the writer keeps (writeBatchLocked). A buffer up to
// keptQueueBytes is always kept: small enough that two of them do not
// matter, large enough that steady small commits never reallocate. A
// larger one is kept while it is at most twice batchHigh, the largest
// recent batch, which decays by 1/batchHighDecay a round (it halves in 11
// rounds): after a burst, a QueueSize buffer is dropped once about ten
// rounds in a row needed less than half of it, while a stream of batches
// of about its size keeps it.
const (
	keptQueueBytes = 64 << 10
	batchHighDecay = 16
)

// writeBigLocked writes the record Append handed over by reference (see
// appendBig), header then payload, first moving to a new file if the
// active one is full. A crash between the two writes leaves a torn record
// at the end of the newest file, which recovery drops. Errors are made
// sticky (and returned).
func (l *Log) writeBigLocked() error {
	if l.off >= l.opts.FileSize && l.off > fileHeaderSize {
		if err := l.rotateLocked(); err != nil {
			return err
		}
	}
	chunks, hdr, lsn := l.big, l.bigHeader, l.bigLSN
	f, off := l.f, l.off
	l.mu.Unlock()
	at := off
	write := func(p []byte) error {
		n, err := f.WriteAt(p, at)
		if err == nil && n < len(p) {
			err = io.ErrShortWrite
		}
		at += int64(n)
		return err
	}
	err := write(hdr[:])
	for _, c := range chunks {
		if err != nil {
			break
		}
		err = write(c)
	}
	var cacheErr error
	if err == nil {
		cacheErr = l.releaseCache(f, at)
	}
	l.stats.writes.Add(1)
	l.mu.Lock()
	l.big = nil
	l.room.Broadcast()
	if err != nil {
		return l.failLocked(fmt.Errorf("wal: write %s at offset %d: %w", f.Name(), off, err))
	}
	size := at - off
	l.stats.records.Add(1)
	l.stats.bytes.Add(size)
	l.writtenLSN = lsn
	l.off += size
	if cacheErr != nil {
		return l.failLocked(cacheErr)
	}
	return nil
}

// cacheChunk bounds the log's bytes in the OS page cache. The log is
// written with buffered I/O and read back only by recovery, yet its
// written pages would stay in the page cache, dirty until the kernel's
// periodic writeback and then clean until reclaimed, and a memory cgroup
// charges them to the process like its own memory: under SyncNever, every
// record since the last checkpoint. So each time cacheChunk more whole
// pages have been written, the writer starts writing them back, and waits
// for the chunk it started the time before (long since written, as a rule)
// and drops it from the page cache: at most about two chunks of the
// active file stay there. 256 KiB makes that a few syscalls per 256 KiB of
// records, small next to the writes themselves.
const cacheChunk = 256 << 10

// releaseCache is called by the writer, without mu, after it has written
// f up to end: see cacheChunk. Only whole pages below end are touched; the
// last, partial one is written again by the next batch. An error is a
// write error of the log (see vfs.Writebacker).
func (l *Log) releaseCache(f vfs.File, end int64) error {
	if f != l.cacheFile {
		l.cacheFile, l.cacheDropped, l.cacheStarted = f, 0, 0
	}
	whole := end &^ int64(pageSize-1)
	if whole-l.cacheStarted < cacheChunk {
		return nil
	}
	if err := vfs.DropWritten(f, l.cacheDropped, l.cacheStarted-l.cacheDropped); err != nil {
		return fmt.Errorf("wal: write back %s up to offset %d: %w", f.Name(), l.cacheStarted, err)
	}
	l.cacheDropped = l.cacheStarted
	if err := vfs.StartWriteback(f, l.cacheStarted, whole-l.cacheStarted); err != nil {
		return fmt.Errorf("wal: write back %s up to offset %d: %w", f.Name(), whole, err)
	}
	l.cacheStarted = whole
	return nil
}

// pageSize is the OS page size, the unit of the page cache.
var pageSize = os.Getpagesize()

// syncLocked fsyncs the active file, which makes every record written so
// far durable: records in older files were synced when the log moved on
// from them.
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

// rotateLocked moves the log to a new file.
//
// The order makes recovery's rules hold: the old file is fsynced whole
// before the new file exists, so only the newest file can ever have a torn
// tail; and the new file's header and directory entry are durable before
// any record is written to it, so a record acknowledged as synced cannot be
// lost with its file's directory entry.
func (l *Log) rotateLocked() error {
	old, written, end := l.f, l.writtenLSN, l.off
	num, first := l.files[len(l.files)-1].num+1, written+1
	l.mu.Unlock()
	err := old.Sync()
	l.stats.syncs.Add(1)
	oldSynced := err == nil
	var nf vfs.File
	if err != nil {
		err = fmt.Errorf("wal: fsync %s: %w", old.Name(), err)
	} else {
		// The old file is durable, so its pages are clean: drop the
		// ones releaseCache has not (see cacheChunk).
		if old == l.cacheFile {
			err = vfs.DropWritten(old, l.cacheDropped, end-l.cacheDropped)
		} else {
			err = vfs.DropWritten(old, 0, end)
		}
		if err != nil {
			err = fmt.Errorf("wal: drop the cache of %s: %w", old.Name(), err)
		} else {
			nf, err = l.createFile(num, first)
		}
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
// and makes the file and its directory entry durable. It takes no lock
// (Open calls it before the log is shared; the writer with mu released).
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
// one), wakes every waiter, and returns the sticky error. Called with mu
// held (by the writer, or by TruncateBefore).
func (l *Log) failLocked(err error) error {
	if l.err == nil {
		l.err = err
		l.log.Error("wal: log failed; further appends are refused", "err", err)
	}
	l.progress.Broadcast()
	l.room.Broadcast()
	return l.err
}

package wal

import "fmt"

// SkipTo makes lsn the LSN of the next Append when the log is behind it:
// the caller's durable state (a checkpoint) already covers every record
// below lsn, but the log does not reach that far (its files were removed,
// or are older). The log moves to a new file whose first LSN is lsn; the
// older files hold only records below lsn, which Replay(lsn) skips and
// TruncateBefore(lsn) deletes. A log already at or past lsn is left as it
// is. SkipTo is meant for Open, before the first Append; with records
// queued it is refused.
//
// Lock rules: takes mu (and becomes the leader, as Rotate does); mu is
// released during the file creation.
func (l *Log) SkipTo(lsn uint64) error {
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
	if l.nextLSN >= lsn {
		return nil
	}
	if len(l.pending) > 0 || l.writtenLSN+1 != l.nextLSN {
		return fmt.Errorf("wal: SkipTo(%d) with records queued", lsn)
	}
	l.busy = true
	defer func() {
		l.busy = false
		l.cond.Broadcast()
	}()
	old := l.f
	num := l.files[len(l.files)-1].num + 1
	l.mu.Unlock()
	err := old.Sync()
	l.stats.syncs.Add(1)
	f, cerr := l.createFile(num, lsn)
	if err == nil {
		err = cerr
	} else if cerr == nil {
		f.Close()
	}
	l.mu.Lock()
	if err != nil {
		return l.failLocked(fmt.Errorf("wal: skip to LSN %d: %w", lsn, err))
	}
	l.files = append(l.files, fileInfo{num: num, first: lsn})
	l.f, l.off = f, fileHeaderSize
	l.nextLSN, l.writtenLSN = lsn, lsn-1
	l.syncedLSN = max(l.syncedLSN, lsn-1)
	l.stats.rotations.Add(1)
	if cerr := old.Close(); cerr != nil {
		l.log.Warn("wal: close old file", "file", old.Name(), "err", cerr)
	}
	return nil
}

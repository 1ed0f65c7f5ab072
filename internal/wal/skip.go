package wal

import "fmt"

// skipTo makes lsn the LSN of the next Append when the recovered log ends
// before it (Options.MinNextLSN): the caller's durable state (a checkpoint)
// covers every record below lsn, but the log does not reach that far (its
// files were removed, or are older). The log moves to a new file whose
// first LSN is lsn; the older files hold only records below lsn, which
// Replay(lsn) skips and TruncateBefore(lsn) deletes.
//
// Called by Open after recovery, before the writer starts and before the
// log is shared: it takes no lock.
func (l *Log) skipTo(lsn uint64) error {
	if l.nextLSN >= lsn {
		return nil
	}
	old := l.f
	if err := old.Sync(); err != nil {
		return fmt.Errorf("wal: fsync %s: %w", old.Name(), err)
	}
	l.stats.syncs.Add(1)
	num := l.files[len(l.files)-1].num + 1
	f, err := l.createFile(num, lsn)
	if err != nil {
		return fmt.Errorf("wal: skip to LSN %d: %w", lsn, err)
	}
	l.files = append(l.files, fileInfo{num: num, first: lsn})
	l.f, l.off = f, fileHeaderSize
	l.nextLSN, l.writtenLSN = lsn, lsn-1
	l.syncedLSN = max(l.syncedLSN, lsn-1)
	l.stats.rotations.Add(1)
	if err := old.Close(); err != nil {
		l.log.Warn("wal: close old file", "file", old.Name(), "err", err)
	}
	return nil
}

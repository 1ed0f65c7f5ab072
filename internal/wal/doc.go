// Package wal is Strata's write-ahead log: an append-only sequence of
// records, each an opaque payload numbered by a log sequence number (LSN),
// that survives crashes. The B+tree logs its changes here before it
// changes pages, and replays them after a crash.
//
// # Format
//
// The log is a directory of files named wal-NNNNNNNN.log (eight or more
// decimal digits, numbered from 1 without gaps). Each starts with a 32-byte
// header (magic "STRATWAL", version, file number, the LSN of its first
// record, CRC-32C), followed by records packed back to back, each a 16-byte
// header (CRC-32C, payload length, LSN) and the payload. LSNs start at 1 and
// increase by one from record to record, across files. docs/WAL.md gives the
// format byte by byte.
//
// Files are written sequentially with buffered I/O (the OS page cache
// absorbs the small writes; the log is read only at recovery). When the
// active file reaches Options.FileSize, the log moves on to a new one.
// TruncateBefore deletes whole files whose records are all older than a
// checkpoint.
//
// # Pipeline and group commit
//
// Append gives a record its LSN and copies it into an in-memory queue,
// and returns: it does no I/O in any mode (it waits only if the queue
// holds Options.QueueSize bytes, back-pressure). One writer goroutine does
// all the I/O: it takes the whole queue, writes it with one WriteAt and,
// if someone waits for durability (WaitDurable, Sync) or the mode is
// SyncAlways, fsyncs once for everything written. Records appended
// meanwhile go in the next round, together. A caller appends under its
// own lock, so that LSN order is its commit order, and calls
// WaitDurable(lsn) after releasing it: N concurrent durable committers
// then share far fewer than N writes and fsyncs, and a commit that does
// not wait costs no syscall. Stats reports the counts.
//
// # Durability
//
// WaitDurable, Sync, Rotate and Close return only after the records before
// them are fsynced. What becomes of records nobody waits for depends on
// the SyncMode:
//
//   - SyncAlways (the default): the writer fsyncs after every batch.
//   - SyncPeriodic: the writer fsyncs every SyncInterval (default 10 ms)
//     what it has written. A crash can lose unwaited records appended
//     within about the last SyncInterval plus one fsync.
//   - SyncNever: records are fsynced only when someone waits, by Rotate,
//     Close, and moving to a new file.
//
// In every mode a crash, of the process too, can lose the records still
// in the queue. Records are written and made durable in LSN order: once
// record n is durable, so is every record before it.
//
// A write or fsync error is sticky: every waiter gets it, and the log
// refuses every later Append and Sync with it. After a failed fsync the
// kernel may have dropped the dirty pages, so retrying could report
// success for data that is gone. Reopening and recovering is safe, also
// after a failed fsync in the same boot: Linux marks the pages that failed
// clean, so recovery would read them from the OS's cache as if they were
// on disk and its fsync would succeed without writing them; recovery
// therefore writes the newest file's records again before it syncs them
// (vfs.RewriteRange), unless Options.SkipRecoveryRewrite says the caller
// makes them durable by other means (docs/ARCHITECTURE.md, "Errors").
//
// # Recovery rules
//
// A new file is created, its header written and fsynced, and the directory
// fsynced, before any record goes into it; and the file before it is
// fsynced whole first. Hence only the newest file can end in a torn write,
// and a synced record never depends on a directory entry that was not
// durable. Open enforces:
//
//   - The file numbers must be contiguous (TruncateBefore deletes oldest
//     first, renaming each file out of the log and fsyncing the directory
//     before it frees it), and every header valid, except that a newest
//     file no longer than a header whose header is invalid is the remains
//     of an interrupted creation: it is removed.
//   - A file renamed out of the log (wal-NNNNNNNN.log.dead) was being
//     freed: it is removed.
//   - In the newest file, the first record that is incomplete or fails its
//     checksum is a torn write: the file is truncated there and fsynced.
//     A record that passes its checksum but has the wrong LSN is corruption.
//   - In older files, any invalid record, a gap in the LSNs, or bytes after
//     the last record is corruption (ErrCorrupt, naming the file and
//     offset). Older files are read only by Replay, so Open reads one file
//     however long the log is.
//
// After recovery the log holds a prefix of the records appended before the
// crash (minus files removed by TruncateBefore) that includes every record
// acknowledged as durable, and NextLSN continues after it. LSNs are never
// reused for records that were acknowledged as durable.
package wal

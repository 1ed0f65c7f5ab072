package wal

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// Defaults for Options.
const (
	// DefaultFileSize is the size after which the log moves on to a new
	// file. Files are deleted whole by TruncateBefore, so smaller files free
	// space sooner after a checkpoint; larger ones mean fewer rotations,
	// each of which costs two fsyncs and a directory fsync.
	DefaultFileSize = 64 << 20
	// DefaultSyncInterval is how often SyncPeriodic fsyncs.
	DefaultSyncInterval = 10 * time.Millisecond
	// DefaultQueueSize bounds the records appended but not yet taken by
	// the writer. It is also the largest write the writer makes (but for
	// one record larger than it). The log holds up to twice this on the Go
	// heap whenever the writer falls behind (a bulk load does), and the
	// collector's headroom doubles that again, so it is no larger than
	// needed: a 1 MiB write into the page cache costs as little per byte
	// as a 4 MiB one, and a larger queue only lets appends run further
	// ahead of a writer that the device paces anyway.
	DefaultQueueSize = 1 << 20
)

// SyncMode says when the writer fsyncs the records it has written if
// nobody waits for them. Whatever the mode, Append never waits for I/O, and
// WaitDurable, Sync, Rotate and Close make every record appended before
// them durable (concurrent waiters share fsyncs). The mode governs the
// records nobody waits for: how soon they become durable without being
// asked.
type SyncMode int

const (
	// SyncAlways: the writer fsyncs after every batch it writes, so every
	// record becomes durable as soon as the device allows, waited for or
	// not. Records appended during an fsync share the next one. The
	// default.
	SyncAlways SyncMode = iota
	// SyncPeriodic: the writer writes records as they are appended and
	// fsyncs every SyncInterval what it has written. A crash can lose the
	// records not waited for that were appended in about the last
	// SyncInterval plus one fsync.
	SyncPeriodic
	// SyncNever: the writer writes records as they are appended and
	// fsyncs only when asked (WaitDurable, Sync, Rotate, Close) or when a
	// file is full and the log moves on to the next. A crash can lose
	// every record not waited for since the last of those.
	SyncNever
)

// String returns "always", "periodic" or "never".
func (m SyncMode) String() string {
	switch m {
	case SyncAlways:
		return "always"
	case SyncPeriodic:
		return "periodic"
	case SyncNever:
		return "never"
	}
	return fmt.Sprintf("SyncMode(%d)", int(m))
}

// Options configure a Log. The zero value is valid: every field has a
// documented default.
type Options struct {
	// FS is the file system. Default: vfs.Default (the OS).
	FS vfs.FS
	// SyncMode says when records are fsynced. Default: SyncAlways.
	SyncMode SyncMode
	// SyncInterval is the period of SyncPeriodic's background fsync.
	// Default: DefaultSyncInterval (10 ms). Ignored in other modes.
	SyncInterval time.Duration
	// QueueSize bounds, in bytes, the records appended but not yet taken
	// by the writer: an Append that would take the queue past it waits
	// until the writer takes the queue (a record larger than QueueSize
	// waits for an empty queue). With the batch being written, the log
	// buffers at most twice QueueSize (or two records, if larger).
	// Default: DefaultQueueSize (1 MiB).
	QueueSize int
	// FileSize is the size at which the log moves on to a new file: a
	// group-commit batch that starts in a file of FileSize bytes or more
	// goes to a new file. A file can exceed FileSize by up to one batch (a
	// record is never split across files). Default: DefaultFileSize (64
	// MiB).
	FileSize int64
	// MinNextLSN, if set, is the lowest LSN the next Append may get: a log
	// that recovers to an earlier end (its files were removed after the
	// caller's checkpoint covered them) moves on to a new file numbered
	// from MinNextLSN, so that new records never reuse numbers the
	// caller's checkpoint has. Replay(MinNextLSN) then skips the older
	// files, and TruncateBefore(MinNextLSN) deletes them. Default 0: the
	// log continues after its last record.
	MinNextLSN uint64
	// SkipRecoveryRewrite: recovery syncs the newest file's records
	// without writing them again first (vfs.RewriteRange). Only for a
	// caller that makes what it replays durable by other means and moves
	// the log to a new file before it appends: the database checkpoints
	// the replayed commits and rotates the log at Open. Otherwise, after a
	// failed fsync and a restart in the same boot, SyncedLSN would claim
	// records only the OS's cache holds, and records appended after them
	// would follow a hole that a power loss turns into a torn tail.
	SkipRecoveryRewrite bool
	// Logger receives rare events: a torn tail dropped at recovery, a
	// background fsync that failed. Default: discard.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.SyncInterval == 0 {
		o.SyncInterval = DefaultSyncInterval
	}
	if o.FileSize == 0 {
		o.FileSize = DefaultFileSize
	}
	if o.QueueSize == 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func (o Options) validate() error {
	if o.SyncMode < SyncAlways || o.SyncMode > SyncNever {
		return fmt.Errorf("wal: unknown sync mode %d", int(o.SyncMode))
	}
	if o.SyncInterval < 0 {
		return fmt.Errorf("wal: negative sync interval %v", o.SyncInterval)
	}
	if o.QueueSize < 0 {
		return fmt.Errorf("wal: negative queue size %d", o.QueueSize)
	}
	if o.FileSize < 0 {
		return fmt.Errorf("wal: negative file size %d", o.FileSize)
	}
	return nil
}

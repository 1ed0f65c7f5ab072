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
)

// SyncMode says when appended records are made durable (fsynced). Whatever
// the mode, Append(payload, true), Sync, Rotate and Close make every record
// appended before them durable.
type SyncMode int

const (
	// SyncAlways makes every Append durable before it returns, whatever
	// its sync argument. Concurrent appends share fsyncs (group commit).
	// This is the default: the zero Options never lose an acknowledged
	// record.
	SyncAlways SyncMode = iota
	// SyncPeriodic lets Append(payload, false) return once its record is
	// written to the file (in the OS page cache), and fsyncs in the
	// background every SyncInterval. The durability window: a crash of the
	// machine (not only of the process) can lose the records acknowledged
	// in the last SyncInterval plus the duration of one fsync; a crash of
	// the process alone loses nothing that Append acknowledged.
	SyncPeriodic
	// SyncNever fsyncs only when asked: by Append(payload, true), Sync,
	// Rotate or Close (and when a file is full and the log moves on to the
	// next). A machine crash can lose every record appended with sync false
	// since the last of those.
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
	// FileSize is the size at which the log moves on to a new file: a
	// group-commit batch that starts in a file of FileSize bytes or more
	// goes to a new file. A file can exceed FileSize by up to one batch (a
	// record is never split across files). Default: DefaultFileSize (64
	// MiB).
	FileSize int64
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
	if o.FileSize < 0 {
		return fmt.Errorf("wal: negative file size %d", o.FileSize)
	}
	return nil
}

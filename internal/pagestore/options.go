package pagestore

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/vfs"
)

// Defaults for Options. The page size default is chosen by measurement: see
// docs/PAGESTORE.md.
const (
	DefaultPageSize          = 4 << 10
	DefaultSegmentSize       = 32 << 20
	DefaultWriteBufferSize   = 1 << 20
	DefaultCleanerThreshold  = 0.30
	DefaultCleanerRate       = 64 << 20
	DefaultCheckpointBytes   = 256 << 20
	DefaultBackgroundTick    = 200 * time.Millisecond
	DefaultMapLogRatio       = 1.0
	MinPageSize              = 4 << 10
	MaxPageSize              = 64 << 10
	minSegmentSize           = 64 << 10
	maxSegmentSize           = 1 << 30
	defaultCleanerMaxVictims = 4
)

// Options configure a Store. The zero value is valid: every field has a
// documented default.
type Options struct {
	// FS is the file system. Default: vfs.Default (the OS).
	FS vfs.FS
	// PageSize is the logical page size, a power of two from 4 KiB to 64
	// KiB. Default: the existing store's page size, or DefaultPageSize for
	// a new store. Opening a store with a different non-zero page size fails.
	PageSize int
	// Codec compresses newly written pages. Default: zstd level 3, the
	// fastest codec measured that compresses sysbench-style rows at all
	// (docs/PAGESTORE.md). Pages written earlier with another codec stay
	// readable: the codec is recorded per record.
	Codec codec.Codec
	// SegmentSize is the size at which the log rolls over to a new segment
	// file (64 KiB to 1 GiB). Default: 32 MiB.
	SegmentSize int64
	// WriteBufferSize is the size of the aligned buffer records are packed
	// into before they are written. Default: 1 MiB.
	WriteBufferSize int
	// DisableDirectIO turns direct I/O off. By default segment files are
	// opened with O_DIRECT where the OS and file system allow it, so that
	// the OS page cache does not keep a second copy of the pages.
	DisableDirectIO bool
	// DisableReadPolling makes direct reads park their goroutine at once
	// instead of polling for their completion first
	// (vfs.OpenOptions.PollReads).
	DisableReadPolling bool
	// CleanerThreshold is the share of garbage in the store (0..1: bytes
	// of segment files not holding a live record, over all segment bytes)
	// above which the cleaner runs. It then picks victims by cost-benefit
	// (clean.go) until the share is back under the threshold: the store
	// keeps about 1 - CleanerThreshold of its space live. Default: 0.3.
	CleanerThreshold float64
	// CleanerRate bounds the bytes per second the cleaner reads and
	// rewrites, so that it never starves foreground I/O. Default: 64 MiB/s.
	CleanerRate int64
	// CheckpointBytes is how many bytes of log the background worker lets
	// accumulate after a checkpoint before it writes the next one; it
	// bounds recovery time. Default: 256 MiB.
	CheckpointBytes int64
	// MapLogRatio bounds the map log: a checkpoint appends the page map
	// entries changed since the previous one (a delta) as long as the
	// map log stays under MapLogRatio times the size of the whole map, and
	// rewrites the whole map (emptying the log) otherwise. Larger values
	// write fewer map bytes and make recovery read more. Default: 1.
	MapLogRatio float64
	// DisableDictionary stops the store from training a compression
	// dictionary on its first pages (dict.go) and from compressing new
	// pages with one it has. Pages written with a dictionary stay readable.
	DisableDictionary bool
	// DictionarySample is how many bytes of the first pages written are
	// sampled to train and judge a dictionary. Default:
	// DefaultDictionarySample (1 MiB).
	DictionarySample int
	// DictionaryGain is the least share of space a dictionary must save on
	// the held-out sample to be kept (0..1). 0 means the default,
	// DefaultDictionaryGain; to keep any dictionary that saves anything,
	// give a tiny positive value.
	DictionaryGain float64
	// DictionarySpaceOnly judges a dictionary by the space it saves alone,
	// not also by how much slower its pages decode (rejectDict). Tests use
	// it: the decode timing is the host's, and the race detector slows the
	// dictionary decoder's Go code, not the plain decoder's assembly.
	DictionarySpaceOnly bool
	// DisableBackground stops the background cleaner and checkpointer;
	// Clean and Checkpoint can still be called. Tests use it for
	// determinism.
	DisableBackground bool
	// Logger receives rare events (recovery, fallback to buffered I/O,
	// cleaner errors). Default: discard.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Codec == nil {
		c, _ := codec.New(codec.Zstd, 0)
		o.Codec = c
	}
	if o.SegmentSize == 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.WriteBufferSize == 0 {
		o.WriteBufferSize = DefaultWriteBufferSize
	}
	if o.CleanerThreshold == 0 {
		o.CleanerThreshold = DefaultCleanerThreshold
	}
	if o.CleanerRate == 0 {
		o.CleanerRate = DefaultCleanerRate
	}
	if o.MapLogRatio == 0 {
		o.MapLogRatio = DefaultMapLogRatio
	}
	if o.CheckpointBytes == 0 {
		o.CheckpointBytes = DefaultCheckpointBytes
	}
	if o.DictionarySample == 0 {
		o.DictionarySample = DefaultDictionarySample
	}
	if o.DictionaryGain == 0 {
		o.DictionaryGain = DefaultDictionaryGain
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func (o Options) validate() error {
	if o.DictionaryGain < 0 || o.DictionaryGain > 1 || o.DictionarySample < 0 {
		return fmt.Errorf("pagestore: dictionary gain %v (want 0..1) or sample %d (want ≥ 0) out of range", o.DictionaryGain, o.DictionarySample)
	}
	if o.PageSize != 0 {
		if err := validatePageSize(o.PageSize); err != nil {
			return fmt.Errorf("pagestore: %w", err)
		}
	}
	if o.SegmentSize < minSegmentSize || o.SegmentSize > maxSegmentSize {
		return fmt.Errorf("pagestore: segment size %d out of range [%d, %d]", o.SegmentSize, minSegmentSize, maxSegmentSize)
	}
	if o.WriteBufferSize <= 0 || o.WriteBufferSize%vfs.BlockSize != 0 {
		return fmt.Errorf("pagestore: write buffer size %d must be a positive multiple of %d", o.WriteBufferSize, vfs.BlockSize)
	}
	if int64(o.WriteBufferSize) > o.SegmentSize {
		return fmt.Errorf("pagestore: write buffer size %d exceeds segment size %d", o.WriteBufferSize, o.SegmentSize)
	}
	if o.CleanerThreshold <= 0 || o.CleanerThreshold >= 1 {
		return fmt.Errorf("pagestore: cleaner threshold %v must be in (0, 1)", o.CleanerThreshold)
	}
	if o.MapLogRatio < 0 {
		return fmt.Errorf("pagestore: negative map log ratio %v", o.MapLogRatio)
	}
	if o.CleanerRate < 0 || o.CheckpointBytes < 0 {
		return fmt.Errorf("pagestore: negative cleaner rate or checkpoint bytes")
	}
	return nil
}

// checkSizes checks the sizes that depend on the page size, known only once
// an existing store's checkpoint has been read.
func (o Options) checkSizes(pageSize int) error {
	if minBuf := 2 * (pageSize + recordHeaderSize); o.WriteBufferSize < minBuf {
		return fmt.Errorf("pagestore: write buffer size %d is smaller than two records of %d-byte pages", o.WriteBufferSize, pageSize)
	}
	if o.SegmentSize < int64(4*(pageSize+recordHeaderSize)) {
		return fmt.Errorf("pagestore: segment size %d holds fewer than four %d-byte pages", o.SegmentSize, pageSize)
	}
	return nil
}

func validatePageSize(n int) error {
	if n < MinPageSize || n > MaxPageSize || n&(n-1) != 0 {
		return fmt.Errorf("page size %d is not a power of two in [%d, %d]", n, MinPageSize, MaxPageSize)
	}
	return nil
}

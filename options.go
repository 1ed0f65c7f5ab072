package strata

import (
	"fmt"
	"log/slog"

	"github.com/stratadb/strata/internal/btree"
	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/flashcache"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// SyncMode says whether commits with nil WriteOptions wait for
// durability, and when the WAL's background writer fsyncs the commits that
// do not wait. Commit(Sync) always waits for its fsync and Commit(NoSync)
// never does, whatever the mode (see WriteOptions). Sync, Checkpoint and
// Close make every earlier commit durable in every mode.
type SyncMode int

const (
	// SyncAlways: a commit with nil WriteOptions (Set, Delete, Update,
	// Commit(nil)) returns after its WAL record is fsynced; concurrent
	// commits share fsyncs (group commit). The background writer also
	// fsyncs after every batch it writes, so a NoSync commit is durable as
	// soon as the device allows, though it does not wait for it. The
	// default.
	SyncAlways SyncMode = iota
	// SyncPeriodic: a commit with nil WriteOptions returns once its WAL
	// record is queued (no I/O in the commit path); the background writer
	// writes records as they come and fsyncs every SyncInterval (10 ms). A
	// crash can lose the commits of about the last interval, never part of
	// one.
	SyncPeriodic
	// SyncNever: a commit with nil WriteOptions returns once its WAL
	// record is queued; the writer writes it but fsyncs only when asked:
	// by Sync, Checkpoint, Close or a Commit(Sync).
	SyncNever
)

// Options configure a database. A nil *Options, and every zero field, means
// the default stated on the field.
type Options struct {
	// PageSize is the B+tree page size: a power of two from 4 KiB to 64
	// KiB. Default 4 KiB for a new database (16 KiB before 2026-12-05;
	// docs/PAGESTORE.md, "Page size", says why: point reads with uniform
	// keys and random updates of data larger than the cache are faster
	// than with 16 KiB, range scans slower at every data size). Keys are
	// limited to a quarter page (1,008 bytes at 4 KiB). An existing
	// database keeps its page size: opened with 0 it uses it, whatever the
	// default; asking for another size is an error.
	PageSize int
	// Codec compresses pages: "none", "lz4", "lz4hc-N", "zstd", "zstd-N",
	// "deflate", "deflate-N", "snappy". Default "zstd" (level 3).
	Codec string
	// CacheSize is the memory budget in bytes of the buffer pool (frames,
	// compressed pages and metadata together), out of which the flash
	// cache's index and a compression dictionary's codec state are taken
	// first (Stats.FlashCache.MemoryBytes, Stats.DictionaryMemory).
	// Default 64 MiB.
	CacheSize int64
	// CompressedShare fixes R, the share of the cache holding compressed
	// pages, when FixedShare is set; otherwise R is tuned online starting
	// from it (default 0.5).
	CompressedShare float64
	FixedShare      bool
	// DisableDirectIO turns off O_DIRECT for page files (on by default
	// where the file system supports it).
	DisableDirectIO bool
	// DisableReadPolling makes a reader of a page not in memory park at
	// once while the device reads it. By default, where direct reads go
	// through Linux AIO and no other read is in flight, the reader polls
	// for the read's completion for up to 200 µs first: a parked reader
	// waited 2-4 times the device's time to be woken while the process's
	// other goroutines kept the CPUs busy (docs/ARCHITECTURE.md, vfs,
	// "Direct reads"). Polling costs the CPU time of the wait; turn it off
	// where CPU time is billed and latency does not matter.
	DisableReadPolling bool
	// DisableDeferredCommits makes every commit change the tree before it
	// returns. By default, where the store's reads are asynchronous
	// (direct I/O through Linux AIO), a commit whose pages are not in
	// memory is logged, made visible to reads, and applied to the tree in
	// the background while its pages are read, many at once
	// (docs/ARCHITECTURE.md, "Deferred commits"): writes to data larger
	// than the cache then wait for no page read.
	DisableDeferredCommits bool
	// DisableDictionary stops the page store from training a Zstandard
	// dictionary on the first 1 MiB of pages written and compressing later
	// pages with it. By default a zstd database without a dictionary
	// trains one when it has written that much after Open, and keeps it
	// (for good: a DICT file) only if it makes the held-out half of that
	// sample at least 10% smaller, and smaller by more than it makes them
	// slower to decode (JSON documents in 4 KiB pages: 1.56× smaller, 1.2–1.4×
	// the decode time, kept; in 16 KiB pages 1.23× and 1.6×, not kept;
	// sysbench's random digits: no gain). Without one kept, the next Open
	// tries again. Pages written with one stay readable either way.
	DisableDictionary bool
	// FillFactor is how full (in percent, 10..100) sequential inserts
	// leave B+tree pages; the free space is zero-filled so compression
	// removes it. Default 100.
	FillFactor int
	// Sync is whether commits with nil WriteOptions wait for durability
	// and when commits that do not wait become durable (see SyncMode and
	// WriteOptions). Default SyncAlways.
	Sync SyncMode
	// Partitions is the number of buffer pool partitions (a power of
	// two, at most 1024). Default: the smallest power of two ≥ GOMAXPROCS,
	// doubled while a partition would hold more than 128 GiB of the cache
	// (with 4 KiB OS pages; a partition may not hold more). Pages are
	// spread over them by a hash of their id; where a partition holds
	// 1,024 pages or more, runs of 16 consecutive ids share one, so that
	// neighbouring pages are written back together.
	Partitions int
	// CheckpointWAL is the WAL size in bytes after which a background
	// checkpoint runs; it bounds recovery time. Default 64 MiB.
	CheckpointWAL int64
	// CheckpointReplaced is the share of the store's pages (0..1] that
	// commits may replace after a checkpoint before a background
	// checkpoint runs, however small the WAL; never fewer pages than the
	// cache holds. A page of the last checkpoint's tree is copied the first
	// time a commit changes it, and the old copy stays on disk until the
	// next checkpoint, so this bounds the space those copies take: about
	// that share of the store. It costs update throughput: measured under
	// sustained random updates, the default kept the files' peak at 2.3×
	// the table (3.2× without it) at 0.75–0.78× the updates per second,
	// and 0.5 cost almost as much without lowering the peak
	// (docs/BENCHMARKS.md, "Space under sustained updates"). Default 0.25;
	// negative: only CheckpointWAL starts checkpoints (for update
	// throughput over space).
	CheckpointReplaced float64
	// Logger receives rare events at Info and above, and at Debug the
	// buffer pool controller's decisions and trials (about ten lines a
	// second: docs/ARCHITECTURE.md, "Tracing the controller"). It is called
	// with the controller's lock held: it must not call back into the
	// pool or the database. Default: discard.
	Logger *slog.Logger
	// FlashCache is a second-level cache of clean pages on a faster
	// device than the page files (see FlashCache). Default: none.
	FlashCache FlashCache

	// fs replaces the file system (tests: the crashable MemFS); flashFS
	// the flash cache's, and flashTune adjusts its internal options
	// (benchmarks: a simulated device, the admission policy).
	fs vfs.FS
	// dictSpaceOnly is pagestore.Options.DictionarySpaceOnly (tests).
	dictSpaceOnly bool
	flashFS       vfs.FS
	flashTune     func(*flashcache.Options)
}

// FlashCache is a file or block device on flash used as a second-level
// cache between the buffer pool and the page files (document 003's
// Oracle Database Flash Cache, ZFS's L2ARC): the compressed images of
// clean pages are written there, in the background, as they leave memory,
// and a page missing from memory is read there before the page files. It
// never slows the foreground: when the flash is behind, pages are not
// admitted, and a flash read that takes too long is abandoned for the page
// files. Its RAM index (about 32 bytes per quarter page of Size: 32 MiB
// per GiB of flash with 4 KiB pages) and buffers (up to about 4 MiB) are
// part of CacheSize. It stays warm across a clean Close (not
// across a crash, or a session that opened the database without it).
// docs/ARCHITECTURE.md describes it.
type FlashCache struct {
	// Path is the flash file (created if missing) or device; empty means
	// no flash cache. It must not be shared by two open databases.
	Path string
	// Size is the bytes of Path the cache uses (at least 1 MiB).
	Size int64
	// Format allows Open to overwrite a Path that is not empty and holds
	// no flash cache (a device or file used before for something else).
	// Without it Open fails with ErrNotFlashCache there, so that a
	// mistyped Path destroys nothing.
	Format bool
}

// poolOptions are the buffer pool's options for o (defaults filled in).
func (o *Options) poolOptions() bufferpool.Options {
	return bufferpool.Options{CacheSize: o.CacheSize, FixedShare: o.FixedShare,
		CompressedShare: o.CompressedShare, Partitions: o.Partitions, Logger: o.Logger,
		Verify: func(id bufferpool.PageID, page []byte) error {
			if id == 0 {
				return nil // the meta page, checked by decodeMeta
			}
			return btree.VerifyPage(id, page)
		}}
}

func (o *Options) withDefaults() (Options, codec.Codec, error) {
	var d Options
	if o != nil {
		d = *o
	}
	if d.Codec == "" {
		d.Codec = "zstd"
	}
	c, err := codec.Parse(d.Codec)
	if err != nil {
		return d, nil, fmt.Errorf("strata: %w", err)
	}
	if d.CacheSize == 0 {
		d.CacheSize = 64 << 20
	}
	if d.FillFactor == 0 {
		d.FillFactor = 100
	}
	if d.FillFactor < 10 || d.FillFactor > 100 {
		return d, nil, fmt.Errorf("strata: fill factor %d%% not in [10, 100]", d.FillFactor)
	}
	if d.Sync < SyncAlways || d.Sync > SyncNever {
		return d, nil, fmt.Errorf("strata: unknown sync mode %d", d.Sync)
	}
	if d.CheckpointWAL == 0 {
		d.CheckpointWAL = 64 << 20
	}
	if d.CheckpointWAL < 0 {
		return d, nil, fmt.Errorf("strata: CheckpointWAL %d is negative", d.CheckpointWAL)
	}
	if d.CheckpointReplaced == 0 {
		d.CheckpointReplaced = 0.25
	}
	if d.CheckpointReplaced > 1 || d.CheckpointReplaced != d.CheckpointReplaced {
		return d, nil, fmt.Errorf("strata: CheckpointReplaced %v not in (0, 1] (or negative: off)", d.CheckpointReplaced)
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.fs == nil {
		d.fs = vfs.Default
	}
	if d.FlashCache.Path != "" && d.FlashCache.Size < 1<<20 {
		return d, nil, fmt.Errorf("strata: flash cache size %d: want at least 1 MiB", d.FlashCache.Size)
	}
	if d.PageSize != 0 && (d.PageSize < pagestore.MinPageSize || d.PageSize > pagestore.MaxPageSize || d.PageSize&(d.PageSize-1) != 0) {
		return d, nil, fmt.Errorf("strata: page size %d is not a power of two in [%d, %d]", d.PageSize, pagestore.MinPageSize, pagestore.MaxPageSize)
	}
	return d, c, nil
}

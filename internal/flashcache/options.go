package flashcache

import (
	"fmt"
	"log/slog"
	"time"
	"unsafe"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/vfs"
)

// The cache's options, their defaults and checks, the file layout they
// give, and the memory they cost.
//
// Lock rules: none; these are pure functions of Options.

// DBState names a state of the database's pages in which nothing is
// being written: a database whose pages changed has another one (Strata:
// the transaction id and root of its last checkpoint). The zero value is
// unknown and matches no state.
type DBState [16]byte

// Admission says which clean pages leaving the buffer pool the cache
// writes to flash.
type Admission int

const (
	// AdmitAll admits every clean page leaving RAM (within the write-rate
	// budget and while the writer keeps up).
	AdmitAll Admission = iota
	// AdmitSecond admits a page the second time it leaves RAM within a
	// window (CacheLib's RejectFirstAP): pages read once are not written.
	AdmitSecond
)

// String names the policy as the bench flags do.
func (a Admission) String() string {
	switch a {
	case AdmitAll:
		return "all"
	case AdmitSecond:
		return "second"
	}
	return fmt.Sprintf("Admission(%d)", int(a))
}

// ParseAdmission reads "all" or "second".
func ParseAdmission(s string) (Admission, error) {
	switch s {
	case "all", "":
		return AdmitAll, nil
	case "second":
		return AdmitSecond, nil
	}
	return 0, fmt.Errorf("flashcache: unknown admission policy %q (want all or second)", s)
}

// Defaults for Options.
const (
	DefaultMaxRegionSize = 16 << 20
	DefaultQueueBytes    = 2 << 20
	DefaultWriteUnit     = 1 << 20
	// DefaultWriteRate is the flash write budget, like L2ARC's
	// l2arc_write_max: 64 MiB/s is about 4 drive-writes a day of a 1.3 TiB
	// drive at a constant full rate, far above what the experiments admit
	// on average (docs/BENCHMARKS.md).
	DefaultWriteRate   = 64 << 20
	DefaultReadTimeout = 20 * time.Millisecond
	// DefaultCloseTimeout bounds each of Close's waits for the flash.
	DefaultCloseTimeout = 5 * time.Second
	DefaultReaders      = 16
	// After a read timed out, reads bypass the flash for minStallCooldown,
	// doubling with each timeout in a row up to maxStallCooldown.
	minStallCooldown = 50 * time.Millisecond
	maxStallCooldown = time.Second
	// markerName is the marker file in the database's directory.
	markerName = "FLASHCACHE"
	// formattingName is the file in the database's directory that names a
	// flash file Open found empty and is formatting (see Cache.load).
	formattingName = "FLASHCACHE.formatting"
)

// Options configure a Cache.
type Options struct {
	// Path is the flash file (or device); Size its size in bytes.
	Path string
	Size int64
	// Format allows a Path that is not empty and holds no flash cache (a
	// device used before) to be formatted over; without it Open refuses
	// one (ErrNotFlashCache).
	Format bool
	// FS is the flash file's file system. Default: vfs.Default.
	FS vfs.FS
	// PageSize is the page store's page size (required).
	PageSize int
	// DBFS and DBDir are the database's file system and directory, where
	// the cache keeps its marker file. The cache reuses what it finds on
	// flash only if the marker names the same cache and session as a
	// cleanly closed flash file (persist.go). Without DBDir the cache
	// always starts cold. Open and Detach sync DBDir, which makes every
	// entry in it durable: the caller makes the page store's files
	// durable first (pagestore.Store.Sync), as the store expects a segment
	// file's entry to become durable only with its header.
	DBFS  vfs.FS
	DBDir string
	// DBState is the state of the database's pages as the database found
	// them at Open (Strata: its meta page's transaction and root). The
	// cache is warm only if it is the state Close was given: so a session
	// that changed pages without the cache and without removing the
	// marker (a binary built before the cache) makes the next Open cold.
	// The zero DBState is unknown and matches nothing: cold.
	DBState DBState
	// RegionSize is the unit of the ring (default: Size/16, within 64 KiB
	// and 16 MiB, a multiple of 4 KiB).
	RegionSize int64
	// WriteUnit is the size of the writer's sequential writes (default:
	// 1 MiB, at most a region).
	WriteUnit int
	// QueueBytes bounds the admission queue (default 2 MiB): when the
	// writer is behind, admissions are dropped.
	QueueBytes int
	// WriteRate is the flash write budget in bytes per second (default
	// DefaultWriteRate); negative means none.
	WriteRate int64
	// Admission is the admission policy (default AdmitAll).
	Admission Admission
	// MaxEntries is the capacity of the RAM index (default: Size divided
	// by a quarter page, the images' expected size).
	MaxEntries int
	// ReadTimeout bounds the time a foreground read waits for the flash
	// before it reads the page store instead (default 20 ms).
	ReadTimeout time.Duration
	// Readers is the number of goroutines reading the flash (default 16).
	Readers int
	// CloseTimeout bounds how long Close waits for the flash, once for the
	// writer to finish and once for the index snapshot (default 5 s).
	CloseTimeout time.Duration
	// Codec compresses the frames the pool evicts without an image
	// (default: zstd-1).
	Codec codec.Codec
	// Logger receives rare events. Default: discard.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.RegionSize == 0 {
		o.RegionSize = min(max(o.Size/16, 64<<10), DefaultMaxRegionSize) &^ (blockSize - 1)
	}
	if o.WriteUnit == 0 {
		o.WriteUnit = DefaultWriteUnit
	}
	o.WriteUnit = int(min(int64(o.WriteUnit), o.RegionSize))
	if o.QueueBytes == 0 {
		o.QueueBytes = DefaultQueueBytes
	}
	if o.WriteRate == 0 {
		o.WriteRate = DefaultWriteRate
	}
	if o.MaxEntries == 0 && o.PageSize > 0 {
		o.MaxEntries = int(min(o.Size/int64(max(o.PageSize/4, 512)), 1<<32-1))
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.Readers == 0 {
		o.Readers = DefaultReaders
	}
	if o.CloseTimeout == 0 {
		o.CloseTimeout = DefaultCloseTimeout
	}
	if o.Codec == nil {
		o.Codec, _ = codec.New(codec.Zstd, 1)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Path == "":
		return fmt.Errorf("flashcache: no path")
	case o.PageSize < 4096 || o.PageSize > 1<<20 || o.PageSize&(o.PageSize-1) != 0:
		return fmt.Errorf("flashcache: page size %d", o.PageSize)
	case o.RegionSize < 64<<10 || o.RegionSize%blockSize != 0 || o.RegionSize > 1<<30:
		return fmt.Errorf("flashcache: region size %d is not a multiple of 4 KiB in [64 KiB, 1 GiB]", o.RegionSize)
	case int64(o.WriteUnit) > o.RegionSize || o.WriteUnit < blockSize || o.WriteUnit%blockSize != 0:
		return fmt.Errorf("flashcache: write unit %d is not a multiple of 4 KiB up to the region size", o.WriteUnit)
	case o.WriteUnit < entryHeaderSize+o.PageSize:
		return fmt.Errorf("flashcache: write unit %d cannot hold a page of %d bytes", o.WriteUnit, o.PageSize)
	case o.QueueBytes < 4*o.PageSize:
		return fmt.Errorf("flashcache: queue of %d bytes is under 4 pages", o.QueueBytes)
	case o.MaxEntries < 1 || o.MaxEntries > 1<<32-1:
		return fmt.Errorf("flashcache: index capacity %d", o.MaxEntries)
	case o.ReadTimeout <= 0 || o.Readers < 1 || o.CloseTimeout <= 0:
		return fmt.Errorf("flashcache: read timeout %v, %d readers, close timeout %v", o.ReadTimeout, o.Readers, o.CloseTimeout)
	}
	l := o.layout()
	if l.regions < 2 {
		return fmt.Errorf("flashcache: size %d holds %d regions of %d bytes after %d bytes of metadata; need at least 2", o.Size, l.regions, l.regionSize, l.dataStart)
	}
	return nil
}

// layout is the file layout o formats.
func (o Options) layout() layout {
	l := layout{
		fileSize:   o.Size &^ (blockSize - 1),
		pageSize:   o.PageSize,
		regionSize: o.RegionSize,
		maxEntries: o.MaxEntries,
		unit:       16,
		snapOff:    superblockSlots * blockSize,
	}
	for l.unit < blockSize && l.fileSize/l.unit > 1<<32-1 {
		l.unit *= 2
	}
	l.snapCap = (snapshotSize(l.maxEntries, int(l.fileSize/max(l.regionSize, 1))) + blockSize - 1) &^ (blockSize - 1)
	l.dataStart = l.snapOff + l.snapCap
	if l.fileSize > l.dataStart {
		l.regions = int((l.fileSize - l.dataStart) / l.regionSize)
	}
	return l
}

// MemoryBytes is the RAM a cache with these options takes, which the
// database charges to its memory budget: the index, the regions' id lists,
// the admission queue (its bytes and item records, and the writer's copy
// of the records it takes) and filter, the write buffer and the entries
// pending in it (one per entry header at most), and the readers' buffers.
func (o Options) MemoryBytes() int64 {
	o = o.withDefaults()
	l := o.layout()
	readBuf := int64(o.PageSize + entryHeaderSize + 2*blockSize)
	items := int64(queueItems(o.QueueBytes)) * int64(unsafe.Sizeof(item{}))
	return indexBytes(o.MaxEntries) +
		int64(l.regions)*(int64(regionListCap(o.MaxEntries, max(l.regions, 1)))*4+64) +
		int64(o.QueueBytes) + 2*items +
		filterBytes(o.MaxEntries) +
		int64(o.WriteUnit) + int64(o.PageSize)*2 +
		int64(o.WriteUnit/entryHeaderSize)*int64(unsafe.Sizeof(pendingEntry{})) +
		int64(2*o.Readers)*readBuf
}

// regionListCap is the capacity of a region's id list: twice the mean
// number of entries a region holds when the index is full. A region whose
// list is full is sealed early.
func regionListCap(maxEntries, regions int) int {
	return 2*((maxEntries+regions-1)/regions) + 16
}

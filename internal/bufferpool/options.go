package bufferpool

import (
	"fmt"

	"github.com/stratadb/strata/internal/codec"
	"log/slog"
	"math"
	"math/bits"
	"runtime"
	"time"
)

// Defaults for Options.
const (
	DefaultCacheSize          = 64 << 20
	DefaultControllerInterval = 100 * time.Millisecond
	DefaultMinShare           = 0.05
	DefaultInitialShare       = 0.5
	DefaultDirtyLimit         = 0.25
)

// Options configure a Pool. The zero value is valid.
type Options struct {
	// CacheSize is the memory budget in bytes for uncompressed frames,
	// compressed images and the pool's own metadata together.
	// Default: 64 MiB.
	CacheSize int64
	// FixedShare fixes the compressed tier's share R of the budget at
	// CompressedShare. By default R is tuned online (auto), starting from
	// CompressedShare (default 0.5).
	FixedShare bool
	// CompressedShare is R, the share of the budget (0..1) given to
	// compressed images: the fixed value, or the starting point of the
	// automatic controller.
	CompressedShare float64
	// MinShare is the floor each tier keeps under automatic control.
	// Default: 0.05.
	MinShare float64
	// ControllerInterval is how often the automatic controller moves R.
	// Default: 100 ms.
	ControllerInterval time.Duration
	// Partitions is the number of independent partitions (a power of
	// two, at most 1024); pages are spread over them by a hash of their
	// id (runs of 16 consecutive ids share one where partitions hold
	// 1,024 frames or more). Default: the smallest power of two ≥ GOMAXPROCS, doubled while
	// a partition's budget would exceed maxPartitionBudget (128 GiB with
	// 4 KiB OS pages), which validate refuses.
	Partitions int
	// DirtyLimit is the share of frames (0..1) that may be dirty, once the
	// budget is nearly full, before the page cleaners start writing them
	// back. While the data fits with room to spare, dirty pages wait for
	// FlushAll (the database's checkpoints), and so do hot inner pages
	// (Page.MarkInner) unless a reader waits for a clean frame. Default:
	// 0.25.
	DirtyLimit float64
	// Verify, if set, checks a page's bytes when they enter a frame from
	// the store, or from an image read ahead (not on hits, nor when an
	// image made from a frame's bytes — kept from a load that verified
	// them, written back or demoted from a frame — is promoted: those
	// bytes were verified or made by the layer above): the layer above
	// validates its page format once per read from the store instead of
	// on every access. An error fails the load.
	Verify func(id PageID, page []byte) error
	// Progress, if set, counts the work the pool's user has completed
	// (operations; it only grows). The controller's trials compare their
	// windows by its rate where both were busy throughout (trial.go),
	// instead of by page accesses a second, which a regime can change
	// per operation: cached writes whose pages miss are deferred and
	// reach their pages more often (a copy trial from R 0.38 to 0.95,
	// where nothing misses, made 4% fewer accesses a second than the
	// window before it; with R fixed, 0.95 commits about 1.15× as much as
	// where the climb leaves R: docs/BENCHMARKS.md, twenty-eighth
	// session). It is called once per ControllerInterval, with the
	// controller's lock held: it must not call back into the pool.
	Progress func() int64
	// Codec compresses the pages the pool compresses itself: frames
	// demoted to the compressed tier that have no image, and pages written
	// back (when the store can write a given codec, as the page store
	// can). Any codec reads back alike. Default: the store's codec, or
	// zstd-1 for zstd at levels 1-3 (see DefaultCodec).
	Codec codec.Codec
	// Logger receives rare events at Info and above, and at Debug the
	// buffer pool controller's decisions and trials (about ten lines a
	// second: docs/ARCHITECTURE.md, "Tracing the controller"). It is called
	// with the controller's lock held: it must not call back into the
	// pool or the database. Default: discard.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.CacheSize == 0 {
		o.CacheSize = DefaultCacheSize
	}
	if !o.FixedShare && o.CompressedShare == 0 {
		o.CompressedShare = DefaultInitialShare
	}
	if o.MinShare == 0 {
		o.MinShare = DefaultMinShare
	}
	if o.ControllerInterval == 0 {
		o.ControllerInterval = DefaultControllerInterval
	}
	if o.Partitions == 0 {
		o.Partitions = 1 << bits.Len(uint(runtime.GOMAXPROCS(0)-1))
		for o.CacheSize/int64(o.Partitions) > maxPartitionBudget && o.Partitions < 1024 {
			o.Partitions *= 2 // a cache over 128 GiB a partition
		}
	}
	if o.DirtyLimit == 0 {
		o.DirtyLimit = DefaultDirtyLimit
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Validate reports whether New would accept o (with its defaults filled
// in) for a store of pageSize-byte pages, without creating anything.
func (o Options) Validate(pageSize int) error {
	return o.withDefaults().validate(pageSize)
}

func (o Options) validate(pageSize int) error {
	if pageSize%osPageSize != 0 {
		// Frames give memory back to the kernel a whole frame at a time;
		// a frame smaller than an OS page would take its neighbours along.
		return fmt.Errorf("bufferpool: page size %d is not a multiple of the OS page size %d", pageSize, osPageSize)
	}
	if math.IsNaN(o.CompressedShare) || math.IsNaN(o.MinShare) || math.IsNaN(o.DirtyLimit) {
		return fmt.Errorf("bufferpool: NaN in options")
	}
	if o.ControllerInterval < 0 {
		return fmt.Errorf("bufferpool: controller interval %v is negative", o.ControllerInterval)
	}
	if o.CompressedShare < 0 || o.CompressedShare > 1 {
		return fmt.Errorf("bufferpool: compressed share %v not in [0, 1]", o.CompressedShare)
	}
	if o.MinShare < 0 || o.MinShare >= 0.5 {
		return fmt.Errorf("bufferpool: min share %v not in [0, 0.5)", o.MinShare)
	}
	if o.Partitions < 1 || o.Partitions&(o.Partitions-1) != 0 || o.Partitions > 1024 {
		return fmt.Errorf("bufferpool: partitions %d is not a power of two in [1, 1024]", o.Partitions)
	}
	if o.DirtyLimit <= 0 || o.DirtyLimit > 1 {
		return fmt.Errorf("bufferpool: dirty limit %v not in (0, 1]", o.DirtyLimit)
	}
	if min := int64(o.Partitions) * int64(8*pageSize+64<<10); o.CacheSize < min {
		return fmt.Errorf("bufferpool: cache size %d too small for %d partitions of %d-byte pages (minimum %d)", o.CacheSize, o.Partitions, pageSize, min)
	}
	if o.CacheSize/int64(o.Partitions) > maxPartitionBudget {
		return fmt.Errorf("bufferpool: cache size %d over %d partitions gives each %d bytes, more than %d: use more partitions (at most 1024)", o.CacheSize, o.Partitions, o.CacheSize/int64(o.Partitions), maxPartitionBudget)
	}
	return nil
}

// maxPartitionBudget bounds a partition's budget: the granules of its
// image arena are indexed by int32 (image_arena.go), 64 per OS page.
var maxPartitionBudget = int64(math.MaxInt32/granulesPerPage) * int64(osPageSize)

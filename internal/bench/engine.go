// Package bench is the engine-neutral benchmark harness behind `strata
// bench`: workloads (sysbench OLTP, YCSB), data sets, key distributions, the
// measured run loop and its results. Engines plug in through the Engine
// interface; Strata's adapter lives here, the peers' adapters (bbolt, Pebble,
// Badger) live in the separate module under bench/ so that Strata's own
// module does not depend on them.
package bench

import (
	"fmt"
	"sort"
	"sync"
)

// Op is one write of a batch: a set, or a delete when Delete is true.
type Op struct {
	Key, Value []byte
	Delete     bool
}

// Engine is a key-value store under test. Methods other than Close are
// called from many goroutines at once.
type Engine interface {
	// Get appends the value of key to dst[:0] and returns it; found is
	// false when the key is absent.
	Get(key, dst []byte) (value []byte, found bool, err error)
	// Scan calls fn for up to n keys in [start, end) in ascending order
	// (a nil end is no bound), stopping early when fn returns false. k and
	// v are valid only during the call. The bound is a query's range
	// predicate (sysbench's BETWEEN), which an engine may use to read
	// ahead; a scan known only by its count (YCSB's) has none.
	Scan(start, end []byte, n int, fn func(k, v []byte) bool) error
	// Apply commits ops atomically (one transaction). sync asks for a
	// durable commit (fsync) before returning.
	Apply(ops []Op, sync bool) error
	// Flush makes everything written so far durable and, where the engine
	// has one, flushes its memtable (end of the load phase), so that the
	// on-disk size afterwards is meaningful.
	Flush() error
	// Metrics are engine-specific counters reported with the results
	// (hit ratios, compressed share R, ...). May return nil.
	Metrics() map[string]float64
	Close() error
}

// LoadApplier is an engine whose load (rows in key order, not synced) is
// committed otherwise than later writes: bbolt fills its pages as
// Config.FillFactor says there (Strata fills a leaf that much when a row
// is appended at its end, as in a load), where its default fill for every
// split, one half, left a loaded file twice its data.
type LoadApplier interface {
	ApplyLoad(ops []Op) error
}

// Reopener is an engine whose measured phase must run in a fresh open
// after a fresh load: ReopenAfterLoad, called after the load's Flush, says
// whether the load left it configured otherwise than a later open of the
// same data would be (Strata: a dictionary adopted during the load is
// charged to the cache only from the next open).
type Reopener interface {
	ReopenAfterLoad() bool
}

// Config is what every engine is opened with. Engines ignore the knobs
// they do not have and say so in Describe.
type Config struct {
	Dir string `json:"dir"`
	// CacheBytes is the engine's cache budget.
	CacheBytes int64 `json:"cache_bytes"`
	// Codec is a Strata codec name ("zstd", "lz4", "zstd-1", ...); peers
	// use their default compression unless they can match it.
	Codec string `json:"codec,omitempty"`
	// PageSize, CompressedShare (<0: auto), FillFactor, DirectIO and
	// Device ("none", "hdd", "ssd", "nvme": simulated latency) are Strata's.
	PageSize        int     `json:"page_size,omitempty"`
	CompressedShare float64 `json:"compressed_share"`
	FillFactor      int     `json:"fill_factor,omitempty"`
	DirectIO        bool    `json:"direct_io"`
	// NoDictionary is Strata's Options.DisableDictionary.
	NoDictionary bool   `json:"no_dictionary,omitempty"`
	Device       string `json:"device,omitempty"`
	// SyncWrites makes the measured phase's commits durable one by one
	// (the load phase never syncs per batch).
	SyncWrites bool `json:"sync_writes"`
	// FlashCache is the size of Strata's flash cache (0: none), a file
	// next to the data directory on FlashDevice ("none", "hdd", "ssd",
	// "nvme": simulated latency), with admission policy FlashAdmission
	// ("all", "second") and write budget FlashWriteRate (bytes/s; 0:
	// Strata's default, < 0: none).
	FlashCache     int64  `json:"flash_cache,omitempty"`
	FlashDevice    string `json:"flash_device,omitempty"`
	FlashAdmission string `json:"flash_admission,omitempty"`
	FlashWriteRate int64  `json:"flash_write_rate,omitempty"`
}

// Factory opens an engine. describe states its effective configuration
// (cache, compression, anything the engine does not support), for the
// results.
type Factory func(cfg Config) (e Engine, describe string, err error)

var (
	registryMu sync.Mutex
	registry   = map[string]Factory{}
)

// Register makes an engine available by name. Adapters call it from init.
func Register(name string, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("bench: engine registered twice: " + name)
	}
	registry[name] = f
}

// Lookup returns the factory registered under name.
func Lookup(name string) (Factory, error) {
	registryMu.Lock()
	defer registryMu.Unlock()
	f, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("bench: unknown engine %q (registered: %v)", name, registeredLocked())
	}
	return f, nil
}

// Engines lists the registered engine names, sorted.
func Engines() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	return registeredLocked()
}

func registeredLocked() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Package badgerpeer is the benchmark adapter of Badger (github.com/dgraph-io/badger/v4): it registers
// the engine "badger" with internal/bench's registry from init. The binary
// strata-bench-badger links it alone; see package peers.
package badgerpeer

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"

	"github.com/stratadb/strata/bench/peers"
	"github.com/stratadb/strata/internal/bench"
)

func init() { bench.Register("badger", openBadger) }

// Module is the module path of the engine; Pinned its version in go.mod,
// what Version reports when the binary carries no build information.
const (
	Module = "github.com/dgraph-io/badger/v4"
	Pinned = "v4.9.6"
)

// Version is the version of the engine's module linked into this binary.
func Version() string { return peers.ModuleVersion(Module, Pinned) }

const badgerMemTable = 8 * peers.MiB

// badgerEngine adapts Badger v4.
//
// Options: DefaultOptions(dir) with the whole cache budget for the block
// cache and none for the index cache, 8 MiB memtables (NumMemtables 5, the
// default), logging off and conflict detection off (Apply's transactions
// are blind writes that read nothing, so they can never conflict; the
// oracle's bookkeeping would be pure overhead). Compression is Badger's
// default, Snappy; values stay inline in the LSM tree (ValueThreshold's
// default is 1 MiB), so the value log holds no benchmark values. Badger
// reads its sstables through mmap: the OS page cache serves them beyond the
// budget, as for bbolt.
//
// The index cache: Badger v4.9.x consults it only for encrypted tables
// (table.fetchIndex returns the table's own index otherwise, a flatbuffer
// over the mmap-ed file, bloom filter included), so with no encryption a
// share of the budget given to it would sit unused. IndexCacheSize stays 0
// and the block cache (decompressed blocks) gets all of CacheBytes.
//
// Durability: SyncWrites is off (it would fsync every commit of the load
// too); Apply with sync=true calls db.Sync() after its commit, which
// msyncs the active memtable's WAL and the value log. One gap is Badger's:
// if another writer fills the memtable between the commit and the Sync,
// the commit's WAL is an immutable memtable's, which Sync does not cover
// (it is durable once flushed to L0).
//
// Flush: Badger has no public memtable flush (DropPrefix flushes only when
// the prefix exists, Flatten compacts the levels), so Flush closes the DB,
// which flushes the memtables to L0 and truncates the preallocated value
// log, and opens it again; mu keeps operations out meanwhile. The caches
// are cold afterwards. Badger preallocates sparse files (value log 2 GiB,
// memtable WAL 16 MiB apparent): the metric disk.allocated_bytes counts
// allocated blocks. (Scan holds mu's read lock while it calls fn: fn must
// not call the engine back while a Flush may be waiting.)
//
// Batch size: a transaction holds at most 15% of a memtable (1.2 MiB of
// keys and values, Options.maxBatchSize); a larger Apply fails with
// badger.ErrTxnTooBig instead of being split, as Apply is atomic. The
// runner's batches (1000 rows) stay well below it.
type badgerEngine struct {
	mu   sync.RWMutex // write-locked while Flush reopens db
	db   *badger.DB
	opts badger.Options
	dir  string

	baseMu sync.Mutex
	base   *badgerCounters // at StartMeasurement
}

var errBadgerClosed = errors.New("database is closed")

func openBadger(cfg bench.Config) (bench.Engine, string, error) {
	budget := cfg.CacheBytes
	if budget <= 0 {
		budget = peers.DefaultBudget
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("badger: open: %w", err)
	}
	opts := badger.DefaultOptions(cfg.Dir).
		WithBlockCacheSize(budget).
		WithIndexCacheSize(0).
		WithMemTableSize(badgerMemTable).
		WithDetectConflicts(false).
		WithLogger(nil)
	db, err := badger.Open(opts)
	if err != nil {
		return nil, "", fmt.Errorf("badger: open: %w", err)
	}
	desc := fmt.Sprintf("badger %s: block cache %s (whole budget; no index cache: v4 uses it only for encrypted tables), memtable %s x%d, compression %s (default), values inline (ValueThreshold %s), sstables and their indexes via mmap (OS page cache beyond the budget), conflict detection off, SyncWrites off with db.Sync after a sync commit%s",
		Version(), peers.SizeString(budget),
		peers.SizeString(badgerMemTable), opts.NumMemtables, badgerCompression(opts.Compression),
		peers.SizeString(opts.ValueThreshold), peers.CodecNote(cfg.Codec))
	return &badgerEngine{db: db, opts: opts, dir: cfg.Dir}, desc, nil
}

func badgerCompression(c options.CompressionType) string {
	switch c {
	case options.None:
		return "none"
	case options.Snappy:
		return "snappy"
	case options.ZSTD:
		return "zstd"
	}
	return fmt.Sprintf("type %d", c)
}

// acquire read-locks mu and returns the open DB.
func (e *badgerEngine) acquire() (*badger.DB, error) {
	e.mu.RLock()
	if e.db == nil {
		e.mu.RUnlock()
		return nil, errBadgerClosed
	}
	return e.db, nil
}

func (e *badgerEngine) Get(key, dst []byte) ([]byte, bool, error) {
	db, err := e.acquire()
	if err != nil {
		return nil, false, fmt.Errorf("badger: get: %w", err)
	}
	defer e.mu.RUnlock()
	found := false
	err = db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(key)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		dst, err = item.ValueCopy(dst[:0])
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("badger: get: %w", err)
	}
	if !found {
		return dst[:0], false, nil
	}
	return dst, true, nil
}

func (e *badgerEngine) Scan(start, end []byte, n int, fn func(k, v []byte) bool) error {
	if n <= 0 {
		return nil
	}
	db, err := e.acquire()
	if err != nil {
		return fmt.Errorf("badger: scan: %w", err)
	}
	defer e.mu.RUnlock()
	err = db.View(func(txn *badger.Txn) error {
		// No value prefetching: values are inline in the LSM tree, so
		// Item.Value reads them from the block already in hand, and the
		// prefetcher would only copy them (and read up to PrefetchSize
		// items past an early stop).
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false})
		defer it.Close()
		if len(start) == 0 {
			it.Rewind()
		} else {
			it.Seek(start)
		}
		more := true
		for i := 0; more && it.Valid() && i < n; i++ {
			item := it.Item()
			if end != nil && bytes.Compare(item.Key(), end) >= 0 {
				break
			}
			if err := item.Value(func(v []byte) error {
				more = fn(item.Key(), v)
				return nil
			}); err != nil {
				return err
			}
			it.Next()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("badger: scan: %w", err)
	}
	return nil
}

func (e *badgerEngine) Apply(ops []bench.Op, sync bool) error {
	db, err := e.acquire()
	if err != nil {
		return fmt.Errorf("badger: apply: %w", err)
	}
	defer e.mu.RUnlock()
	// One transaction, atomic; batches larger than Badger's transaction
	// limit (MaxBatchCount/MaxBatchSize, 15% of a memtable) fail with
	// ErrTxnTooBig rather than being split.
	err = db.Update(func(txn *badger.Txn) error {
		for _, op := range ops {
			var err error
			if op.Delete {
				err = txn.Delete(op.Key)
			} else {
				err = txn.Set(op.Key, op.Value)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("badger: apply %d ops: %w", len(ops), err)
	}
	if sync {
		if err := db.Sync(); err != nil {
			return fmt.Errorf("badger: apply: sync: %w", err)
		}
	}
	return nil
}

func (e *badgerEngine) Flush() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.db == nil {
		return fmt.Errorf("badger: flush: %w", errBadgerClosed)
	}
	if err := e.db.Sync(); err != nil {
		return fmt.Errorf("badger: flush: sync: %w", err)
	}
	err := e.db.Close()
	e.db = nil
	if err != nil {
		return fmt.Errorf("badger: flush: close: %w", err)
	}
	db, err := badger.Open(e.opts)
	if err != nil {
		return fmt.Errorf("badger: flush: reopen: %w", err)
	}
	e.db = db
	return nil
}

// badgerCounters are the cumulative counters Metrics reports as
// differences from StartMeasurement.
type badgerCounters struct {
	blockHits, blockMisses uint64
}

func badgerCountersOf(db *badger.DB) badgerCounters {
	var c badgerCounters
	if m := db.BlockCacheMetrics(); m != nil {
		c.blockHits, c.blockMisses = m.Hits(), m.Misses()
	}
	return c
}

// StartMeasurement makes Metrics' counters cover the measured phase only
// (bench.StartMeasurer).
func (e *badgerEngine) StartMeasurement() {
	db, err := e.acquire()
	if err != nil {
		return
	}
	defer e.mu.RUnlock()
	c := badgerCountersOf(db)
	e.baseMu.Lock()
	e.base = &c
	e.baseMu.Unlock()
}

// Notes states what the budget does not cover and how to read the size on
// disk (bench.Noter).
func (e *badgerEngine) Notes() []string {
	return []string{
		"badger: the block cache (decompressed blocks) holds the budget; memtables (8 MiB, up to 5) are outside it; sstables, their indexes and bloom filters are read through mmap, so the OS page cache serves them beyond the budget",
		"badger preallocates sparse files (value log 2 GiB, memtable WAL 16 MiB, DISCARD 1 MiB): a directory size from apparent file sizes overstates it; metric disk.allocated_bytes counts allocated blocks",
	}
}

func (e *badgerEngine) Metrics() map[string]float64 {
	db, err := e.acquire()
	if err != nil {
		return nil
	}
	defer e.mu.RUnlock()
	c := badgerCountersOf(db)
	e.baseMu.Lock()
	// Flush reopens the DB, which restarts Badger's counters: a base taken
	// before that no longer applies.
	if b := e.base; b != nil && c.blockHits >= b.blockHits && c.blockMisses >= b.blockMisses {
		c.blockHits -= b.blockHits
		c.blockMisses -= b.blockMisses
	}
	e.baseMu.Unlock()
	out := map[string]float64{
		"block_cache.hits":   float64(c.blockHits),
		"block_cache.misses": float64(c.blockMisses),
	}
	if t := c.blockHits + c.blockMisses; t > 0 {
		out["block_cache.hit_ratio"] = float64(c.blockHits) / float64(t)
	}
	var l0 int
	tables := db.Tables()
	for _, t := range tables {
		if t.Level == 0 {
			l0++
		}
	}
	out["lsm.tables"] = float64(len(tables))
	out["lsm.l0_tables"] = float64(l0)
	lsm, vlog := db.Size()
	out["disk.lsm_bytes"] = float64(lsm) // Badger refreshes these once a minute
	out["disk.vlog_bytes"] = float64(vlog)
	if n, err := peers.AllocatedBytes(e.dir); err == nil {
		out["disk.allocated_bytes"] = float64(n)
	}
	return out
}

func (e *badgerEngine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.db == nil {
		return nil
	}
	err := e.db.Close()
	e.db = nil
	if err != nil {
		return fmt.Errorf("badger: close: %w", err)
	}
	return nil
}

package peers

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"

	"github.com/stratadb/strata/internal/bench"
)

func init() { bench.Register("badger", openBadger) }

const (
	badgerMemTable = 8 * mib
	// badgerBlockShare of the budget goes to the block cache, the rest to
	// the index cache. With IndexCacheSize 0 (Badger's default) table
	// indexes and bloom filters stay in memory outside any budget, so it is
	// set to bound them.
	badgerBlockShare = 0.75
)

// badgerEngine adapts Badger v4.
//
// Options: DefaultOptions(dir) with the cache budget split 75/25 between
// the block cache and the index cache, 8 MiB memtables (NumMemtables 5, the
// default), logging off and conflict detection off (Apply's transactions
// are blind writes that read nothing, so they can never conflict; the
// oracle's bookkeeping would be pure overhead). Compression is Badger's
// default, Snappy; values stay inline in the LSM tree (ValueThreshold's
// default is 1 MiB), so the value log holds no benchmark values. Badger
// reads its sstables through mmap: the OS page cache serves them beyond the
// budget, as for bbolt.
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
// memtable WAL 16 MiB apparent): the metric disk_allocated_bytes counts
// allocated blocks.
type badgerEngine struct {
	mu   sync.RWMutex // write-locked while Flush reopens db
	db   *badger.DB
	opts badger.Options
	dir  string
}

var errBadgerClosed = errors.New("database is closed")

func openBadger(cfg bench.Config) (bench.Engine, string, error) {
	budget := cfg.CacheBytes
	if budget <= 0 {
		budget = defaultBudget
	}
	block := int64(float64(budget) * badgerBlockShare)
	index := budget - block
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("badger: open: %w", err)
	}
	opts := badger.DefaultOptions(cfg.Dir).
		WithBlockCacheSize(block).
		WithIndexCacheSize(index).
		WithMemTableSize(badgerMemTable).
		WithDetectConflicts(false).
		WithLogger(nil)
	db, err := badger.Open(opts)
	if err != nil {
		return nil, "", fmt.Errorf("badger: open: %w", err)
	}
	desc := fmt.Sprintf("badger %s: block cache %s + index cache %s (75/25 of %s), memtable %s x%d, compression %s (default), values inline (ValueThreshold %s), sstables via mmap (OS page cache beyond the budget), conflict detection off, SyncWrites off with db.Sync after a sync commit; codec %q not applicable",
		ModuleVersion(badgerModule, badgerPinned), sizeString(block), sizeString(index), sizeString(budget),
		sizeString(badgerMemTable), opts.NumMemtables, badgerCompression(opts.Compression),
		sizeString(opts.ValueThreshold), cfg.Codec)
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

func (e *badgerEngine) Scan(start []byte, n int, fn func(k, v []byte) bool) error {
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

func (e *badgerEngine) Metrics() map[string]float64 {
	db, err := e.acquire()
	if err != nil {
		return nil
	}
	defer e.mu.RUnlock()
	out := map[string]float64{}
	if bc := db.BlockCacheMetrics(); bc != nil {
		out["block_cache_hits"] = float64(bc.Hits())
		out["block_cache_misses"] = float64(bc.Misses())
		out["block_cache_hit_ratio"] = bc.Ratio()
	}
	if ic := db.IndexCacheMetrics(); ic != nil {
		out["index_cache_hits"] = float64(ic.Hits())
		out["index_cache_misses"] = float64(ic.Misses())
		out["index_cache_hit_ratio"] = ic.Ratio()
	}
	out["levels"] = float64(len(db.Levels()))
	out["tables"] = float64(len(db.Tables()))
	if n, err := allocatedBytes(e.dir); err == nil {
		out["disk_allocated_bytes"] = float64(n)
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

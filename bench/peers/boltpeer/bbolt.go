// Package boltpeer is the benchmark adapter of bbolt (go.etcd.io/bbolt): it registers
// the engine "bbolt" with internal/bench's registry from init. The binary
// strata-bench-bbolt links it alone; see package peers.
package boltpeer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/stratadb/strata/bench/peers"
	"github.com/stratadb/strata/internal/bench"
)

func init() { bench.Register("bbolt", openBolt) }

// Module is the module path of the engine; Pinned its version in go.mod,
// what Version reports when the binary carries no build information.
const (
	Module = "go.etcd.io/bbolt"
	Pinned = "v1.5.0"
)

// Version is the version of the engine's module linked into this binary.
func Version() string { return peers.ModuleVersion(Module, Pinned) }

var boltBucket = []byte("bench")

// boltEngine adapts bbolt: one bucket, one file (bbolt.db) in Config.Dir.
//
// Durability. bbolt fsyncs twice per Update (data pages, then the meta page)
// unless DB.NoSync is set. The load phase (Apply with sync=false) must not
// pay that, a measured phase with SyncWrites must. Two ways were possible:
//
//   - open with NoSync and call db.Sync() after an Apply with sync=true: the
//     commit then writes its pages and its meta page with no barrier between
//     them, so the OS may write the new meta page back before the pages it
//     points to, and a crash before the later Sync leaves a meta page that
//     references garbage: the durability of the commit is there once Apply
//     returns, but not bbolt's crash consistency in between;
//   - set NoSync = !sync before each Update: the sync commits then run
//     bbolt's ordinary protocol (fdatasync of the pages, then of the meta
//     page). DB.NoSync is a plain field read by Tx.Commit only, so it is
//     written and read under applyMu, which every Update goes through.
//
// The second is what bbolt itself does with NoSync off, so it is the one
// used. applyMu costs no concurrency: bbolt runs one writer at a time anyway.
// Commits with sync=false (the load) are not crash safe, as with any NoSync
// use of bbolt; Flush (db.Sync) makes them durable at the end of the load.
type boltEngine struct {
	db  *bolt.DB
	dir string
	// loadFill is the bucket's FillPercent for the load: Config.FillFactor
	// (default 100, Strata's), as Strata fills a leaf when rows arrive in
	// key order. Later commits keep bbolt's default (one half), as Strata
	// splits a leaf in half where a row lands inside it.
	loadFill float64
	applyMu  sync.Mutex // serializes Update and guards db.NoSync

	baseMu sync.Mutex
	base   *bolt.Stats // at StartMeasurement
}

func openBolt(cfg bench.Config) (bench.Engine, string, error) {
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("bbolt: open: %w", err)
	}
	// Default options but a lock timeout (a stale child holding the file
	// fails the run instead of hanging it) and NoSync until asked.
	db, err := bolt.Open(filepath.Join(cfg.Dir, "bbolt.db"), 0o644, &bolt.Options{
		Timeout: 10 * time.Second,
		NoSync:  true,
	})
	if err != nil {
		return nil, "", fmt.Errorf("bbolt: open: %w", err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(boltBucket)
		return err
	}); err != nil {
		_ = db.Close()
		return nil, "", fmt.Errorf("bbolt: create bucket: %w", err)
	}
	freelist := db.FreelistType
	if freelist == "" {
		freelist = bolt.FreelistArrayType // bbolt's default
	}
	fill := 100
	if cfg.FillFactor > 0 {
		fill = cfg.FillFactor
	}
	desc := fmt.Sprintf("bbolt %s: no cache of its own (mmap and the OS page cache; cache budget %s ignored), page size %d, compression: none, freelist %s; load filled %d%% (FillPercent), later splits bbolt's default; commits with sync fsync pages then meta (NoSync off), load commits with NoSync then db.Sync",
		Version(), peers.SizeString(cfg.CacheBytes), db.Info().PageSize, freelist, fill)
	return &boltEngine{db: db, dir: cfg.Dir, loadFill: float64(fill) / 100}, desc, nil
}

func (e *boltEngine) Get(key, dst []byte) ([]byte, bool, error) {
	found := false
	err := e.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(boltBucket)
		if b == nil {
			return bolt.ErrBucketNotFound
		}
		// A cursor rather than Bucket.Get, whose nil stands for an absent
		// key and may stand for an empty value too.
		k, v := b.Cursor().Seek(key)
		if k != nil && bytes.Equal(k, key) {
			found = true
			dst = append(dst[:0], v...)
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("bbolt: get: %w", err)
	}
	if !found {
		return dst[:0], false, nil
	}
	return dst, true, nil
}

func (e *boltEngine) Scan(start, end []byte, n int, fn func(k, v []byte) bool) error {
	if n <= 0 {
		return nil
	}
	err := e.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(boltBucket)
		if b == nil {
			return bolt.ErrBucketNotFound
		}
		c := b.Cursor()
		var k, v []byte
		if start == nil {
			k, v = c.First()
		} else {
			k, v = c.Seek(start)
		}
		for i := 0; k != nil && i < n; i++ {
			if end != nil && bytes.Compare(k, end) >= 0 {
				break
			}
			if !fn(k, v) {
				break
			}
			k, v = c.Next()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("bbolt: scan: %w", err)
	}
	return nil
}

func (e *boltEngine) Apply(ops []bench.Op, sync bool) error { return e.apply(ops, sync, 0) }

// ApplyLoad commits a batch of the load with the pages filled loadFill
// (bench.LoadApplier).
func (e *boltEngine) ApplyLoad(ops []bench.Op) error { return e.apply(ops, false, e.loadFill) }

// apply commits ops; fill, if not 0, is the bucket's FillPercent for it.
func (e *boltEngine) apply(ops []bench.Op, sync bool, fill float64) error {
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	e.db.NoSync = !sync
	err := e.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(boltBucket)
		if b == nil {
			return bolt.ErrBucketNotFound
		}
		if fill != 0 {
			b.FillPercent = fill
		}
		for _, op := range ops {
			var err error
			if op.Delete {
				err = b.Delete(op.Key)
			} else {
				err = b.Put(op.Key, op.Value)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("bbolt: apply: %w", err)
	}
	return nil
}

// Flush fsyncs the file: bbolt has no memtable, the commits of the load
// (NoSync) are in the file already.
func (e *boltEngine) Flush() error {
	if err := e.db.Sync(); err != nil {
		return fmt.Errorf("bbolt: flush: %w", err)
	}
	return nil
}

// StartMeasurement makes Metrics' counters cover the measured phase only
// (bench.StartMeasurer).
func (e *boltEngine) StartMeasurement() {
	s := e.db.Stats()
	e.baseMu.Lock()
	e.base = &s
	e.baseMu.Unlock()
}

// Notes states, for the results, that the cache budget does not bind
// bbolt (bench.Noter).
func (e *boltEngine) Notes() []string {
	return []string{"bbolt has no cache of its own: it reads through mmap, so the OS page cache serves it, bounded only by the memory limit"}
}

func (e *boltEngine) Metrics() map[string]float64 {
	s := e.db.Stats()
	var b bolt.Stats
	e.baseMu.Lock()
	if e.base != nil {
		b = *e.base
	}
	e.baseMu.Unlock()
	m := map[string]float64{
		"freelist.free_pages":    float64(s.FreePageN),
		"freelist.pending_pages": float64(s.PendingPageN),
		"freelist.inuse_bytes":   float64(s.FreelistInuse),
		"tx.read":                float64(s.TxN - b.TxN),
		"tx.pages_allocated":     float64(s.TxStats.GetPageCount() - b.TxStats.GetPageCount()),
		"tx.page_splits":         float64(s.TxStats.GetSplit() - b.TxStats.GetSplit()),
		"tx.spills":              float64(s.TxStats.GetSpill() - b.TxStats.GetSpill()),
		"tx.write_seconds":       (s.TxStats.GetWriteTime() - b.TxStats.GetWriteTime()).Seconds(),
	}
	if n, err := peers.AllocatedBytes(e.dir); err == nil {
		m["disk.allocated_bytes"] = float64(n)
	}
	return m
}

func (e *boltEngine) Close() error {
	if err := e.db.Close(); err != nil {
		return fmt.Errorf("bbolt: close: %w", err)
	}
	return nil
}

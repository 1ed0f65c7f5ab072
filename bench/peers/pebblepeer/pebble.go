// Package pebblepeer is the benchmark adapter of Pebble (github.com/cockroachdb/pebble/v2): it registers
// the engine "pebble" with internal/bench's registry from init. The binary
// strata-bench-pebble links it alone; see package peers.
package pebblepeer

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/stratadb/strata/bench/peers"
	"github.com/stratadb/strata/internal/bench"
)

func init() { bench.Register("pebble", openPebble) }

// Module is the module path of the engine; Pinned its version in go.mod,
// what Version reports when the binary carries no build information.
const (
	Module = "github.com/cockroachdb/pebble/v2"
	Pinned = "v2.1.7"
)

// Version is the version of the engine's module linked into this binary.
func Version() string { return peers.ModuleVersion(Module, Pinned) }

// pebbleMemTable is the memtable size (Pebble's own default too, stated
// explicitly so that a change of default does not change the benchmark).
const pebbleMemTable = 4 * peers.MiB

// pebbleEngine adapts Pebble v2.
//
// Options: the block cache gets the whole budget (Config.CacheBytes); the
// memtable is 4 MiB (Pebble allows up to MemTableStopWritesThreshold=2 of
// them, queued ones included); the format major version is FormatNewest
// (columnar blocks, sstable format v7; value separation stays off, its
// default), as Pebble's default for a new store is still the oldest format it
// supports, kept for compatibility; everything else is Pebble's default,
// including compression: Snappy on every level (LevelOptions.EnsureDefaults
// in v2.1.x sets sstable.SnappyCompression). Pebble cannot match Strata's
// codecs one for one, so Config.Codec is ignored.
//
// Durability: Apply commits a batch with pebble.Sync (WAL fsync, grouped
// with concurrent committers) or pebble.NoSync; the WAL is always written.
type pebbleEngine struct {
	db  *pebble.DB
	dir string

	baseMu sync.Mutex
	base   *pebbleCounters // at StartMeasurement
}

// quietLogger drops Pebble's informational messages; errors go to stderr,
// which the bench child passes through, and Fatalf still exits.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	pebble.DefaultLogger.Errorf(format, args...)
}
func (quietLogger) Fatalf(format string, args ...any) {
	pebble.DefaultLogger.Fatalf(format, args...)
}

func openPebble(cfg bench.Config) (bench.Engine, string, error) {
	budget := cfg.CacheBytes
	if budget <= 0 {
		budget = peers.DefaultBudget
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("pebble: open: %w", err)
	}
	cache := pebble.NewCache(budget)
	defer cache.Unref() // the DB holds its own reference
	opts := &pebble.Options{
		Cache:              cache,
		MemTableSize:       pebbleMemTable,
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             quietLogger{},
	}
	// Fill in the defaults here (Open does it to a copy) so that Describe
	// reports the compression actually in force.
	opts.EnsureDefaults()
	db, err := pebble.Open(cfg.Dir, opts)
	if err != nil {
		return nil, "", fmt.Errorf("pebble: open: %w", err)
	}
	desc := fmt.Sprintf("pebble %s: block cache %s (whole budget), memtable %s, compression %s (default), format %d (newest), WAL on%s",
		Version(), peers.SizeString(budget), peers.SizeString(pebbleMemTable),
		compressionName(opts), pebble.FormatNewest, peers.CodecNote(cfg.Codec))
	return &pebbleEngine{db: db, dir: cfg.Dir}, desc, nil
}

// compressionName reports the compression the options in effect give L0
// (the same on all levels by default), in lower case.
func compressionName(opts *pebble.Options) string {
	if c := opts.Levels[0].Compression; c != nil {
		if p := c(); p != nil {
			return lower(p.Name)
		}
	}
	return "unknown"
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func (e *pebbleEngine) Get(key, dst []byte) ([]byte, bool, error) {
	v, closer, err := e.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return dst[:0], false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pebble: get: %w", err)
	}
	dst = append(dst[:0], v...)
	if err := closer.Close(); err != nil {
		return nil, false, fmt.Errorf("pebble: get: %w", err)
	}
	return dst, true, nil
}

func (e *pebbleEngine) Scan(start, end []byte, n int, fn func(k, v []byte) bool) error {
	if n <= 0 {
		return nil
	}
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return fmt.Errorf("pebble: scan: %w", err)
	}
	i := 0
	for valid := it.First(); valid && i < n; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return fmt.Errorf("pebble: scan: %w", err)
		}
		i++
		if !fn(it.Key(), v) {
			break
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("pebble: scan: %w", err)
	}
	return nil
}

func (e *pebbleEngine) Apply(ops []bench.Op, sync bool) error {
	b := e.db.NewBatch()
	defer b.Close()
	for _, op := range ops {
		var err error
		if op.Delete {
			err = b.Delete(op.Key, nil)
		} else {
			err = b.Set(op.Key, op.Value, nil)
		}
		if err != nil {
			return fmt.Errorf("pebble: apply: %w", err)
		}
	}
	wo := pebble.NoSync
	if sync {
		wo = pebble.Sync
	}
	if err := b.Commit(wo); err != nil {
		return fmt.Errorf("pebble: apply: %w", err)
	}
	return nil
}

// Flush flushes the memtable to an sstable (synced, with the manifest), so
// that the data is durable and the size on disk is the LSM tree's.
func (e *pebbleEngine) Flush() error {
	if err := e.db.Flush(); err != nil {
		return fmt.Errorf("pebble: flush: %w", err)
	}
	return nil
}

// pebbleCounters are the cumulative counters Metrics reports as
// differences from StartMeasurement.
type pebbleCounters struct {
	hits, misses, compactions, flushes int64
}

func (e *pebbleEngine) counters(m *pebble.Metrics) pebbleCounters {
	return pebbleCounters{
		hits:        m.BlockCache.Hits,
		misses:      m.BlockCache.Misses,
		compactions: m.Compact.Count,
		flushes:     m.Flush.Count,
	}
}

// StartMeasurement makes Metrics' counters cover the measured phase only
// (bench.StartMeasurer).
func (e *pebbleEngine) StartMeasurement() {
	c := e.counters(e.db.Metrics())
	e.baseMu.Lock()
	e.base = &c
	e.baseMu.Unlock()
}

// Notes states what the budget does not cover (bench.Noter).
func (e *pebbleEngine) Notes() []string {
	return []string{"pebble: the block cache (data, index and filter blocks) holds the budget; memtables (4 MiB, up to 2) are outside it; sstables are read with buffered pread, so the OS page cache holds them too, bounded only by the memory limit"}
}

func (e *pebbleEngine) Metrics() map[string]float64 {
	m := e.db.Metrics()
	c := e.counters(m)
	e.baseMu.Lock()
	if e.base != nil {
		b := *e.base
		c.hits -= b.hits
		c.misses -= b.misses
		c.compactions -= b.compactions
		c.flushes -= b.flushes
	}
	e.baseMu.Unlock()
	out := map[string]float64{
		"block_cache.hits":   float64(c.hits),
		"block_cache.misses": float64(c.misses),
		"block_cache.bytes":  float64(m.BlockCache.Size),
		"block_cache.blocks": float64(m.BlockCache.Count),
		"lsm.read_amp":       float64(m.ReadAmp()),
		"lsm.compactions":    float64(c.compactions),
		"lsm.flushes":        float64(c.flushes),
		"memtable.bytes":     float64(m.MemTable.Size),
		"disk.space_bytes":   float64(m.DiskSpaceUsage()),
	}
	if t := c.hits + c.misses; t > 0 {
		out["block_cache.hit_ratio"] = float64(c.hits) / float64(t)
	}
	if n, err := peers.AllocatedBytes(e.dir); err == nil {
		out["disk.allocated_bytes"] = float64(n)
	}
	return out
}

func (e *pebbleEngine) Close() error {
	if err := e.db.Close(); err != nil {
		return fmt.Errorf("pebble: close: %w", err)
	}
	return nil
}

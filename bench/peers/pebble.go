package peers

import (
	"errors"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble/v2"

	"github.com/stratadb/strata/internal/bench"
)

func init() { bench.Register("pebble", openPebble) }

// pebbleMemTable is the memtable size (Pebble's own default too, stated
// explicitly so that a change of default does not change the benchmark).
const pebbleMemTable = 4 * mib

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
	db *pebble.DB
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
		budget = defaultBudget
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
	db, err := pebble.Open(cfg.Dir, opts)
	if err != nil {
		return nil, "", fmt.Errorf("pebble: open: %w", err)
	}
	desc := fmt.Sprintf("pebble %s: block cache %s (whole budget), memtable %s, compression %s (default), format %d (newest), WAL on; codec %q not applicable",
		ModuleVersion(pebbleModule, pebblePinned), sizeString(budget), sizeString(pebbleMemTable),
		compressionName(opts), pebble.FormatNewest, cfg.Codec)
	return &pebbleEngine{db: db}, desc, nil
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

func (e *pebbleEngine) Scan(start []byte, n int, fn func(k, v []byte) bool) error {
	if n <= 0 {
		return nil
	}
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: start})
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

func (e *pebbleEngine) Metrics() map[string]float64 {
	m := e.db.Metrics()
	bc := m.BlockCache
	out := map[string]float64{
		"block_cache_hits":   float64(bc.Hits),
		"block_cache_misses": float64(bc.Misses),
		"block_cache_bytes":  float64(bc.Size),
		"block_cache_blocks": float64(bc.Count),
		"read_amp":           float64(m.ReadAmp()),
		"disk_space_bytes":   float64(m.DiskSpaceUsage()),
		"compactions":        float64(m.Compact.Count),
		"flushes":            float64(m.Flush.Count),
		"memtable_bytes":     float64(m.MemTable.Size),
	}
	if t := bc.Hits + bc.Misses; t > 0 {
		out["block_cache_hit_ratio"] = float64(bc.Hits) / float64(t)
	}
	return out
}

func (e *pebbleEngine) Close() error {
	if err := e.db.Close(); err != nil {
		return fmt.Errorf("pebble: close: %w", err)
	}
	return nil
}

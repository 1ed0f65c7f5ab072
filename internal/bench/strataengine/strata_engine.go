// Package strataengine is Strata's adapter for internal/bench: it registers
// the engine "strata" from init. It is a package of its own so that the
// peers' bench binaries, which import internal/bench, do not link
// Strata's engine (1.4 MiB more resident at rest in bbolt's binary);
// strata-bench-child and the strata binary import it.
package strataengine

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/stratadb/strata"
	"github.com/stratadb/strata/internal/bench"
	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/flashcache"
	"github.com/stratadb/strata/internal/hooks"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

func init() {
	bench.Register("strata", openStrata)
}

// strataEngine adapts a *strata.DB to bench.Engine. The database runs with
// SyncNever: the load and unsynced commits are made durable by the
// Checkpoint of Flush (or by Close), and Apply(ops, true) asks for a
// durable commit explicitly.
type strataEngine struct {
	db      *strata.DB
	batches sync.Pool // *strata.Batch, reset
	notes   []string

	baseMu sync.Mutex
	base   *strata.Stats // at StartMeasurement

	// GOMEMLIMIT as the engine found it (0: none), and followMetaLimit's
	// stop and done signals.
	limitBase int64
	stopLimit chan struct{}
	limitDone chan struct{}
	closeOnce sync.Once
	closeErr  error
	// stopTrace stops the pool trace PoolTraceEnv asks for; closeLog
	// closes the log PoolLogEnv asks for, after the database.
	stopTrace func()
	closeLog  func()
}

func openStrata(cfg bench.Config) (bench.Engine, string, error) {
	opts := &strata.Options{
		CacheSize:         cfg.CacheBytes,
		Codec:             cfg.Codec,
		PageSize:          cfg.PageSize,
		FillFactor:        cfg.FillFactor,
		DisableDirectIO:   !cfg.DirectIO,
		DisableDictionary: cfg.NoDictionary,
		Sync:              strata.SyncNever,
	}
	if cfg.CompressedShare < 0 {
		opts.FixedShare = false
	} else {
		opts.FixedShare, opts.CompressedShare = true, cfg.CompressedShare
	}
	var notes []string
	device := strings.ToLower(cfg.Device)
	if device != "" && device != "none" {
		dev, err := vfs.DeviceByName(device)
		if err != nil {
			return nil, "", fmt.Errorf("bench: strata: %w", err)
		}
		hooks.SetFS(opts, vfs.NewLatency(vfs.Default, dev))
		notes = append(notes, "simulated device: "+dev.Name+" (injected latency)")
	}
	if cfg.FlashCache > 0 {
		n, err := setFlashCache(opts, cfg)
		if err != nil {
			return nil, "", err
		}
		notes = append(notes, n...)
	}
	logger, closeLog, err := openPoolLog()
	if err != nil {
		return nil, "", err
	}
	opts.Logger = logger
	db, err := strata.Open(cfg.Dir, opts)
	if err != nil {
		closeLog()
		return nil, "", fmt.Errorf("bench: strata: %w", err)
	}
	stopTrace, err := startPoolTrace(db)
	if err != nil {
		err = errors.Join(err, db.Close())
		closeLog()
		return nil, "", err
	}
	e := &strataEngine{db: db, stopLimit: make(chan struct{}), limitDone: make(chan struct{}), stopTrace: stopTrace, closeLog: closeLog}
	if lim := debug.SetMemoryLimit(-1); lim < math.MaxInt64 {
		// Two parts of the cache live on the Go heap, not in the pool's
		// off-heap arenas: the dictionary's codec state (charged at Open)
		// and the pool's metadata (descriptors, page table, ghosts:
		// charged as it grows; 5.2 MiB of a 40 MiB cache with 4 KiB
		// pages, 2.9 MiB with 16 KiB). The heap's limit, set for what the process holds beyond
		// its cache, grows by both, so that they are not counted twice
		// and the process's memory is split as the cache's accounting
		// says.
		st := db.Stats()
		if st.DictionaryMemory > 0 {
			notes = append(notes, fmt.Sprintf("dictionary: %.1f MiB of the cache charged to its codec state, GOMEMLIMIT raised as much", float64(st.DictionaryMemory)/(1<<20)))
		}
		notes = append(notes, "GOMEMLIMIT follows the buffer pool's metadata (part of the cache, held on the Go heap), raised by it as it grows")
		e.limitBase = lim
		go e.followMetaLimit()
	} else {
		close(e.limitDone)
	}
	e.notes = notes
	e.batches.New = func() any { return db.NewBatch() }
	return e, e.describe(cfg, device), nil
}

// followMetaLimit keeps GOMEMLIMIT at limitBase plus the parts of the cache
// held on the Go heap (see openStrata) until Close.
func (e *strataEngine) followMetaLimit() {
	defer close(e.limitDone)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		st := e.db.Stats()
		debug.SetMemoryLimit(e.limitBase + st.DictionaryMemory + st.Pool.MetaBytes)
		select {
		case <-e.stopLimit:
			return
		case <-t.C:
		}
	}
}

// ReopenAfterLoad implements Reopener: a dictionary adopted during the
// load is charged to the cache only from the next open.
func (e *strataEngine) ReopenAfterLoad() bool {
	st := e.db.Stats()
	return st.Store.DictionaryID != 0 && st.DictionaryMemory == 0
}

// describe states the effective configuration: defaults resolved, and
// direct I/O as the store actually opened its files.
func (e *strataEngine) describe(cfg bench.Config, device string) string {
	st := e.db.Stats()
	codec := cfg.Codec
	if codec == "" {
		codec = "zstd"
	}
	share := "R auto"
	if cfg.CompressedShare >= 0 {
		share = fmt.Sprintf("R fixed %.2f", cfg.CompressedShare)
	}
	fill := cfg.FillFactor
	if fill == 0 {
		fill = 100
	}
	direct := "direct I/O off"
	switch {
	case st.Store.DirectIO:
		direct = "direct I/O on"
	case cfg.DirectIO:
		direct = "direct I/O off (not supported by the file system)"
	}
	s := fmt.Sprintf("strata: cache %s, codec %s, %d KiB pages, %s, fill factor %d, %s",
		formatMiB(st.Pool.CacheSize), codec, st.Store.PageSize>>10, share, fill, direct)
	if cfg.SyncWrites {
		s += ", sync per commit"
	}
	if device != "" && device != "none" {
		s += ", simulated " + device
	}
	if cfg.FlashCache > 0 {
		adm := cfg.FlashAdmission
		if adm == "" {
			adm = "all"
		}
		s += fmt.Sprintf(", flash cache %s (admission %s, opened %s)", formatMiB(cfg.FlashCache), adm, st.FlashCache.OpenState)
		if d := cfg.FlashDevice; d != "" && d != "none" {
			s += " on simulated " + d
		}
	}
	return s
}

// setFlashCache gives opts the flash cache cfg asks for: a file next to
// the data directory, on a simulated device if one is named.
func setFlashCache(opts *strata.Options, cfg bench.Config) ([]string, error) {
	var notes []string
	opts.FlashCache = strata.FlashCache{Path: filepath.Join(filepath.Dir(cfg.Dir), "flash-cache"), Size: cfg.FlashCache}
	if d := strings.ToLower(cfg.FlashDevice); d != "" && d != "none" {
		dev, err := vfs.DeviceByName(d)
		if err != nil {
			return nil, fmt.Errorf("bench: strata flash cache: %w", err)
		}
		hooks.SetFlashFS(opts, vfs.NewLatency(vfs.Default, dev))
		notes = append(notes, "simulated flash cache device: "+dev.Name+" (injected latency)")
	}
	adm, err := flashcache.ParseAdmission(cfg.FlashAdmission)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	hooks.TuneFlash(opts, func(o *flashcache.Options) {
		o.Admission = adm
		if cfg.FlashWriteRate != 0 {
			o.WriteRate = cfg.FlashWriteRate
		}
	})
	return notes, nil
}

func formatMiB(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

func (e *strataEngine) Notes() []string { return e.notes }

func (e *strataEngine) Get(key, dst []byte) ([]byte, bool, error) {
	v, err := e.db.AppendValue(dst[:0], key)
	if errors.Is(err, strata.ErrNotFound) {
		return dst[:0], false, nil
	}
	if err != nil {
		return dst[:0], false, err
	}
	return v, true, nil
}

func (e *strataEngine) Scan(start, end []byte, n int, fn func(k, v []byte) bool) error {
	it, err := e.db.NewIter(&strata.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return err
	}
	for ok, i := it.First(), 0; ok && i < n; ok, i = it.Next(), i+1 {
		if !fn(it.Key(), it.Value()) {
			break
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return err
	}
	return it.Close()
}

func (e *strataEngine) Apply(ops []bench.Op, sync bool) error {
	b := e.batches.Get().(*strata.Batch)
	defer func() {
		b.Reset()
		e.batches.Put(b)
	}()
	for _, op := range ops {
		var err error
		if op.Delete {
			err = b.Delete(op.Key)
		} else {
			err = b.Set(op.Key, op.Value)
		}
		if err != nil {
			return err
		}
	}
	opts := strata.NoSync
	if sync {
		opts = strata.Sync
	}
	return b.Commit(opts)
}

// Flush checkpoints: dirty pages go to the page store, the WAL is
// truncated, and the directory's size is that of the data.
func (e *strataEngine) Flush() error { return e.db.Checkpoint() }

// Close closes the database once, and gives GOMEMLIMIT back its value
// from before the engine raised it: an engine opened after this one (the
// reopen after a load) starts from that, not from a limit that still
// holds this pool's metadata.
func (e *strataEngine) Close() error {
	e.closeOnce.Do(func() {
		e.stopTrace()
		close(e.stopLimit)
		<-e.limitDone
		if e.limitBase > 0 {
			debug.SetMemoryLimit(e.limitBase)
		}
		e.closeErr = e.db.Close()
		e.closeLog()
	})
	return e.closeErr
}

// CheckpointEpoch: see CheckpointWatcher.
func (e *strataEngine) CheckpointEpoch() uint64 { return hooks.CheckpointEpoch(e.db) }

func (e *strataEngine) StartMeasurement() {
	st := e.db.Stats()
	e.baseMu.Lock()
	e.base = &st
	e.baseMu.Unlock()
}

// Metrics reports the buffer pool's outcomes (hit ratios over the measured
// phase when StartMeasurement was called), its compressed share R, the
// page store's traffic and compression, and codec timings.
func (e *strataEngine) Metrics() map[string]float64 {
	st := e.db.Stats()
	e.baseMu.Lock()
	base := e.base
	e.baseMu.Unlock()
	var b strata.Stats
	if base != nil {
		b = *base
	}
	m := map[string]float64{}
	poolMetrics(m, st.Pool, b.Pool)
	storeMetrics(m, st.Store, b.Store)
	m["wal.bytes"] = float64(st.WAL.Bytes - b.WAL.Bytes)
	m["wal.syncs"] = float64(st.WAL.Syncs - b.WAL.Syncs)
	m["db.checkpoints"] = float64(st.Checkpoints - b.Checkpoints)
	// How long the measured phase's checkpoints took, and for how long of
	// that commits waited (the freeze): a writer stall shows here.
	m["db.checkpoint_ms"] = float64(st.CheckpointTime-b.CheckpointTime) / 1e6
	m["db.checkpoint_freeze_ms"] = float64(st.CheckpointFreezeTime-b.CheckpointFreezeTime) / 1e6
	// Pages commits replaced (copied or removed): of the checkpoint's
	// tree, and of pages written since (copies of pages a reader held
	// under an open snapshot); and the versions commits kept for open
	// snapshots instead of copying the path.
	m["db.replaced_durable"] = float64(st.ReplacedDurable - b.ReplacedDurable)
	m["db.replaced_fresh"] = float64(st.ReplacedFresh - b.ReplacedFresh)
	m["db.snapshot_versions"] = float64(st.SnapshotVersions - b.SnapshotVersions)
	// Commits that waited for a checkpoint because they replaced pages
	// faster than checkpoints freed the old copies, and for how long.
	m["db.space_waits"] = float64(st.SpaceWaits - b.SpaceWaits)
	m["db.space_wait_ms"] = float64(st.SpaceWaitTime-b.SpaceWaitTime) / 1e6
	m["db.pending_free_pages"] = float64(st.PendingFreePages)
	// Pages commits read before taking the writer lock (prefetch.go).
	m["db.prefetched_pages"] = float64(st.PrefetchedPages - b.PrefetchedPages)
	// Commits queued before their pages were read, the transactions that
	// applied them, and the commits that waited for room (deferred.go).
	m["db.deferred_commits"] = float64(st.DeferredCommits - b.DeferredCommits)
	m["db.deferred_groups"] = float64(st.DeferredGroups - b.DeferredGroups)
	m["db.deferred_waits"] = float64(st.DeferredWaits - b.DeferredWaits)
	if st.FlashCache.Enabled {
		flashMetrics(m, st.FlashCache, b.FlashCache)
	}
	return m
}

// flashMetrics reports the flash cache over the measured phase.
func flashMetrics(m map[string]float64, f, b flashcache.Stats) {
	lookups, hits := f.Lookups-b.Lookups, f.Hits-b.Hits
	m["flash.lookups"] = float64(lookups)
	m["flash.hits"] = float64(hits)
	if lookups > 0 {
		m["flash.hit_ratio"] = float64(hits) / float64(lookups)
	}
	m["flash.admitted"] = float64(f.Admitted - b.Admitted)
	m["flash.offered"] = float64(f.Offered - b.Offered)
	m["flash.dropped_busy"] = float64(f.DroppedBusy - b.DroppedBusy)
	m["flash.dropped_rate"] = float64(f.DroppedRate - b.DroppedRate)
	m["flash.dropped_full"] = float64(f.DroppedFull - b.DroppedFull)
	m["flash.rejected"] = float64(f.Rejected - b.Rejected)
	m["flash.written"] = float64(f.Written - b.Written)
	m["flash.bytes_written"] = float64(f.BytesWritten - b.BytesWritten)
	m["flash.evictions"] = float64(f.Evictions - b.Evictions)
	m["flash.invalidations"] = float64(f.Invalidations - b.Invalidations)
	m["flash.stale_rejects"] = float64(f.StaleRejects - b.StaleRejects)
	m["flash.read_timeouts"] = float64(f.ReadTimeouts - b.ReadTimeouts)
	m["flash.errors"] = float64(f.ReadErrors + f.WriteErrors + f.ChecksumErrors - b.ReadErrors - b.WriteErrors - b.ChecksumErrors)
	m["flash.entries"] = float64(f.Entries)
	m["flash.memory_bytes"] = float64(f.MemoryBytes)
	m["flash.read_us"] = float64(f.TFlashRead.Nanoseconds()) / 1e3
	m["flash.rebuild_ms"] = float64(f.RebuildTime.Microseconds()) / 1e3
}

func poolMetrics(m map[string]float64, p, b bufferpool.Stats) {
	hitsU := p.HitsUncompressed - b.HitsUncompressed
	hitsC := p.HitsCompressed - b.HitsCompressed
	misses := p.Misses - b.Misses
	m["pool.hits_uncompressed"] = float64(hitsU)
	m["pool.hits_compressed"] = float64(hitsC)
	m["pool.misses"] = float64(misses)
	if all := hitsU + hitsC + misses; all > 0 {
		m["pool.hit_ratio_uncompressed"] = float64(hitsU) / float64(all)
		m["pool.hit_ratio_compressed"] = float64(hitsC) / float64(all)
		m["pool.miss_ratio"] = float64(misses) / float64(all)
	}
	m["pool.share_r"] = p.Share
	m["pool.controller_steps"] = float64(p.ControllerSteps - b.ControllerSteps)
	m["pool.controller_jumps"] = float64(p.ControllerJumps - b.ControllerJumps)
	m["pool.controller_jumps_kept"] = float64(p.JumpsKept - b.JumpsKept)
	m["pool.miss_probes"] = float64(p.MissProbes - b.MissProbes)
	m["pool.controller_trials"] = float64(p.ControllerTrials - b.ControllerTrials)
	m["pool.trials_kept"] = float64(p.TrialsKept - b.TrialsKept)
	// Since the open, warm-up included: a trial usually runs there.
	m["pool.controller_trials_total"] = float64(p.ControllerTrials)
	m["pool.trials_kept_total"] = float64(p.TrialsKept)
	m["pool.frames_trials_total"] = float64(p.FramesTrials)
	m["pool.frames_trials_kept_total"] = float64(p.FramesTrialsKept)
	m["pool.target_share_r"] = p.TargetShare
	if p.Auto {
		m["pool.auto_r"] = 1
	} else {
		m["pool.auto_r"] = 0
	}
	m["pool.evictions"] = float64(p.Evictions - b.Evictions)
	m["pool.demotions"] = float64(p.Demotions - b.Demotions)
	m["pool.free_demotions"] = float64(p.FreeDemotions - b.FreeDemotions)
	m["pool.literal_demotions"] = float64(p.LiteralDemotions - b.LiteralDemotions)
	m["pool.kept_images"] = float64(p.KeptImages - b.KeptImages)
	m["pool.image_evictions"] = float64(p.ImageEvictions - b.ImageEvictions)
	m["pool.redundant_evictions"] = float64(p.RedundantEvictions - b.RedundantEvictions)
	m["pool.redundant_images"] = float64(p.RedundantImages)
	m["pool.moved_pieces"] = float64(p.MovedPieces - b.MovedPieces)
	m["pool.discards"] = float64(p.Discards - b.Discards)
	m["pool.read_ahead_reads"] = float64(p.ReadAheadReads - b.ReadAheadReads)
	m["pool.read_ahead_pages"] = float64(p.ReadAheadPages - b.ReadAheadPages)
	m["pool.read_ahead_hits"] = float64(p.ReadAheadHits - b.ReadAheadHits)
	m["pool.read_ahead_unused"] = float64(p.ReadAheadUnused - b.ReadAheadUnused)
	if p.Compressing {
		m["pool.compressing"] = 1
	} else {
		m["pool.compressing"] = 0
	}
	m["pool.time_per_access_us"] = float64(p.TimePerAccess.Nanoseconds()) / 1e3
	m["pool.t_image_hit_us"] = float64(p.TImageHit.Nanoseconds()) / 1e3
	m["pool.t_miss_us"] = float64(p.TMiss.Nanoseconds()) / 1e3
	m["pool.model_share_r"] = p.ModelShare
	m["pool.inner_pages"] = float64(p.InnerPages)
	m["pool.share_ceiling"] = p.ShareCeiling
	m["pool.model_t_read_us"] = float64(p.ModelTRead.Nanoseconds()) / 1e3
	m["pool.resident_bytes"] = float64(p.ResidentBytes)
	m["pool.meta_bytes"] = float64(p.MetaBytes)
	m["pool.promotions"] = float64(p.Promotions - b.Promotions)
	m["pool.flushes"] = float64(p.Flushes - b.Flushes)
	m["pool.hot_skips"] = float64(p.HotSkips - b.HotSkips)
	m["pool.free_buffer_waits"] = float64(p.FreeBufferWaits - b.FreeBufferWaits)
	m["pool.frame_bytes"] = float64(p.FrameBytes)
	m["pool.image_bytes"] = float64(p.ImageBytes)
	m["pool.t_disk_read_us"] = float64(p.TDiskRead.Nanoseconds()) / 1e3
	m["pool.t_decompress_us"] = float64(p.TDecom.Nanoseconds()) / 1e3
	m["pool.t_compress_us"] = float64(p.TComp.Nanoseconds()) / 1e3
}

func storeMetrics(m map[string]float64, s, b pagestore.Stats) {
	m["store.bytes_written"] = float64(s.FileBytesWritten - b.FileBytesWritten)
	m["store.pages_written"] = float64(s.PagesWritten - b.PagesWritten)
	m["store.pages_read"] = float64(s.PagesRead - b.PagesRead)
	m["store.disk_reads"] = float64(s.DiskReads - b.DiskReads)
	m["store.extent_reads"] = float64(s.ExtentReads - b.ExtentReads)
	m["store.extent_pages"] = float64(s.ExtentPages - b.ExtentPages)
	if reads := s.ExtentReads - b.ExtentReads; reads > 0 {
		m["store.mean_extent_read_us"] = float64((s.ExtentReadTime - b.ExtentReadTime).Nanoseconds()) / float64(reads) / 1e3
	}
	if reads := s.DiskReads - b.DiskReads; reads > 0 {
		m["store.mean_disk_read_us"] = float64((s.DiskReadTime - b.DiskReadTime).Nanoseconds()) / float64(reads) / 1e3
	}
	m["store.compression_ratio"] = s.CompressionRatio
	if s.DictionaryID != 0 {
		m["store.dictionary"] = 1 // new pages are compressed with a dictionary
	}
	m["store.logical_bytes"] = float64(s.LogicalBytes) // the model's data size DS
	m["store.stored_bytes"] = float64(s.StoredBytes)
	m["store.physical_bytes"] = float64(s.PhysicalBytes)
	m["store.garbage_bytes"] = float64(s.GarbageBytes)
	for _, c := range s.Codecs {
		name := "codec." + c.Codec.String()
		if c.Compressions > 0 {
			m[name+".compress_us"] = float64(c.MeanCompress().Nanoseconds()) / 1e3
			m[name+".compress_ratio"] = float64(c.CompressedIn) / float64(max(c.CompressedOut, 1))
		}
		if c.Decompressions > 0 {
			m[name+".decompress_us"] = float64(c.MeanDecompress().Nanoseconds()) / 1e3
		}
	}
}

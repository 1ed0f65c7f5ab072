package server

// Prometheus metrics. Per-command figures are recorded on the hot path
// through handles resolved when the command table is built (no label
// lookups per command). The engine's figures are read from DB.Stats once
// per scrape by engineCollector, so they cost nothing between scrapes.

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stratadb/strata"
	"github.com/stratadb/strata/internal/codec"
)

// Metrics is the server's Prometheus registry.
type Metrics struct {
	reg                *prometheus.Registry
	cmdLatency         *prometheus.HistogramVec
	cmdErrors          *prometheus.CounterVec
	unknown            prometheus.Counter
	connections        prometheus.Counter
	rejected           prometheus.Counter
	checkpointDuration prometheus.Histogram
}

// NewMetrics registers the server's and db's metrics. clients reports the
// number of connected clients at scrape time (nil: not exported).
func NewMetrics(db *strata.DB, clients func() float64) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		cmdLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "strata", Subsystem: "server", Name: "command_duration_seconds",
			Help:    "Time to run a command, from dispatch to reply written to the output buffer; _count is the commands run.",
			Buckets: prometheus.ExponentialBuckets(2e-6, 2, 22), // 2 µs .. 4 s
		}, []string{"cmd"}),
		cmdErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "strata", Subsystem: "server", Name: "command_errors_total",
			Help: "Commands answered with an error reply.",
		}, []string{"cmd"}),
		unknown: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "strata", Subsystem: "server", Name: "unknown_commands_total",
			Help: "Commands not in the command table.",
		}),
		connections: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "strata", Subsystem: "server", Name: "connections_total",
			Help: "Connections accepted.",
		}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "strata", Subsystem: "server", Name: "rejected_connections_total",
			Help: "Connections refused because max clients was reached.",
		}),
		checkpointDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "strata", Name: "checkpoint_duration_seconds",
			Help:    "Checkpoints the server ran (SAVE, shutdown). The engine's background checkpoints are counted in strata_checkpoints_total but not timed: DB.Stats has no duration.",
			Buckets: prometheus.ExponentialBuckets(1e-3, 2, 16),
		}),
	}
	m.reg.MustRegister(m.cmdLatency, m.cmdErrors, m.unknown, m.connections, m.rejected, m.checkpointDuration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&engineCollector{db: db})
	if clients != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "strata", Subsystem: "server", Name: "connected_clients", Help: "Open client connections.",
		}, clients))
	}
	return m
}

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveCheckpoint records a checkpoint the server ran.
func (m *Metrics) ObserveCheckpoint(d time.Duration) { m.checkpointDuration.Observe(d.Seconds()) }

// Registry is the registry, for tests and embedding.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// engineCollector exports DB.Stats at scrape time.
type engineCollector struct{ db *strata.DB }

// engineMetric is one figure of strata.Stats.
type engineMetric struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(st *strata.Stats) float64
}

func newDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("strata_"+name, help, labels, nil)
}

func secs(d time.Duration) float64 { return d.Seconds() }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

var (
	gauge   = prometheus.GaugeValue
	counter = prometheus.CounterValue
)

// engineMetrics are the unlabelled figures.
var engineMetrics = []engineMetric{
	// Buffer pool: document 000's quantities.
	{newDesc("pool_hit_ratio_uncompressed", "H_u: share of page accesses served by the uncompressed tier, since open."), gauge, func(st *strata.Stats) float64 { return st.Pool.HitRatioU }},
	{newDesc("pool_hit_ratio_compressed", "H_c: share of page accesses served by the compressed tier (one decompression), since open."), gauge, func(st *strata.Stats) float64 { return st.Pool.HitRatioC }},
	{newDesc("pool_miss_ratio", "Share of page accesses that read the page store, since open."), gauge, func(st *strata.Stats) float64 { return st.Pool.MissRatio }},
	{newDesc("pool_hits_uncompressed_total", "Page accesses served by the uncompressed tier."), counter, func(st *strata.Stats) float64 { return float64(st.Pool.HitsUncompressed) }},
	{newDesc("pool_hits_compressed_total", "Page accesses served by the compressed tier."), counter, func(st *strata.Stats) float64 { return float64(st.Pool.HitsCompressed) }},
	{newDesc("pool_misses_total", "Page accesses that read the page store."), counter, func(st *strata.Stats) float64 { return float64(st.Pool.Misses) }},
	{newDesc("pool_compressed_share", "R: the share of the cache given to compressed pages, as applied."), gauge, func(st *strata.Stats) float64 { return st.Pool.Share }},
	{newDesc("pool_compressed_share_target", "The R the controller wants (what auto mode would choose in fixed mode)."), gauge, func(st *strata.Stats) float64 { return st.Pool.TargetShare }},
	{newDesc("pool_compressed_share_auto", "1 if R is tuned online."), gauge, func(st *strata.Stats) float64 { return b2f(st.Pool.Auto) }},
	{newDesc("pool_compressed_share_ceiling", "The highest R auto mode applies: it leaves the frames 1.5 times the cached inner pages."), gauge, func(st *strata.Stats) float64 { return st.Pool.ShareCeiling }},
	{newDesc("pool_inner_pages", "Cached pages marked as the index's inner pages."), gauge, func(st *strata.Stats) float64 { return float64(st.Pool.InnerPages) }},
	{newDesc("pool_disk_read_seconds", "T_disk_read: moving average of one page store read."), gauge, func(st *strata.Stats) float64 { return secs(st.Pool.TDiskRead) }},
	{newDesc("pool_decompress_seconds", "T_decom: moving average of one page decompression."), gauge, func(st *strata.Stats) float64 { return secs(st.Pool.TDecom) }},
	{newDesc("pool_compress_seconds", "T_comp: moving average of one demoted page's compression."), gauge, func(st *strata.Stats) float64 { return secs(st.Pool.TComp) }},
	{newDesc("pool_controller_steps_total", "Adjustments of R by the controller."), counter, func(st *strata.Stats) float64 { return float64(st.Pool.ControllerSteps) }},
	{newDesc("pool_controller_jumps_total", "Adjustments that lowered R at once, predicted from the depth of image hits below the frames."), counter, func(st *strata.Stats) float64 { return float64(st.Pool.ControllerJumps) }},
	{newDesc("pool_controller_jumps_kept_total", "Jumps of R kept after a trial measured them."), counter, func(st *strata.Stats) float64 { return float64(st.Pool.JumpsKept) }},
	{newDesc("pool_miss_probes_total", "Store reads the controller made to measure a miss while nothing missed."), counter, func(st *strata.Stats) float64 { return float64(st.Pool.MissProbes) }},
	{newDesc("pool_cache_bytes", "The buffer pool's memory budget."), gauge, func(st *strata.Stats) float64 { return float64(st.Pool.CacheSize) }},
	{newDesc("pool_frame_bytes", "Bytes of uncompressed frames in use."), gauge, func(st *strata.Stats) float64 { return float64(st.Pool.FrameBytes) }},
	{newDesc("pool_image_bytes", "Bytes of compressed images in use."), gauge, func(st *strata.Stats) float64 { return float64(st.Pool.ImageBytes) }},
	{newDesc("pool_meta_bytes", "Bytes of pool metadata."), gauge, func(st *strata.Stats) float64 { return float64(st.Pool.MetaBytes) }},
	{newDesc("pool_resident_bytes", "Frame and image memory backed by RAM."), gauge, func(st *strata.Stats) float64 { return float64(st.Pool.ResidentBytes) }},
	{newDesc("pool_evictions_total", "Frames evicted (demoted or dropped)."), counter, func(st *strata.Stats) float64 { return float64(st.Pool.Evictions) }},
	{newDesc("pool_demotions_total", "Frames compressed into the compressed tier."), counter, func(st *strata.Stats) float64 { return float64(st.Pool.Demotions) }},
	{newDesc("pool_promotions_total", "Images decompressed into frames."), counter, func(st *strata.Stats) float64 { return float64(st.Pool.Promotions) }},
	{newDesc("pool_image_evictions_total", "Compressed images evicted."), counter, func(st *strata.Stats) float64 { return float64(st.Pool.ImageEvictions) }},
	{newDesc("pool_dirty_pages", "Dirty pages in the pool."), gauge, func(st *strata.Stats) float64 { return float64(st.Pool.DirtyPages) }},
	{newDesc("pool_flushes_total", "Pages written back by the page cleaners."), counter, func(st *strata.Stats) float64 { return float64(st.Pool.Flushes) }},
	{newDesc("pool_free_buffer_waits_total", "Page accesses that found no clean frame and waited."), counter, func(st *strata.Stats) float64 { return float64(st.Pool.FreeBufferWaits) }},
	{newDesc("pool_free_buffer_wait_seconds_total", "Time spent in those waits."), counter, func(st *strata.Stats) float64 { return secs(st.Pool.FreeBufferWaited) }},
	{newDesc("pool_load_errors_total", "Page loads that failed."), counter, func(st *strata.Stats) float64 { return float64(st.Pool.LoadErrors) }},
	// Page store.
	{newDesc("store_live_pages", "Pages in the store."), gauge, func(st *strata.Stats) float64 { return float64(st.Store.LivePages) }},
	{newDesc("store_logical_bytes", "Live pages × page size."), gauge, func(st *strata.Stats) float64 { return float64(st.Store.LogicalBytes) }},
	{newDesc("store_stored_bytes", "Compressed payload bytes of live pages."), gauge, func(st *strata.Stats) float64 { return float64(st.Store.StoredBytes) }},
	{newDesc("store_physical_bytes", "Bytes of segment files and the checkpoint."), gauge, func(st *strata.Stats) float64 { return float64(st.Store.PhysicalBytes) }},
	{newDesc("store_garbage_bytes", "Segment bytes not holding a live record."), gauge, func(st *strata.Stats) float64 { return float64(st.Store.GarbageBytes) }},
	{newDesc("store_segments", "Segment files."), gauge, func(st *strata.Stats) float64 { return float64(st.Store.Segments) }},
	{newDesc("store_compression_ratio", "r = logical bytes / stored bytes."), gauge, func(st *strata.Stats) float64 { return st.Store.CompressionRatio }},
	{newDesc("store_dictionary_memory_bytes", "Part of the cache size charged to the compression dictionary's codec state (0: none)."), gauge, func(st *strata.Stats) float64 { return float64(st.DictionaryMemory) }},
	{newDesc("store_space_amplification", "Physical bytes / live record bytes."), gauge, func(st *strata.Stats) float64 { return st.Store.SpaceAmplification }},
	{newDesc("store_write_amplification", "File bytes written / page bytes written by callers."), gauge, func(st *strata.Stats) float64 { return st.Store.WriteAmplification }},
	{newDesc("store_disk_reads_total", "Page reads that went to a segment file."), counter, func(st *strata.Stats) float64 { return float64(st.Store.DiskReads) }},
	{newDesc("store_disk_read_seconds_total", "Time of those reads."), counter, func(st *strata.Stats) float64 { return secs(st.Store.DiskReadTime) }},
	{newDesc("store_pages_written_total", "Page records written."), counter, func(st *strata.Stats) float64 { return float64(st.Store.PagesWritten) }},
	{newDesc("store_file_bytes_written_total", "Bytes written to segment and checkpoint files."), counter, func(st *strata.Stats) float64 { return float64(st.Store.FileBytesWritten) }},
	{newDesc("store_syncs_total", "Page store fsyncs."), counter, func(st *strata.Stats) float64 { return float64(st.Store.Syncs) }},
	{newDesc("store_checkpoints_total", "Page store checkpoints."), counter, func(st *strata.Stats) float64 { return float64(st.Store.Checkpoints) }},
	{newDesc("store_cleaner_passes_total", "Cleaning passes."), counter, func(st *strata.Stats) float64 { return float64(st.Store.CleanerPasses) }},
	{newDesc("store_cleaner_relocated_bytes_total", "Bytes the cleaner copied."), counter, func(st *strata.Stats) float64 { return float64(st.Store.CleanerRelocatedBytes) }},
	// WAL.
	{newDesc("wal_records_total", "WAL records written."), counter, func(st *strata.Stats) float64 { return float64(st.WAL.Records) }},
	{newDesc("wal_bytes_total", "WAL bytes written."), counter, func(st *strata.Stats) float64 { return float64(st.WAL.Bytes) }},
	{newDesc("wal_writes_total", "WAL writes (one per group-commit batch)."), counter, func(st *strata.Stats) float64 { return float64(st.WAL.Writes) }},
	{newDesc("wal_syncs_total", "WAL fsyncs."), counter, func(st *strata.Stats) float64 { return float64(st.WAL.Syncs) }},
	{newDesc("wal_files", "WAL files now."), gauge, func(st *strata.Stats) float64 { return float64(st.WAL.Files) }},
	// Database.
	{newDesc("checkpoints_total", "Database checkpoints (background, SAVE, shutdown)."), counter, func(st *strata.Stats) float64 { return float64(st.Checkpoints) }},
	{newDesc("snapshots", "Open snapshots."), gauge, func(st *strata.Stats) float64 { return float64(st.Snapshots) }},
	{newDesc("pending_free_pages", "Pages of replaced versions waiting to be freed."), gauge, func(st *strata.Stats) float64 { return float64(st.PendingFreePages) }},
}

var (
	opsDesc          = newDesc("db_operations_total", "Database API calls by kind.", "op")
	decomByCodecDesc = newDesc("pool_decompress_seconds_by_codec", "T_decom per codec of the pages decompressed.", "codec")
	codecTimeDesc    = newDesc("store_codec_seconds_total", "Page store compression and decompression time per codec.", "codec", "direction")
)

func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range engineMetrics {
		ch <- m.desc
	}
	ch <- opsDesc
	ch <- decomByCodecDesc
	ch <- codecTimeDesc
	for _, d := range flashCacheDescs {
		ch <- d
	}
}

func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.db.Stats()
	for _, m := range engineMetrics {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.value(&st))
	}
	for op, n := range map[string]int64{"get": st.Gets, "set": st.Sets, "delete": st.Deletes, "batch": st.Batches, "transaction": st.Transactions, "iterator": st.Iterators} {
		ch <- prometheus.MustNewConstMetric(opsDesc, counter, float64(n), op)
	}
	for id, d := range st.Pool.TDecomByCodec {
		ch <- prometheus.MustNewConstMetric(decomByCodecDesc, gauge, d.Seconds(), codecName(id))
	}
	for _, cs := range st.Store.Codecs {
		ch <- prometheus.MustNewConstMetric(codecTimeDesc, counter, cs.CompressTime.Seconds(), codecName(cs.Codec), "compress")
		ch <- prometheus.MustNewConstMetric(codecTimeDesc, counter, cs.DecompressTime.Seconds(), codecName(cs.Codec), "decompress")
	}
	collectFlashCache(&st, ch)
}

func codecName(id codec.ID) string {
	if s := id.String(); s != "" {
		return s
	}
	return strconv.Itoa(int(id))
}

// The flash cache (Options.FlashCache: a second-level cache of compressed
// pages on a faster device): emitted only when the database has one.
var flashCacheMetrics = []engineMetric{
	{newDesc("flash_cache_active", "1 while the flash cache serves reads and admits pages (0 once disabled by errors)."), gauge, func(st *strata.Stats) float64 { return b2f(st.FlashCache.Active) }},
	{newDesc("flash_cache_lookups_total", "Pages missing from RAM looked up in the flash cache."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.Lookups) }},
	{newDesc("flash_cache_hits_total", "Pages served from the flash cache."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.Hits) }},
	{newDesc("flash_cache_misses_total", "Lookups read from the page store instead."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.Misses) }},
	{newDesc("flash_cache_hit_ratio", "Flash cache hits / lookups, since open."), gauge, func(st *strata.Stats) float64 { return st.FlashCache.HitRatio }},
	{newDesc("flash_cache_read_seconds", "T_flash_read: mean time of one flash cache read."), gauge, func(st *strata.Stats) float64 { return secs(st.FlashCache.TFlashRead) }},
	{newDesc("flash_cache_read_timeouts_total", "Flash reads abandoned after the read timeout (read from the page store)."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.ReadTimeouts) }},
	{newDesc("flash_cache_bypassed_total", "Lookups that skipped a stalled or busy flash."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.Bypassed) }},
	{newDesc("flash_cache_admitted_total", "Clean pages leaving RAM queued for the flash."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.Admitted) }},
	{newDesc("flash_cache_dropped_busy_total", "Admissions dropped because the flash writer was behind (queue full)."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.DroppedBusy) }},
	{newDesc("flash_cache_dropped_rate_total", "Admissions dropped by the flash write-rate budget."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.DroppedRate) }},
	{newDesc("flash_cache_rejected_total", "Pages the admission policy did not admit."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.Rejected) }},
	{newDesc("flash_cache_written_total", "Images written to the flash."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.Written) }},
	{newDesc("flash_cache_bytes_written_total", "Bytes written to the flash cache's regions."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.BytesWritten) }},
	{newDesc("flash_cache_evictions_total", "Images dropped because their region was reused."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.Evictions) }},
	{newDesc("flash_cache_invalidations_total", "Images dropped because their page was rewritten or freed."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.Invalidations) }},
	{newDesc("flash_cache_stale_rejects_total", "Queued images not written because their page changed meanwhile."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.StaleRejects) }},
	{newDesc("flash_cache_read_errors_total", "Flash reads that failed."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.ReadErrors) }},
	{newDesc("flash_cache_write_errors_total", "Flash writes that failed."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.WriteErrors) }},
	{newDesc("flash_cache_checksum_errors_total", "Flash entries that failed verification."), counter, func(st *strata.Stats) float64 { return float64(st.FlashCache.ChecksumErrors) }},
	{newDesc("flash_cache_bad_regions", "Flash regions disabled by errors."), gauge, func(st *strata.Stats) float64 { return float64(st.FlashCache.BadRegions) }},
	{newDesc("flash_cache_entries", "Images on flash the index names."), gauge, func(st *strata.Stats) float64 { return float64(st.FlashCache.Entries) }},
	{newDesc("flash_cache_memory_bytes", "RAM of the flash cache (index, queue, buffers), part of the cache size."), gauge, func(st *strata.Stats) float64 { return float64(st.FlashCache.MemoryBytes) }},
	{newDesc("flash_cache_rebuild_seconds", "Time the last open took to rebuild the flash cache's index."), gauge, func(st *strata.Stats) float64 { return secs(st.FlashCache.RebuildTime) }},
	{newDesc("flash_cache_rebuilt_entries", "Entries the last open rebuilt (0: it started cold)."), gauge, func(st *strata.Stats) float64 { return float64(st.FlashCache.Rebuilt) }},
}

var flashCacheDescs = func() []*prometheus.Desc {
	d := make([]*prometheus.Desc, len(flashCacheMetrics))
	for i, m := range flashCacheMetrics {
		d[i] = m.desc
	}
	return d
}()

func collectFlashCache(st *strata.Stats, ch chan<- prometheus.Metric) {
	if !st.FlashCache.Enabled {
		return
	}
	for _, m := range flashCacheMetrics {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.value(st))
	}
}

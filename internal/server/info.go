package server

// INFO: Redis's sections (those that mean something for Strata) and a
// "# Strata" section with the engine's statistics.

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/stratadb/strata"
)

// Version is Strata's version as the server reports it.
var Version = "0.1.0-dev"

// infoSections are the sections of a plain INFO, in order. "keyspace"
// counts the keys, which reads every leaf, so it is only in "all" and
// when asked for by name.
var infoSections = []string{"server", "clients", "memory", "persistence", "stats", "replication", "strata"}

func cmdInfo(s *Server, r *reply, args [][]byte) {
	want := map[string]bool{}
	if len(args) == 1 {
		for _, sec := range infoSections {
			want[sec] = true
		}
	}
	for _, a := range args[1:] {
		switch sec := strings.ToLower(string(a)); sec {
		case "all", "everything", "default":
			for _, sec := range infoSections {
				want[sec] = true
			}
			if sec != "default" {
				want["keyspace"] = true
			}
		default:
			want[sec] = true
		}
	}
	var b strings.Builder
	st := s.db.Stats()
	section := func(name string, fn func(kv func(k string, v any))) {
		if !want[strings.ToLower(name)] {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		fmt.Fprintf(&b, "# %s\r\n", name)
		fn(func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) })
	}
	section("Server", func(kv func(string, any)) {
		kv("redis_version", RedisVersion)
		kv("strata_version", Version)
		kv("redis_mode", "standalone")
		kv("os", runtime.GOOS+" "+runtime.GOARCH)
		kv("arch_bits", strconv.Itoa(32<<(^uint(0)>>63)))
		kv("go_version", runtime.Version())
		kv("process_id", os.Getpid())
		kv("tcp_port", s.cfg.Port)
		up := time.Since(s.started)
		kv("uptime_in_seconds", int64(up/time.Second))
		kv("uptime_in_days", int64(up/(24*time.Hour)))
		kv("executable", executable())
		kv("strata_dir", s.db.Dir())
	})
	section("Clients", func(kv func(string, any)) {
		kv("connected_clients", s.clients.Load())
		kv("maxclients", s.cfg.MaxClients)
	})
	section("Memory", func(kv func(string, any)) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		kv("used_memory", ms.HeapAlloc)
		kv("used_memory_human", humanBytes(int64(ms.HeapAlloc)))
		kv("used_memory_rss", ms.Sys)
		kv("maxmemory", 0)
		kv("maxmemory_policy", "noeviction")
		kv("strata_cache_size", st.Pool.CacheSize)
		kv("strata_cache_resident", st.Pool.ResidentBytes)
	})
	section("Persistence", func(kv func(string, any)) {
		kv("loading", 0)
		kv("aof_enabled", 1)
		kv("appendfsync", s.cfg.AppendFsync)
		kv("rdb_changes_since_last_save", 0)
		kv("strata_checkpoints", st.Checkpoints)
		kv("strata_wal_bytes", st.WAL.Bytes)
		kv("strata_wal_files", st.WAL.Files)
	})
	section("Stats", func(kv func(string, any)) {
		kv("total_connections_received", s.totalConns.Load())
		kv("total_commands_processed", s.commandsRun.Load())
		kv("rejected_connections", s.rejectedConns.Load())
		kv("keyspace_hits", s.keyspaceHits.Load())
		kv("keyspace_misses", s.keyspaceMisses.Load())
		kv("expired_keys", 0)
		kv("evicted_keys", 0)
	})
	section("Replication", func(kv func(string, any)) {
		kv("role", "master")
		kv("connected_slaves", 0)
	})
	section("Strata", func(kv func(string, any)) {
		for _, f := range StatsFields(st) {
			kv(f.Name, f.Value)
		}
	})
	section("Keyspace", func(kv func(string, any)) {
		n, err := countKeys(s.db)
		if err == nil && n > 0 {
			kv("db0", fmt.Sprintf("keys=%d,expires=0,avg_ttl=0", n))
		}
	})
	r.bulkString(b.String())
}

func executable() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2fK", float64(n)/(1<<10))
	}
	return strconv.FormatInt(n, 10) + "B"
}

// StatsField is one named figure of strata.Stats, as INFO's Strata section
// and `strata stats` print it.
type StatsField struct {
	Name  string
	Value any
	Help  string
}

// StatsFields flattens the engine's statistics into named figures. Times
// are in microseconds, ratios are plain numbers.
func StatsFields(st strata.Stats) []StatsField {
	us := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e3, 'f', 2, 64) }
	f3 := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
	p, s, w := st.Pool, st.Store, st.WAL
	return []StatsField{
		{"gets", st.Gets, "point reads"},
		{"sets", st.Sets, "DB.Set calls"},
		{"deletes", st.Deletes, "DB.Delete calls"},
		{"batches", st.Batches, "batch commits"},
		{"transactions", st.Transactions, "Update commits"},
		{"iterators", st.Iterators, "iterators opened"},
		{"checkpoints", st.Checkpoints, "database checkpoints"},
		{"txid", st.TxID, "last committed transaction"},
		{"snapshots", st.Snapshots, "open snapshots"},
		{"pending_free_pages", st.PendingFreePages, "pages of old versions waiting to be freed"},
		{"space_waits", st.SpaceWaits, "commits that waited for a checkpoint to free old copies"},
		{"cache_size", p.CacheSize, "buffer pool budget, bytes"},
		{"page_size", s.PageSize, "bytes"},
		{"hit_ratio_uncompressed", f3(p.HitRatioU), "H_u"},
		{"hit_ratio_compressed", f3(p.HitRatioC), "H_c"},
		{"miss_ratio", f3(p.MissRatio), "accesses that read the store"},
		{"hits_uncompressed", p.HitsUncompressed, ""},
		{"hits_compressed", p.HitsCompressed, ""},
		{"misses", p.Misses, ""},
		{"compressed_share", f3(p.Share), "R, applied"},
		{"compressed_share_target", f3(p.TargetShare), "R the controller wants"},
		{"compressed_share_auto", p.Auto, "R tuned online"},
		{"compressed_share_ceiling", f3(p.ShareCeiling), "highest R auto applies (frames for the inner pages)"},
		{"inner_pages", p.InnerPages, "cached inner pages of the index"},
		{"t_disk_read_us", us(p.TDiskRead), "T_disk_read, moving average"},
		{"t_decom_us", us(p.TDecom), "T_decom, moving average"},
		{"t_comp_us", us(p.TComp), "T_comp, moving average"},
		{"controller_steps", p.ControllerSteps, ""},
		{"controller_jumps", p.ControllerJumps, ""},
		{"controller_jumps_kept", p.JumpsKept, "jumps a trial kept"},
		{"miss_probes", p.MissProbes, ""},
		{"frame_bytes", p.FrameBytes, "uncompressed tier in use"},
		{"image_bytes", p.ImageBytes, "compressed tier in use"},
		{"meta_bytes", p.MetaBytes, "pool metadata"},
		{"frames", p.Frames, ""},
		{"images", p.Images, ""},
		{"evictions", p.Evictions, ""},
		{"demotions", p.Demotions, "frames compressed into the compressed tier"},
		{"promotions", p.Promotions, ""},
		{"dirty_pages", p.DirtyPages, ""},
		{"flushes", p.Flushes, "pages written back"},
		{"free_buffer_waits", p.FreeBufferWaits, "accesses that waited for a clean frame"},
		{"free_buffer_wait_us", us(p.FreeBufferWaited), "total"},
		{"live_pages", s.LivePages, ""},
		{"logical_bytes", s.LogicalBytes, "pages × page size"},
		{"stored_bytes", s.StoredBytes, "compressed payloads"},
		{"physical_bytes", s.PhysicalBytes, "segment files and checkpoint"},
		{"garbage_bytes", s.GarbageBytes, "reclaimable by the cleaner"},
		{"segments", s.Segments, ""},
		{"compression_ratio", f3(s.CompressionRatio), "logical / stored"},
		{"dictionary", fmt.Sprintf("%08x", s.DictionaryID), "zstd dictionary new pages are compressed with (00000000: none)"},
		{"space_amplification", f3(s.SpaceAmplification), "physical / live records"},
		{"write_amplification", f3(s.WriteAmplification), "file bytes / page bytes written"},
		{"store_disk_reads", s.DiskReads, ""},
		{"store_mean_disk_read_us", us(s.MeanDiskRead()), ""},
		{"store_checkpoints", s.Checkpoints, ""},
		{"cleaner_passes", s.CleanerPasses, ""},
		{"direct_io", s.DirectIO, ""},
		{"wal_records", w.Records, ""},
		{"wal_bytes", w.Bytes, ""},
		{"wal_writes", w.Writes, "group-commit writes"},
		{"wal_syncs", w.Syncs, ""},
		{"wal_files", w.Files, ""},
	}
}

package main

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/stratadb/strata/internal/bench"
	"github.com/stratadb/strata/internal/flashcache"
)

// benchFlags are the flags of `strata bench` and `strata bench sweep`.
type benchFlags struct {
	tableSize    int64
	threads      int
	rate         float64
	duration     time.Duration
	warmup       time.Duration
	cache        string
	codec        string
	pageSize     string
	share        string
	fillFactor   int
	directIO     bool
	dictionary   bool
	syncWrites   bool
	device       string
	flashCache   string
	flashDevice  string
	flashAdmit   string
	flashRate    string
	engines      string
	workloads    string
	distribution string
	dataset      string
	memLimit     string
	jsonPath     string
	dir          string
	keep         bool
	seed         uint64
	peersDir     string
	peersBin     string // gone: refused with a pointer to --peers-dir
	strataBin    string
}

// The default run takes about a minute on two cores: 3 M sysbench rows
// (~190 bytes each, ~570 MiB uncompressed, ~4.5× the 128 MiB cache; about
// half that compressed, so still well over the cache), loaded in ~15 s,
// then 5 s of warm-up and 25 s measured.
const (
	defaultTableSize = 3_000_000
	defaultCache     = "128MiB"
	defaultWorkload  = "oltp_read_only"
)

// registerRunFlags adds the flags that describe one run (everything but the
// engine and workload selection, which bench and bench sweep differ on).
func (f *benchFlags) registerRunFlags(fl *pflag.FlagSet) {
	fl.Int64Var(&f.tableSize, "table-size", defaultTableSize, "rows loaded before the run")
	fl.IntVar(&f.threads, "threads", runtime.NumCPU(), "client goroutines of the measured phase")
	fl.Float64Var(&f.rate, "rate", 0, "transactions a second in all, paced (an open loop: latency counts from when each was due); 0: as many as the engine serves")
	fl.DurationVar(&f.duration, "duration", 25*time.Second, "measured time per run")
	fl.DurationVar(&f.warmup, "warmup", 5*time.Second, "warm-up before the measured time (not measured)")
	fl.StringVar(&f.cache, "cache", defaultCache, "cache budget of every engine (64MiB, 1GiB, ...; K/M/G and KiB/MiB/GiB are binary, KB/MB/GB decimal)")
	fl.StringVar(&f.codec, "codec", "", "Strata codec (none, lz4, zstd, zstd-N, deflate, ...; default: Strata's); peers use their default compression unless they can match it")
	fl.StringVar(&f.pageSize, "page-size", "", "Strata page size (4KiB..64KiB; default: Strata's)")
	fl.StringVar(&f.share, "r", "auto", "Strata's compressed share R of the cache: auto (tuned online) or a number in [0, 1]")
	fl.IntVar(&f.fillFactor, "fill-factor", 0, "Strata's fill factor for sequential inserts, percent (10..100; 0: Strata's default)")
	fl.BoolVar(&f.directIO, "direct-io", true, "Strata reads and writes pages with O_DIRECT")
	fl.BoolVar(&f.dictionary, "dictionary", true, "Strata trains a zstd dictionary on its first pages and keeps it if it pays (false: Options.DisableDictionary); loads made either way are kept apart")
	fl.BoolVar(&f.syncWrites, "sync", false, "make each commit of the measured phase durable (fsync)")
	fl.StringVar(&f.device, "device", "none", "simulated device latency for Strata only: none, hdd, ssd, nvme (results are labelled simulated)")
	fl.StringVar(&f.flashCache, "flash-cache", "", "size of a Strata flash cache (second-level cache of clean pages, a file next to the data; none if empty)")
	fl.StringVar(&f.flashDevice, "flash-device", "ssd", "simulated device of the flash cache: none, hdd, ssd, nvme (results are labelled simulated)")
	fl.StringVar(&f.flashAdmit, "flash-admission", "all", "flash cache admission policy: all (every clean page leaving RAM) or second (pages leaving RAM a second time)")
	fl.StringVar(&f.flashRate, "flash-write-rate", "", "flash cache write budget per second (e.g. 32MiB; none for unlimited; default: Strata's)")
	fl.StringVar(&f.distribution, "distribution", "", "key distribution: "+strings.Join(bench.Distributions, ", ")+" (default: the workload's own, uniform for sysbench, zipfian for YCSB)")
	fl.StringVar(&f.dataset, "dataset", "sysbench", "data set: "+strings.Join(bench.Datasets, ", "))
	fl.StringVar(&f.memLimit, "mem-limit", "", fmt.Sprintf(
		"memory limit of each engine's process, page cache included (cgroup); none to disable. "+
			"Default: %.2f × cache + %s (Go runtime, code, buffers). GOMEMLIMIT is %.0f%% of it for every engine",
		memLimitCacheFactor, formatSize(memLimitAllowance), 100*goMemLimitFraction))
	fl.StringVar(&f.dir, "dir", "", "work directory (default: a temporary directory in the current one, not /tmp which is often a tmpfs; removed afterwards)")
	fl.BoolVar(&f.keep, "keep", false, "keep the engines' directories; a later run in the same --dir reuses data of the same rows, seed and engine options, loaded by any build (its results then say when the loading build was another)")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the data and the request streams")
	fl.StringVar(&f.strataBin, "strata-bin", "", "path of strata-bench-child, which runs Strata's engine without the strata binary's other code (default: next to strata, then $PATH, then built in a source checkout, else strata itself)")
	fl.StringVar(&f.peersDir, "peers-dir", "", "directory of the peers' binaries strata-bench-bbolt, strata-bench-pebble and strata-bench-badger (default: next to strata, then $PATH, then built from bench/ in a source checkout)")
	fl.StringVar(&f.peersBin, "peers-bin", "", "gone: see --peers-dir")
	fl.MarkHidden("peers-bin")
}

// specTemplate is a RunSpec with everything but Engine, Workload and
// Config.Dir filled from the flags, validated.
func (f *benchFlags) specTemplate() (bench.RunSpec, error) {
	var s bench.RunSpec
	cache, err := parseSize(f.cache)
	if err != nil {
		return s, fmt.Errorf("--cache: %w", err)
	}
	if cache <= 0 {
		return s, fmt.Errorf("--cache %s: must be positive", f.cache)
	}
	var pageSize int64
	if f.pageSize != "" {
		if pageSize, err = parseSize(f.pageSize); err != nil {
			return s, fmt.Errorf("--page-size: %w", err)
		}
	}
	share, err := parseShare(f.share)
	if err != nil {
		return s, fmt.Errorf("--r: %w", err)
	}
	switch {
	case f.tableSize <= 0:
		return s, fmt.Errorf("--table-size %d: must be positive", f.tableSize)
	case f.threads <= 0:
		return s, fmt.Errorf("--threads %d: must be positive", f.threads)
	case f.rate < 0 || math.IsNaN(f.rate) || math.IsInf(f.rate, 0):
		return s, fmt.Errorf("--rate %v: want transactions a second, or 0 for no pacing", f.rate)
	case f.duration <= 0:
		return s, fmt.Errorf("--duration %v: must be positive", f.duration)
	case f.warmup < 0:
		return s, fmt.Errorf("--warmup %v: must not be negative", f.warmup)
	case f.fillFactor != 0 && (f.fillFactor < 10 || f.fillFactor > 100):
		return s, fmt.Errorf("--fill-factor %d: want 10..100 (or 0 for the default)", f.fillFactor)
	case !slices.Contains([]string{"none", "hdd", "ssd", "nvme"}, f.device):
		return s, fmt.Errorf("--device %q: want none, hdd, ssd or nvme", f.device)
	case !slices.Contains(bench.Datasets, f.dataset):
		return s, fmt.Errorf("--dataset %q: want one of %s", f.dataset, strings.Join(bench.Datasets, ", "))
	case f.distribution != "" && !slices.Contains(bench.Distributions, f.distribution):
		return s, fmt.Errorf("--distribution %q: want one of %s", f.distribution, strings.Join(bench.Distributions, ", "))
	}
	var flashSize, flashRate int64
	if f.flashCache != "" {
		if flashSize, err = parseSize(f.flashCache); err != nil || flashSize <= 0 {
			return s, fmt.Errorf("--flash-cache %q: want a positive size", f.flashCache)
		}
		if !slices.Contains([]string{"none", "hdd", "ssd", "nvme"}, f.flashDevice) {
			return s, fmt.Errorf("--flash-device %q: want none, hdd, ssd or nvme", f.flashDevice)
		}
		if _, err := flashcache.ParseAdmission(f.flashAdmit); err != nil {
			return s, fmt.Errorf("--flash-admission: %w", err)
		}
		switch f.flashRate {
		case "":
		case "none", "unlimited":
			flashRate = -1
		default:
			if flashRate, err = parseSize(f.flashRate); err != nil || flashRate <= 0 {
				return s, fmt.Errorf("--flash-write-rate %q: want a positive size per second, or none", f.flashRate)
			}
		}
	}
	return bench.RunSpec{
		Config: bench.Config{
			FlashCache:      flashSize,
			FlashDevice:     f.flashDevice,
			FlashAdmission:  f.flashAdmit,
			FlashWriteRate:  flashRate,
			CacheBytes:      cache,
			Codec:           f.codec,
			PageSize:        int(pageSize),
			CompressedShare: share,
			FillFactor:      f.fillFactor,
			DirectIO:        f.directIO,
			NoDictionary:    !f.dictionary,
			Device:          f.device,
			SyncWrites:      f.syncWrites,
		},
		Dataset:      f.dataset,
		Distribution: f.distribution,
		TableSize:    f.tableSize,
		Seed:         f.seed,
		Threads:      f.threads,
		Rate:         f.rate,
		Duration:     f.duration,
		Warmup:       f.warmup,
	}, nil
}

// memLimitBytes reads --mem-limit: 0 means the default rule (applied per
// run, from its cache size), -1 none.
func (f *benchFlags) memLimitBytes() (int64, error) {
	switch strings.ToLower(strings.TrimSpace(f.memLimit)) {
	case "":
		return 0, nil
	case "none", "off":
		return -1, nil
	}
	b, err := parseSize(f.memLimit)
	if err != nil {
		return 0, fmt.Errorf("--mem-limit: %w", err)
	}
	if b <= 0 {
		return 0, fmt.Errorf("--mem-limit %s: must be positive (or none)", f.memLimit)
	}
	return b, nil
}

// parseWorkloads reads a comma list of workload names.
func parseWorkloads(s string) ([]string, error) {
	ws := splitList(s)
	if len(ws) == 0 {
		return nil, fmt.Errorf("no workload given")
	}
	for _, w := range ws {
		if !knownWorkload(w) {
			return nil, fmt.Errorf("unknown workload %q (known: %s)", w, workloadList())
		}
	}
	return ws, nil
}

// Package poolbench runs buffer-pool experiments: random point reads of
// sysbench-style pages through a bufferpool.Pool over a page store on a
// simulated device, at a fixed compressed share R or with automatic tuning.
// The R sweeps of docs/BUFFERPOOL.md and the controller tests use it.
//
// Devices are simulated (vfs.NewLatency over an in-memory file system), so
// every result from this package is labelled simulated.
package poolbench

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/sysbench"
	"github.com/stratadb/strata/internal/vfs"
)

// Scenario is a device and a codec, as in document 000's experiments.
type Scenario struct {
	Name       string
	Device     vfs.Device
	Codec      string
	PageSize   int
	FillFactor int // of the sysbench pages (the rest is zero)
}

// The two scenarios of document 000 where the best R differs most.
var (
	// FastDeviceSlowCodec: NVMe-like latency, zlib at InnoDB's default
	// level: decompression costs more than a read, so R should be low.
	FastDeviceSlowCodec = Scenario{Name: "nvme+deflate", Device: vfs.NVMe, Codec: "deflate-6", PageSize: 16 << 10, FillFactor: 70}
	// SlowDeviceFastCodec: HDD-like latency, LZ4: a read costs thousands
	// of decompressions, so R should be high.
	SlowDeviceFastCodec = Scenario{Name: "hdd+lz4", Device: vfs.HDD, Codec: "lz4", PageSize: 16 << 10, FillFactor: 70}
)

// Dataset is a page store image in memory, built once per scenario.
type Dataset struct {
	Scenario Scenario
	FS       *vfs.MemFS
	Pages    int
	Stats    pagestore.Stats
}

// Build writes pages sysbench pages for sc into an in-memory store.
func Build(sc Scenario, pages int, seed uint64) (*Dataset, error) {
	c, err := codec.Parse(sc.Codec)
	if err != nil {
		return nil, err
	}
	fs := vfs.NewMem()
	s, err := pagestore.Open("db", pagestore.Options{FS: fs, PageSize: sc.PageSize, Codec: c, DisableBackground: true})
	if err != nil {
		return nil, err
	}
	rows := uint64(pages * sysbench.RowsPerPage(sc.PageSize, sc.FillFactor))
	n := 0
	err = sysbench.Pages(seed, rows, sc.PageSize, sc.FillFactor, func(no uint64, page []byte) error {
		if n >= pages {
			return nil
		}
		n++
		_, _, err := s.WritePage(pagestore.PageID(no), page)
		return err
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	ds := &Dataset{Scenario: sc, FS: fs, Pages: n, Stats: s.Stats()}
	return ds, s.Close()
}

// Config is one run.
type Config struct {
	CacheSize  int64
	Share      float64 // fixed R; negative for automatic tuning
	Skewed     bool    // 80% of reads to 20% of pages; else uniform
	Threads    int
	Warmup     time.Duration
	Duration   time.Duration
	Partitions int
	Seed       uint64
	// ControllerInterval overrides the pool's default.
	ControllerInterval time.Duration
	// Logger is the pool's (bufferpool.Options.Logger); nil discards.
	Logger *slog.Logger
}

// Result of one run.
type Result struct {
	Share       float64 // R at the end (fixed, or where auto settled)
	Auto        bool
	Ops         int64
	OpsPerSec   float64
	Pool        bufferpool.Stats // at the end of the measured phase
	HitRatioU   float64          // during the measured phase
	HitRatioC   float64
	MissRatio   float64
	ShareTrace  []float64 // R sampled every Duration/20 during warm-up and run (auto)
	DeviceReads int64
}

// Run opens the dataset on the scenario's simulated device, warms the pool
// up, and measures read throughput.
func Run(ds *Dataset, cfg Config) (Result, error) {
	var res Result
	dev := vfs.NewLatency(ds.FS, ds.Scenario.Device)
	c, err := codec.Parse(ds.Scenario.Codec)
	if err != nil {
		return res, err
	}
	// The store's codec is also the one demoted pages are compressed with.
	s, err := pagestore.Open("db", pagestore.Options{FS: dev, Codec: c, DisableBackground: true})
	if err != nil {
		return res, err
	}
	defer s.Close()
	opts := bufferpool.Options{CacheSize: cfg.CacheSize, Partitions: cfg.Partitions, ControllerInterval: cfg.ControllerInterval,
		Logger: cfg.Logger}
	if cfg.Share >= 0 {
		opts.FixedShare, opts.CompressedShare = true, cfg.Share
	}
	pool, err := bufferpool.New(s, opts)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	res.Auto = cfg.Share < 0

	var ops atomic.Int64
	var stop atomic.Bool
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	hot := max(ds.Pages/5, 1)
	for t := 0; t < cfg.Threads; t++ {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(t)))
			for !stop.Load() {
				var id int
				if cfg.Skewed && rng.IntN(10) < 8 {
					id = rng.IntN(hot)
				} else if cfg.Skewed {
					id = hot + rng.IntN(ds.Pages-hot)
				} else {
					id = rng.IntN(ds.Pages)
				}
				pg, err := pool.Get(pagestore.PageID(id), bufferpool.Shared)
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					stop.Store(true)
					return
				}
				pg.Release()
				ops.Add(1)
			}
		}(t)
	}
	sample := func(d time.Duration) {
		step := max(d/20, time.Millisecond)
		for end := time.Now().Add(d); time.Now().Before(end) && !stop.Load(); {
			time.Sleep(step)
			if res.Auto {
				res.ShareTrace = append(res.ShareTrace, pool.Share())
			}
		}
	}
	sample(cfg.Warmup)
	before := pool.Stats()
	reads0 := dev.Stats().Reads
	ops0 := ops.Load()
	start := time.Now()
	sample(cfg.Duration)
	elapsed := time.Since(start)
	res.Ops = ops.Load() - ops0
	after := pool.Stats()
	res.DeviceReads = dev.Stats().Reads - reads0
	stop.Store(true)
	wg.Wait()
	if firstErr != nil {
		return res, firstErr
	}
	if res.Ops == 0 {
		return res, errors.New("poolbench: no operation completed")
	}
	res.OpsPerSec = float64(res.Ops) / elapsed.Seconds()
	res.Pool = after
	res.Share = after.Share
	hu := after.HitsUncompressed - before.HitsUncompressed
	hc := after.HitsCompressed - before.HitsCompressed
	m := after.Misses - before.Misses
	if tot := float64(hu + hc + m); tot > 0 {
		res.HitRatioU, res.HitRatioC, res.MissRatio = float64(hu)/tot, float64(hc)/tot, float64(m)/tot
	}
	return res, nil
}

// Model returns the paper's model for the dataset at this cache size, with
// the times measured in res.
func Model(ds *Dataset, cacheSize int64, res Result) bufferpool.Model {
	return bufferpool.Model{
		Alpha:     float64(ds.Stats.StoredBytes) / float64(ds.Stats.LogicalBytes),
		Beta:      float64(cacheSize) / float64(ds.Stats.LogicalBytes),
		TDecom:    res.Pool.TDecom.Seconds(),
		TDiskRead: res.Pool.TDiskRead.Seconds(),
		Exclusive: true,
	}
}

// String summarises a result on one line.
func (r Result) String() string {
	mode := fmt.Sprintf("R=%.2f", r.Share)
	if r.Auto {
		mode = fmt.Sprintf("auto(R=%.2f)", r.Share)
	}
	return fmt.Sprintf("%-14s %9.0f ops/s  H_u %.3f H_c %.3f miss %.3f  T_disk %v T_decom %v T_comp %v",
		mode, r.OpsPerSec, r.HitRatioU, r.HitRatioC, r.MissRatio, r.Pool.TDiskRead, r.Pool.TDecom, r.Pool.TComp)
}

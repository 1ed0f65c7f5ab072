package pagestore

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// The benchmarks in this file measure the store's write amplification and
// its write path's scaling with writers. They use only the exported API, so
// that the same file measures an older version of the store side by side.

// countingFS counts the bytes written to segment files and to every other
// file (the checkpoint and the page-map log) of the store.
type countingFS struct {
	vfs.FS
	segBytes, mapBytes atomic.Int64
}

type countingFile struct {
	vfs.File
	n *atomic.Int64
}

func (c *countingFS) OpenFile(name string, flag int, perm os.FileMode, opts vfs.OpenOptions) (vfs.File, error) {
	f, err := c.FS.OpenFile(name, flag, perm, opts)
	if err != nil {
		return nil, err
	}
	n := &c.mapBytes
	if strings.HasSuffix(filepath.Base(name), segmentSuffix) {
		n = &c.segBytes
	}
	return &countingFile{File: f, n: n}, nil
}

func (f *countingFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	f.n.Add(int64(n))
	return n, err
}

// pagePicker draws the page ids of a workload.
type pagePicker func(rng *rand.Rand) PageID

func uniformPicker(n int) pagePicker {
	return func(rng *rand.Rand) PageID { return PageID(rng.IntN(n)) }
}

// hotSetPicker sends hotShare of the writes to the first hotPages share of
// the pages (90/10: 90% of writes to 10% of the pages).
func hotSetPicker(n int, hotShare, hotPages float64) pagePicker {
	hot := max(1, int(float64(n)*hotPages))
	return func(rng *rand.Rand) PageID {
		if rng.Float64() < hotShare {
			return PageID(rng.IntN(hot))
		}
		return PageID(hot + rng.IntN(n-hot))
	}
}

// zipfPicker draws ids from a Zipf distribution with exponent exp (> 1),
// the most frequent ids scattered over the id space.
func zipfPicker(n int, exp float64) pagePicker {
	var z *rand.Zipf
	var zrng *rand.Rand
	return func(rng *rand.Rand) PageID {
		if z == nil {
			zrng = rand.New(rand.NewPCG(rng.Uint64(), 3))
			z = rand.NewZipf(zrng, exp, 1, uint64(n-1))
		}
		return PageID((z.Uint64() * 0x9E3779B1) % uint64(n))
	}
}

// BenchmarkWriteAmp measures write amplification under random page
// rewrites with the live data held at a fixed share of the space: the
// benchmark cleans (Clean, one pass at a time) whenever live record bytes
// fall below that share of the physical bytes, so every policy is compared
// at the same space. Pages are 4 KiB, stored raw (codec none) so that page
// bytes are record bytes; segments are 1 MiB (250 records), the store holds
// 16,384 live pages (64 MiB); the figures are over 8 rewrites of every
// page after a warm-up of 4. Metrics:
//
//   - wamp: bytes written to segment and map files per page byte the
//     caller wrote;
//   - reloc/B: bytes the cleaner relocated per page byte written;
//   - map-B/ckpt: bytes written to the checkpoint and page-map log files per
//     checkpoint;
//   - live: the live share of the physical bytes at the end.
//
// go test -run '^$' -bench WriteAmp -benchtime 1x ./internal/pagestore/
func BenchmarkWriteAmp(b *testing.B) {
	const pages = 16384
	for _, dist := range []struct {
		name string
		pick pagePicker
	}{
		{"uniform", uniformPicker(pages)},
		{"hot90-10", hotSetPicker(pages, 0.9, 0.1)},
		{"zipf1.1", zipfPicker(pages, 1.1)},
	} {
		for _, live := range []float64{0.5, 0.8} {
			b.Run(fmt.Sprintf("%s/live=%.0f%%", dist.name, live*100), func(b *testing.B) {
				for b.Loop() {
					runWriteAmp(b, pages, dist.pick, live)
				}
			})
		}
	}
}

func runWriteAmp(b *testing.B, pages int, pick pagePicker, live float64) {
	const pageSize = 4096
	fs := &countingFS{FS: vfs.NewMem()}
	opts := Options{
		FS:                fs,
		PageSize:          pageSize,
		Codec:             mustCodec(b, "none"),
		SegmentSize:       1 << 20,
		WriteBufferSize:   64 << 10,
		CleanerThreshold:  0.01, // the benchmark decides when to clean
		DisableBackground: true,
	}
	s, err := Open("db", opts)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	page := make([]byte, pageSize)
	rng := rand.New(rand.NewPCG(1, 2))
	write := func(id PageID) {
		page[0], page[1] = byte(id), byte(id>>8)
		if _, _, err := s.WritePage(id, page); err != nil {
			b.Fatal(err)
		}
	}
	clean := func() {
		for {
			st := s.Stats()
			if float64(st.LiveRecordBytes) >= live*float64(st.PhysicalBytes) {
				return
			}
			res, err := s.Clean()
			if err != nil {
				b.Fatal(err)
			}
			if res.SegmentsCleaned == 0 {
				return
			}
		}
	}
	for id := PageID(0); id < PageID(pages); id++ {
		write(id)
	}
	if err := s.Checkpoint(); err != nil {
		b.Fatal(err)
	}
	var seg0, map0, reloc0, ckpt0 int64
	for phase, n := range []int{4 * pages, 8 * pages} {
		if phase == 1 {
			st := s.Stats()
			seg0, map0, reloc0, ckpt0 = fs.segBytes.Load(), fs.mapBytes.Load(), st.CleanerRelocatedBytes, st.Checkpoints
		}
		for i := 0; i < n; i++ {
			write(pick(rng))
			if i%64 == 63 {
				if err := s.Sync(); err != nil {
					b.Fatal(err)
				}
				clean()
			}
		}
	}
	st := s.Stats()
	caller := float64(8 * pages * pageSize)
	segB, mapB := fs.segBytes.Load()-seg0, fs.mapBytes.Load()-map0
	ckpts := st.Checkpoints - ckpt0
	b.ReportMetric(float64(segB+mapB)/caller, "wamp")
	b.ReportMetric(float64(st.CleanerRelocatedBytes-reloc0)/caller, "reloc/B")
	b.ReportMetric(float64(mapB)/caller, "map/B")
	if ckpts > 0 {
		b.ReportMetric(float64(mapB)/float64(ckpts), "map-B/ckpt")
	}
	b.ReportMetric(float64(ckpts), "ckpts")
	b.ReportMetric(float64(st.LiveRecordBytes)/float64(st.PhysicalBytes), "live")
}

// BenchmarkParallelWrite measures the write path with 1, 2 and 4 writer
// goroutines doing what a copy-on-write B+tree does: allocate a page id,
// write the page, free the page it replaces. Each writer syncs every 256
// pages. With 16 KiB sysbench pages; codec lz4 (sysbench rows do not
// compress with it, so pages are stored raw and the store's own costs
// dominate) and zstd (the default, where compression dominates). ns/op is
// per page, all writers together. Devices: disk is the real file system
// (direct I/O where supported); ssd-sim is an in-memory file system behind
// the simulated SATA SSD of vfs.SATASSD (50 µs + 500 MB/s per write, 1 ms
// per fsync) with 4 MiB segments, where the device's time dominates.
//
// go test -run '^$' -bench 'ParallelWrite/disk' -benchtime 2s -count 3 ./internal/pagestore/
// go test -run '^$' -bench 'ParallelWrite/ssd-sim' -benchtime 4000x -count 3 ./internal/pagestore/
func BenchmarkParallelWrite(b *testing.B) {
	pages := benchPages(b, 64)
	for _, dev := range []string{"disk", "ssd-sim"} {
		for _, c := range []string{"lz4", "zstd"} {
			for _, writers := range []int{1, 2, 4} {
				b.Run(fmt.Sprintf("%s/%s/writers=%d", dev, c, writers), func(b *testing.B) {
					opts := benchOptions(c, b)
					dir := b.TempDir()
					if dev == "ssd-sim" {
						// 4 MiB segments: the in-memory file system
						// copies a file on its first write after a sync.
						opts.FS = vfs.NewLatency(vfs.NewMem(), vfs.SATASSD)
						opts.SegmentSize = 4 << 20
						dir = "db"
					}
					s, err := Open(dir, opts)
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					parallelWrite(b, s, pages, writers)
				})
			}
		}
	}
}

func parallelWrite(b *testing.B, s *Store, pages [][]byte, writers int) {
	b.SetBytes(benchPageSize)
	b.ReportAllocs()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	b.ResetTimer()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			prev := PageID(0)
			have := false
			for i := 0; next.Add(1) <= int64(b.N); i++ {
				id, err := s.Allocate()
				if err == nil {
					_, _, err = s.WritePage(id, pages[(w+i)%len(pages)])
				}
				if err == nil && have {
					err = s.Free(prev)
				}
				if err == nil && i%256 == 255 {
					err = s.Sync()
				}
				if err != nil {
					failed.Store(&err)
					return
				}
				prev, have = id, true
			}
		}(w)
	}
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
}

// BenchmarkCheckpointBytes measures the bytes a checkpoint writes to the
// checkpoint and map log files when 100 random pages changed since the
// previous one, for stores of 16,384 and 262,144 pages (page maps of 192 KiB
// and 3 MiB). Pages are all zeros but a stamp, compressed with lz4, so the
// store is small.
//
// go test -run '^$' -bench CheckpointBytes -benchtime 200x ./internal/pagestore/
func BenchmarkCheckpointBytes(b *testing.B) {
	for _, pages := range []int{16384, 262144} {
		b.Run(fmt.Sprintf("pages=%d", pages), func(b *testing.B) {
			fs := &countingFS{FS: vfs.NewMem()}
			s, err := Open("db", Options{FS: fs, PageSize: 4096, Codec: mustCodec(b, "lz4"), SegmentSize: 4 << 20, DisableBackground: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			page := make([]byte, 4096)
			for id := 0; id < pages; id++ {
				page[0], page[1], page[2] = byte(id), byte(id>>8), byte(id>>16)
				if _, _, err := s.WritePage(PageID(id), page); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Checkpoint(); err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 1))
			map0 := fs.mapBytes.Load()
			for b.Loop() {
				for i := 0; i < 100; i++ {
					id := rng.IntN(pages)
					page[0], page[1], page[2], page[3] = byte(id), byte(id>>8), byte(id>>16), byte(i+1)
					if _, _, err := s.WritePage(PageID(id), page); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Checkpoint(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(fs.mapBytes.Load()-map0)/float64(b.N), "map-B/ckpt")
		})
	}
}

// BenchmarkReadDuringWrites measures the latency of page reads while one
// writer streams pages (lz4: stored raw) to the store, on the real file
// system with direct I/O where supported, so reads go to the device. A read
// that has to wait for the store's lock while a 1 MiB buffer is being
// written waits for that write. Reports the median and the 99th percentile
// of the read latency.
//
// go test -run '^$' -bench ReadDuringWrites -benchtime 2000x -count 3 ./internal/pagestore/
func BenchmarkReadDuringWrites(b *testing.B) {
	pages := benchPages(b, 64)
	s, err := Open(b.TempDir(), benchOptions("lz4", b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n = 1024
	for id := 0; id < n; id++ {
		if _, _, err := s.WritePage(PageID(id), pages[id%len(pages)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			// Rewrite pages n..2n-1: the store stays small.
			if _, _, err := s.WritePage(PageID(n+i%n), pages[i%len(pages)]); err != nil {
				b.Error(err)
				return
			}
		}
	}()
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, benchPageSize)
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		if err := s.ReadPage(PageID(rng.IntN(n)), buf); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	stop.Store(true)
	wg.Wait()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

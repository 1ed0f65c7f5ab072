//go:build linux

package vfs

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkDirectRead reads random 4 KiB blocks with direct I/O from the
// file STRATA_VFS_BENCH_FILE names (skipped without it: the figure means
// something only on a real device, and on a file larger than what the
// device or its host caches), through AIO and through pread(2), from one
// and two goroutines. It reports each read's mean latency (us/read) and,
// through AIO, ReadOverhead's mean over the process's reads so far, to set
// beside fio's latency on the same file:
//
//	STRATA_VFS_BENCH_FILE=/path/to/a/large/file go test ./internal/vfs -run '^$' -bench DirectRead -benchtime 40000x
//	fio --name=r --filename=/path/to/a/large/file --readonly --rw=randread --bs=4k --direct=1 --ioengine=psync --numjobs=1 --runtime=8 --time_based
func BenchmarkDirectRead(b *testing.B) {
	name := os.Getenv("STRATA_VFS_BENCH_FILE")
	if name == "" {
		b.Skip("STRATA_VFS_BENCH_FILE not set")
	}
	for _, mode := range []string{"aio", "pread"} {
		for _, g := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", mode, g), func(b *testing.B) {
				if mode == "aio" && asyncReads() == nil {
					b.Skip("Linux AIO not available here")
				}
				disableAsync.Store(mode == "pread")
				defer disableAsync.Store(false)
				f, err := OS().OpenFile(name, os.O_RDONLY, 0, OpenOptions{Direct: true})
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				if !f.Direct() {
					b.Skip("no direct I/O on this file system")
				}
				size, err := f.Size()
				if err != nil {
					b.Fatal(err)
				}
				blocks := size / BlockSize
				if blocks == 0 {
					b.Fatalf("%s: smaller than a block", name)
				}
				per := max(b.N/g, 1)
				var wg sync.WaitGroup
				b.ResetTimer()
				start := time.Now()
				for i := range g {
					wg.Add(1)
					go func() {
						defer wg.Done()
						buf := AlignedBuffer(BlockSize)
						rng := rand.New(rand.NewPCG(uint64(i), 7))
						for range per {
							if _, err := f.ReadAt(buf, rng.Int64N(blocks)*BlockSize); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.ReportMetric(float64(elapsed.Nanoseconds())/1e3/float64(per), "us/read")
				if d, ok := ReadOverhead(); ok && mode == "aio" {
					b.ReportMetric(float64(d.Nanoseconds())/1e3, "us-overhead/read")
				}
			})
		}
	}
}

// BenchmarkDirectReadBesideWork is BenchmarkDirectRead as a cache's misses
// meet it: two goroutines (GOMAXPROCS 2 on the machines measured), each
// alternating a stretch of CPU work (a cache's hits) with a random 4 KiB
// direct read, through AIO with the reader parked on the poller, through
// AIO polling for the completion (OpenOptions.PollReads), and through
// pread(2). It reports each read's mean latency (us/read):
//
//	STRATA_VFS_BENCH_FILE=/path/to/a/large/file go test ./internal/vfs -run '^$' -bench DirectReadBesideWork -benchtime 4000x
func BenchmarkDirectReadBesideWork(b *testing.B) {
	name := os.Getenv("STRATA_VFS_BENCH_FILE")
	if name == "" {
		b.Skip("STRATA_VFS_BENCH_FILE not set")
	}
	for _, mode := range []string{"aio-parked", "aio-polled", "pread"} {
		for _, work := range []time.Duration{0, 50 * time.Microsecond, 300 * time.Microsecond, time.Millisecond} {
			b.Run(fmt.Sprintf("%s/work=%v", mode, work), func(b *testing.B) {
				if mode != "pread" && asyncReads() == nil {
					b.Skip("Linux AIO not available here")
				}
				disableAsync.Store(mode == "pread")
				defer disableAsync.Store(false)
				f, err := OS().OpenFile(name, os.O_RDONLY, 0, OpenOptions{Direct: true, PollReads: mode == "aio-polled"})
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				size, err := f.Size()
				if err != nil {
					b.Fatal(err)
				}
				blocks := size / BlockSize
				if !f.Direct() || blocks == 0 {
					b.Skip("no direct I/O on this file system, or an empty file")
				}
				per := max(b.N/2, 1)
				var reading, slow atomic.Int64 // nanoseconds spent in reads; reads over 1 ms
				var wg sync.WaitGroup
				b.ResetTimer()
				for i := range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						buf := AlignedBuffer(BlockSize)
						rng := rand.New(rand.NewPCG(uint64(i), 11))
						for range per {
							busyFor(work)
							start := time.Now()
							if _, err := f.ReadAt(buf, rng.Int64N(blocks)*BlockSize); err != nil {
								b.Error(err)
								return
							}
							took := time.Since(start)
							reading.Add(int64(took))
							if took > time.Millisecond {
								slow.Add(1)
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(reading.Load())/1e3/float64(2*per), "us/read")
				b.ReportMetric(float64(slow.Load())/float64(2*per), "slow/read")
			})
		}
	}
}

// busyFor keeps the CPU busy for d.
func busyFor(d time.Duration) {
	end := time.Now().Add(d)
	x := uint64(1)
	for time.Now().Before(end) {
		for i := range uint64(64) {
			x = x*6364136223846793005 + i
		}
	}
	sink.Store(x)
}

var sink atomic.Uint64

package strata

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stratadb/strata/internal/sysbench"
)

// loadRows writes n sysbench rows (8-byte big-endian id → the row's k, c
// and pad) in batches of 1000 and checkpoints.
func loadRows(b *testing.B, db *DB, n int) {
	b.Helper()
	g := sysbench.NewGenerator(1, uint64(n))
	var row sysbench.Row
	batch := db.NewBatch()
	key := make([]byte, 8)
	val := make([]byte, 0, sysbench.RowSize)
	for id := 1; id <= n; id++ {
		g.Row(uint64(id), &row)
		binary.BigEndian.PutUint64(key, uint64(id))
		val = row.Encode(val[:0])
		if err := batch.Set(key, val[8:]); err != nil {
			b.Fatal(err)
		}
		if batch.Len() == 1000 || id == n {
			if err := batch.Commit(NoSync); err != nil {
				b.Fatal(err)
			}
			batch.Reset()
		}
	}
	if err := db.Checkpoint(); err != nil {
		b.Fatal(err)
	}
}

func openBench(b *testing.B, cache int64) *DB {
	b.Helper()
	db, err := Open(b.TempDir(), &Options{CacheSize: cache})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// BenchmarkGet: random point reads, all data cached (100k rows, 64 MiB
// cache) and with the data 8× the cache (4 MiB cache; reads go to disk
// with direct I/O).
func BenchmarkGet(b *testing.B) {
	for _, c := range []struct {
		name  string
		rows  int
		cache int64
	}{{"cached", 100_000, 64 << 20}, {"data=8xcache", 180_000, 4 << 20}} {
		b.Run(c.name, func(b *testing.B) {
			db := openBench(b, c.cache)
			loadRows(b, db, c.rows)
			rng := rand.New(rand.NewPCG(1, 1))
			key := make([]byte, 8)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for b.Loop() {
				binary.BigEndian.PutUint64(key, 1+rng.Uint64N(uint64(c.rows)))
				if _, err := db.Get(key); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			st := db.Stats()
			b.ReportMetric(st.Pool.HitRatioU+st.Pool.HitRatioC, "hit-ratio")
			b.ReportMetric(float64(st.Store.PhysicalBytes)/float64(c.cache), "data/cache")
		})
	}
}

// BenchmarkGetParallel: cached point reads from GOMAXPROCS goroutines
// (run with -cpu 1,2,...): how the read path scales with threads that all
// pass through the same root and inner pages.
func BenchmarkGetParallel(b *testing.B) {
	db := openBench(b, 64<<20)
	const rows = 100_000
	loadRows(b, db, rows)
	var seed atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(seed.Add(1), 1))
		key := make([]byte, 8)
		for pb.Next() {
			binary.BigEndian.PutUint64(key, 1+rng.Uint64N(rows))
			if _, err := db.Get(key); err != nil {
				b.Error(err) // not Fatal: this is not the benchmark's goroutine
				return
			}
		}
	})
}

// BenchmarkBatchWrite: batches of 100 random-key sets of sysbench rows,
// without and with an fsync per batch.
func BenchmarkBatchWrite(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			db := openBench(b, 64<<20)
			g := sysbench.NewGenerator(2, 1<<20)
			var row sysbench.Row
			rng := rand.New(rand.NewPCG(2, 2))
			key := make([]byte, 8)
			val := make([]byte, 0, sysbench.RowSize)
			opts := NoSync
			if sync {
				opts = Sync
			}
			batch := db.NewBatch()
			b.SetBytes(100 * (8 + sysbench.RowSize - 8))
			b.ReportAllocs()
			for b.Loop() {
				batch.Reset()
				for i := 0; i < 100; i++ {
					id := 1 + rng.Uint64N(1<<20)
					g.Row(id, &row)
					binary.BigEndian.PutUint64(key, id)
					val = row.Encode(val[:0])
					batch.Set(key, val[8:])
				}
				if err := batch.Commit(opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScan: a seek to a random key and the 100 rows after it
// (sysbench's range query), cached.
func BenchmarkScan(b *testing.B) {
	db := openBench(b, 64<<20)
	const rows = 100_000
	loadRows(b, db, rows)
	rng := rand.New(rand.NewPCG(3, 3))
	key := make([]byte, 8)
	b.ReportAllocs()
	for b.Loop() {
		binary.BigEndian.PutUint64(key, 1+rng.Uint64N(rows-100))
		it, err := db.NewIter(nil)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for it.SeekGE(key); it.Valid() && n < 100; it.Next() {
			n++
		}
		it.Close()
		if n != 100 {
			b.Fatalf("scanned %d rows", n)
		}
	}
}

// BenchmarkLargeValue: set (default SyncAlways: one WAL fsync per set) and
// get of values stored in overflow pages, 64 MiB cache. MB/s is value bytes.
func BenchmarkLargeValue(b *testing.B) {
	for _, size := range []int{16 << 10, 256 << 10, 4 << 20} {
		value := largeValue(1, size)
		b.Run(fmt.Sprintf("set/%dKiB", size>>10), func(b *testing.B) {
			db := openBench(b, 64<<20)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := db.Set([]byte(fmt.Sprintf("k%d", i%64)), value); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("get/%dKiB", size>>10), func(b *testing.B) {
			db := openBench(b, 64<<20)
			for i := 0; i < 8; i++ {
				if err := db.Set([]byte(fmt.Sprintf("k%d", i)), value); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := db.Get([]byte(fmt.Sprintf("k%d", i%8))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRandomUpdates: sysbench oltp_write_only's shape on cached data
// (250,000 rows, a 96 MiB cache; R auto and R fixed at 0; 16 KiB and
// 4 KiB pages): each commit
// updates 4 random rows, not fsynced. Reports CPU per commit (steadier than
// wall time on a shared machine), pages written and disk reads per commit.
func BenchmarkRandomUpdates(b *testing.B) {
	for _, c := range []struct {
		fixed bool
		page  int
	}{{false, 16 << 10}, {true, 16 << 10}, {false, 4 << 10}} {
		name := fmt.Sprintf("r=auto/page=%dKiB", c.page>>10)
		if c.fixed {
			name = fmt.Sprintf("r=0/page=%dKiB", c.page>>10)
		}
		b.Run(name, func(b *testing.B) {
			const rows = 250_000
			db, err := Open(b.TempDir(), &Options{CacheSize: 96 << 20, FixedShare: c.fixed, PageSize: c.page})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			loadRows(b, db, rows)
			g := sysbench.NewGenerator(3, rows)
			var row sysbench.Row
			rng := rand.New(rand.NewPCG(3, 3))
			key := make([]byte, 8)
			val := make([]byte, 0, sysbench.RowSize)
			batch := db.NewBatch()
			before := db.Stats()
			cpu0 := cpuTime()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				batch.Reset()
				for i := 0; i < 4; i++ {
					id := 1 + rng.Uint64N(rows)
					g.Row(id+uint64(b.N), &row)
					binary.BigEndian.PutUint64(key, id)
					val = row.Encode(val[:0])
					batch.Set(key, val[8:])
				}
				if err := batch.Commit(NoSync); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			st := db.Stats()
			n := float64(b.N)
			b.ReportMetric(float64(cpuTime()-cpu0)/n/1e3, "cpu-µs/op")
			b.ReportMetric(float64(st.Store.PagesWritten-before.Store.PagesWritten)/n, "pages-written/op")
			b.ReportMetric(float64(st.Store.DiskReads-before.Store.DiskReads)/n, "disk-reads/op")
			b.ReportMetric(float64(st.Store.FileBytesWritten-before.Store.FileBytesWritten)/n, "store-bytes/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far, in
// nanoseconds: on a shared machine, CPU per operation is steadier than the
// wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkScanRows: the range query as `strata bench` runs it (an
// iterator with a lower bound, First, then Key and Value of each of 100
// rows, touching the value's first and last byte), cached (100k rows, 64
// MiB cache), from one goroutine and from one per GOMAXPROCS; and scans
// of one row, the iterator's fixed cost. Reports allocations per scan (the
// iterator's own, fixed: none per row) and CPU per row.
func BenchmarkScanRows(b *testing.B) {
	db := openBench(b, 64<<20)
	const rows = 100_000
	loadRows(b, db, rows)
	var seed atomic.Uint64
	for _, c := range []struct {
		rows int
		par  bool
	}{{100, false}, {100, true}, {1, true}} {
		rowsPerScan, par := c.rows, c.par
		b.Run(fmt.Sprintf("rows=%d/parallel=%v", rowsPerScan, par), func(b *testing.B) {
			scan := func(rng *rand.Rand, key []byte) byte {
				binary.BigEndian.PutUint64(key, 1+rng.Uint64N(rows-100))
				it, err := db.NewIter(&IterOptions{LowerBound: key})
				if err != nil {
					b.Fatal(err)
				}
				var touched byte
				n := 0
				for ok := it.First(); ok && n < rowsPerScan; ok = it.Next() {
					k, v := it.Key(), it.Value()
					touched ^= k[0] ^ v[0] ^ v[len(v)-1]
					n++
				}
				if err := it.Close(); err != nil || n != rowsPerScan {
					b.Fatalf("scanned %d rows: %v", n, err)
				}
				return touched
			}
			cpu0 := cpuTime()
			b.ReportAllocs()
			if par {
				b.RunParallel(func(pb *testing.PB) {
					rng := rand.New(rand.NewPCG(seed.Add(1), 3))
					key := make([]byte, 8)
					for pb.Next() {
						scan(rng, key)
					}
				})
			} else {
				rng := rand.New(rand.NewPCG(seed.Add(1), 3))
				key := make([]byte, 8)
				for b.Loop() {
					scan(rng, key)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/float64(rowsPerScan), "cpu-ns/row")
		})
	}
}

package peertest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stratadb/strata/internal/bench"
	_ "github.com/stratadb/strata/internal/bench/strataengine" // registers "strata" (this test binary only)
)

// BenchmarkCachedReadOnly runs oltp_read_only's operations (a point read,
// a 100-row scan, and the whole transaction of 10 point reads and 4
// scans) in process against Strata and bbolt through the bench.Engine
// adapters `strata bench` uses, on the same cached sysbench table
// (250,000 rows, 128 MiB cache: issue 10's cached configuration), from
// GOMAXPROCS goroutines. The engines stay open across -count repetitions
// and their sub-benchmarks alternate, so the ratio of their ns/op is
// measured side by side:
//
//	go test -run '^$' -bench CachedReadOnly -benchmem -count 5 ./peers/peertest
func BenchmarkCachedReadOnly(b *testing.B) {
	const rows = 250_000
	ds, err := bench.NewDataset("sysbench", 1, rows)
	if err != nil {
		b.Fatal(err)
	}
	for _, op := range []string{"get", "scan100", "txn"} {
		for _, name := range []string{"strata", "bbolt"} {
			e := readOnlyEngine(b, name, ds, rows)
			b.Run(fmt.Sprintf("%s/%s", op, name), func(b *testing.B) {
				var seed atomic.Uint64
				cpu0 := cpuTime()
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					rng := rand.New(rand.NewPCG(seed.Add(1), 7))
					var key, dst []byte
					var touched byte
					row := func(k, v []byte) bool {
						touched ^= v[0] ^ v[len(v)-1]
						return true
					}
					get := func() {
						key = ds.AppendKey(key[:0], rng.Uint64N(rows))
						var found bool
						if dst, found, err = e.Get(key, dst[:0]); err != nil || !found {
							b.Errorf("get %x: found %v, %v", key, found, err)
						}
					}
					scan := func() {
						key = ds.AppendKey(key[:0], rng.Uint64N(rows-100))
						if err := e.Scan(key, nil, 100, row); err != nil {
							b.Error(err)
						}
					}
					for pb.Next() {
						switch op {
						case "get":
							get()
						case "scan100":
							scan()
						default:
							for range 10 {
								get()
							}
							for range 4 {
								scan()
							}
						}
					}
					_ = touched
				})
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
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

var (
	readOnlyMu      sync.Mutex
	readOnlyEngines = map[string]bench.Engine{}
	readOnlyDirs    []string
)

// TestMain closes the engines BenchmarkCachedReadOnly left open for the
// repetitions of its sub-benchmarks, and removes their directories.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, e := range readOnlyEngines {
		e.Close()
	}
	for _, dir := range readOnlyDirs {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// readOnlyEngine opens engine name on a table of rows rows of ds, loaded
// once per test binary (TestMain closes it).
func readOnlyEngine(b *testing.B, name string, ds bench.Dataset, rows uint64) bench.Engine {
	b.Helper()
	readOnlyMu.Lock()
	defer readOnlyMu.Unlock()
	if e, ok := readOnlyEngines[name]; ok {
		return e
	}
	dir, err := os.MkdirTemp("", "readonly-bench-"+name)
	if err != nil {
		b.Fatal(err)
	}
	readOnlyDirs = append(readOnlyDirs, dir)
	f, err := bench.Lookup(name)
	if err != nil {
		b.Fatal(err)
	}
	e, _, err := f(bench.Config{Dir: dir, CacheBytes: 128 << 20, Codec: "zstd", CompressedShare: -1})
	if err != nil {
		b.Fatal(err)
	}
	ops := make([]bench.Op, 0, 1000)
	for id := uint64(0); id < rows; id++ {
		ops = append(ops, bench.Op{Key: ds.AppendKey(nil, id), Value: ds.AppendValue(nil, id, 0)})
		if len(ops) == cap(ops) || id == rows-1 {
			if err := e.Apply(ops, false); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	if err := e.Flush(); err != nil {
		b.Fatal(err)
	}
	readOnlyEngines[name] = e
	return e
}

package strata

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// BenchmarkCachedReadScaling: cached point reads and 100-row scans (100k
// sysbench rows, 64 MiB cache) from 1 and 2 goroutines per GOMAXPROCS. ns/op
// is per operation across all goroutines: with no shared cache line
// written per read, 2 goroutines on 2 cores halve it.
func BenchmarkCachedReadScaling(b *testing.B) {
	db := openBench(b, 64<<20)
	const rows = 100_000
	loadRows(b, db, rows)
	var seed atomic.Uint64
	for _, op := range []string{"get", "scan100"} {
		for _, par := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/goroutines-per-proc=%d", op, par), func(b *testing.B) {
				b.SetParallelism(par)
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					rng := rand.New(rand.NewPCG(seed.Add(1), 1))
					key := make([]byte, 8)
					for pb.Next() {
						binary.BigEndian.PutUint64(key, 1+rng.Uint64N(rows-100))
						if op == "get" {
							if _, err := db.Get(key); err != nil {
								b.Error(err)
								return
							}
							continue
						}
						it, err := db.NewIter(nil)
						if err != nil {
							b.Error(err)
							return
						}
						n := 0
						for it.SeekGE(key); it.Valid() && n < 100; it.Next() {
							n++
						}
						it.Close()
					}
				})
			})
		}
	}
}

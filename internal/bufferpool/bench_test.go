package bufferpool

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// BenchmarkHitPath measures pinning and releasing cached pages (every access
// an uncompressed hit) from 1 to 2×GOMAXPROCS goroutines, with one partition
// (one mutex for all pages) and with the default number.
func BenchmarkHitPath(b *testing.B) {
	fs := vfs.NewMem()
	s := openStore(b, fs, "lz4")
	defer s.Close()
	const n = 256
	def := Options{}.withDefaults().Partitions
	for _, parts := range []int{1, def * 4} {
		p, err := New(s, Options{CacheSize: 8 << 20, Partitions: parts, FixedShare: true})
		if err != nil {
			b.Fatal(err)
		}
		if parts == 1 {
			populate(b, p, n)
			if err := p.FlushAll(); err != nil {
				b.Fatal(err)
			}
		}
		for g := 1; g <= 2*runtime.GOMAXPROCS(0); g *= 2 {
			b.Run(fmt.Sprintf("partitions=%d/goroutines=%d", parts, g), func(b *testing.B) {
				// Warm: every page in a frame.
				for id := PageID(0); id < n; id++ {
					pg, err := p.Get(id, Shared)
					if err != nil {
						b.Fatal(err)
					}
					pg.Release()
				}
				b.ReportAllocs()
				b.ResetTimer()
				var wg sync.WaitGroup
				per := b.N / g
				for w := 0; w < g; w++ {
					wg.Add(1)
					go func(w int) {
						defer wg.Done()
						rng := rand.New(rand.NewPCG(uint64(w), 1))
						for i := 0; i < per; i++ {
							pg, err := p.Get(PageID(rng.IntN(n)), Shared)
							if err != nil {
								b.Error(err)
								return
							}
							pg.Release()
						}
					}(w)
				}
				wg.Wait()
			})
		}
		p.Close()
	}
}

package bufferpool

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/codec"
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

// BenchmarkImageArenaChurn measures the image arena's steady state under
// replacement: with the compressed tier full of images of 600–1,000 bytes
// (4 KiB JSON pages), each op drops a random image and attaches one of a
// new random size, as evictions and demotions do. It runs under the
// partition's mutex, as the pool does; -benchmem shows the allocations.
func BenchmarkImageArenaChurn(b *testing.B) {
	s := openStore(b, vfs.NewMem(), "lz4")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 8 << 20, Partitions: 1, FixedShare: true, CompressedShare: 0.95})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	pt := p.parts[0]
	rng := rand.New(rand.NewPCG(1, 2))
	img := make([]byte, 1000)
	var live []int32
	next := PageID(0)
	attach := func() {
		di, d := pt.allocDesc(next)
		next++
		d.state.Store(stImage)
		if pt.attachImage(di, img[:600+rng.IntN(400)], codec.LZ4, false) {
			live = append(live, di)
		} else {
			pt.retire(di)
		}
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	for pt.st.evictImages.Load() == 0 { // fill until the budget evicts
		attach()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		i := rng.IntN(len(live))
		if d := pt.desc(live[i]); d.state.Load() == stImage && d.imgAt >= 0 {
			pt.dropImage(d, false)
			pt.retire(live[i])
		}
		live[i] = live[len(live)-1]
		live = live[:len(live)-1]
		attach()
	}
	b.StopTimer()
	b.ReportMetric(float64(pt.granulesUsed*granuleSize)/float64(pt.images), "B/image")
}

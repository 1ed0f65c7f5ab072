package bufferpool

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// The steady state of each regime of data size against the budget, from
// the pool's counters over a phase of uniform random reads after a warm-up:
//
//   - the data fits in frames: every access a frame hit; no image hit, no
//     demotion, no miss (whatever R: R only splits memory under pressure);
//   - the data fits compressed but not in frames: no miss, and no
//     demotion compresses (every page keeps the image it was read from or
//     promoted from);
//   - the data is larger: the budget holds, counting redundant images
//     (TestMemoryBudget).

// writePages writes n pages (ids 0..n-1, version 1) straight to the store,
// so that the pool reads them: misses, as a database opened on its data.
func writePages(t *testing.T, s *pagestore.Store, n int) {
	t.Helper()
	page := make([]byte, testPageSize)
	for id := PageID(0); id < PageID(n); id++ {
		fillPage(page, id, 1)
		if _, _, err := s.WritePage(id, page); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
}

// readRandom reads k uniformly random pages of 0..n-1 and checks them.
func readRandom(t *testing.T, p *Pool, rng *rand.Rand, n, k int) {
	t.Helper()
	for i := 0; i < k; i++ {
		id := PageID(rng.IntN(n))
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatal(err)
		}
		pageVersion(t, pg.Data(), id)
		pg.Release()
	}
}

// phase is what the pool did between two snapshots.
type phase struct{ before, after Stats }

func (ph phase) d(f func(Stats) int64) int64 { return f(ph.after) - f(ph.before) }

func (ph phase) String() string {
	return fmt.Sprintf("frame hits %d, image hits %d, misses %d, demotions %d (free %d), image evictions %d, redundant evictions %d; R %.2f, frames %d, images %d, redundant %d",
		ph.d(func(s Stats) int64 { return s.HitsUncompressed }), ph.d(func(s Stats) int64 { return s.HitsCompressed }),
		ph.d(func(s Stats) int64 { return s.Misses }), ph.d(func(s Stats) int64 { return s.Demotions }),
		ph.d(func(s Stats) int64 { return s.FreeDemotions }), ph.d(func(s Stats) int64 { return s.ImageEvictions }),
		ph.d(func(s Stats) int64 { return s.RedundantEvictions }),
		ph.after.Share, ph.after.Frames, ph.after.Images, ph.after.RedundantImages)
}

func shareName(r float64) string {
	if r < 0 {
		return "auto"
	}
	return fmt.Sprint(r)
}

func poolOptions(budget int64, share float64) Options {
	o := Options{CacheSize: budget, Partitions: 1, ControllerInterval: 5 * time.Millisecond}
	if share >= 0 {
		o.FixedShare, o.CompressedShare = true, share
	}
	return o
}

// autoPoolOnDevice writes n pages to an in-memory store, reopens it behind
// a simulated device whose reads take readLatency, and returns a pool of
// the budget on it with R tuned online from start every interval (closed
// at the test's end).
func autoPoolOnDevice(t *testing.T, budget int64, n int, readLatency time.Duration, start float64, interval time.Duration) *Pool {
	t.Helper()
	mem := vfs.NewMem()
	s := openStore(t, mem, "zstd")
	writePages(t, s, n)
	s.Close()
	dev := vfs.NewLatency(mem, vfs.Device{Name: readLatency.String(), ReadLatency: readLatency, QueueDepth: 1})
	s = openStore(t, dev, "zstd")
	t.Cleanup(func() { s.Close() })
	opts := poolOptions(budget, -1)
	opts.CompressedShare, opts.ControllerInterval = start, interval
	p, err := New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// settleThenMeasure reads pages 0..n-1 uniformly for 30 passes, noting R
// after each, then measures a phase of 20,000 reads.
func settleThenMeasure(t *testing.T, p *Pool, rng *rand.Rand, n int) ([]float64, phase) {
	t.Helper()
	var trace []float64
	for i := 0; i < 30; i++ {
		readRandom(t, p, rng, n, n)
		trace = append(trace, p.Share())
	}
	ph := phase{before: p.Stats()}
	readRandom(t, p, rng, n, 20000)
	ph.after = p.Stats()
	return trace, ph
}

// TestSteadyStateFitsInFrames: data 0.7× the budget. Frames take all the
// memory they need whatever R is (it used to cap them at 1 − R, so that
// at R = 0.5 every other access demoted a page and promoted another).
func TestSteadyStateFitsInFrames(t *testing.T) {
	const budget = 1 << 20
	n := budget * 7 / 10 / testPageSize
	for _, share := range []float64{0.5, 0.9, -1} {
		t.Run(shareName(share), func(t *testing.T) {
			s := openStore(t, vfs.NewMem(), "zstd")
			defer s.Close()
			writePages(t, s, n)
			p, err := New(s, poolOptions(budget, share))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			rng := rand.New(rand.NewPCG(1, 2))
			readRandom(t, p, rng, n, 10*n)
			ph := phase{before: p.Stats()}
			readRandom(t, p, rng, n, 20000)
			ph.after = p.Stats()
			t.Log(ph)
			if ph.d(func(s Stats) int64 { return s.HitsUncompressed }) != 20000 {
				t.Errorf("data 0.7× the budget, R %s: not every access a frame hit: %v", shareName(share), ph)
			}
			if ph.after.Demotions != 0 || ph.after.RedundantImages+ph.after.Images != 0 {
				t.Errorf("data 0.7× the budget, R %s: %d demotions and %d images since the start, want none", shareName(share), ph.after.Demotions, ph.after.Images+ph.after.RedundantImages)
			}
			checkInvariants(t, p)
		})
	}
}

// TestSteadyStateFitsCompressed: data twice the budget, about half of it
// compressed. Once warm, nothing is read from the store and nothing is
// compressed: the images hold every page and the frames the rest of the
// memory; an image hit promotes a page, which keeps its image, and the
// frame it evicts becomes its image again for free. (Exclusive tiers
// compressed the evicted frame on every image hit; the controller then
// switched the tier off, and the data went to disk.)
func TestSteadyStateFitsCompressed(t *testing.T) {
	const budget = 1 << 20
	n := 2 * budget / testPageSize
	for _, share := range []float64{0.75, 0.9} {
		t.Run(shareName(share), func(t *testing.T) {
			s := openStore(t, vfs.NewMem(), "zstd")
			defer s.Close()
			writePages(t, s, n)
			p, err := New(s, poolOptions(budget, share))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			rng := rand.New(rand.NewPCG(3, 4))
			readRandom(t, p, rng, n, 20*n)
			ph := phase{before: p.Stats()}
			readRandom(t, p, rng, n, 20000)
			ph.after = p.Stats()
			t.Log(ph)
			if m := ph.d(func(s Stats) int64 { return s.Misses }); m != 0 {
				t.Errorf("data fits compressed, R %s: %d misses in the steady state: %v", shareName(share), m, ph)
			}
			if c := ph.d(func(s Stats) int64 { return s.Demotions - s.FreeDemotions }); c != 0 {
				t.Errorf("data fits compressed, R %s: %d demotions compressed in the steady state: %v", shareName(share), c, ph)
			}
			if ph.d(func(s Stats) int64 { return s.HitsCompressed }) == 0 {
				t.Errorf("no image hit: the data does not exercise the compressed tier: %v", ph)
			}
			checkInvariants(t, p)
		})
	}
}

// TestSteadyStateFitsCompressedAuto: the same with R tuned online from
// 0.5, where the images need more than half the memory, on a device whose
// reads take 2 ms: the controller must raise R until the images hold every
// page, with no miss at all once it has (it used to stand still while it
// saw no miss, or switch the tier off).
func TestSteadyStateFitsCompressedAuto(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("the controller reads real codec and device times: not under -short or -race")
	}
	const budget = 1 << 20
	n := 3 * budget / testPageSize
	p := autoPoolOnDevice(t, budget, n, 2*time.Millisecond, DefaultInitialShare, 5*time.Millisecond)
	trace, ph := settleThenMeasure(t, p, rand.New(rand.NewPCG(5, 6)), n)
	t.Logf("%v; R trace %.2f; model R %.2f", ph, trace, ph.after.ModelShare)
	if m := ph.d(func(s Stats) int64 { return s.Misses }); m != 0 {
		t.Errorf("data fits compressed, auto R: %d misses in the steady state: %v", m, ph)
	}
	if c := ph.d(func(s Stats) int64 { return s.Demotions - s.FreeDemotions }); c != 0 {
		t.Errorf("data fits compressed, auto R: %d demotions compressed in the steady state: %v", c, ph)
	}
}

// TestControllerFollowsDataGrowth: the pages read grow from a set that fits
// in frames to one that fits only compressed, on a device whose reads take
// 2 ms. R must follow without swinging back and forth (each change of
// direction halves the step), and the misses and compressions must stop
// once the images hold the set: within a few passes over it, well under
// the 10 s asked.
func TestControllerFollowsDataGrowth(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("the controller reads real codec and device times: not under -short or -race")
	}
	const budget = 1 << 20
	n := 3 * budget / testPageSize
	p := autoPoolOnDevice(t, budget, n, 2*time.Millisecond, 0.3, 5*time.Millisecond)
	rng := rand.New(rand.NewPCG(7, 8))
	readRandom(t, p, rng, n/10, 20*n/10) // a tenth of the pages: fits in frames
	start := time.Now()
	var trace []float64
	var missFree time.Duration
	var last phase
	for i := 0; i < 40 && missFree == 0; i++ {
		last = phase{before: p.Stats()}
		readRandom(t, p, rng, n, n)
		last.after = p.Stats()
		trace = append(trace, p.Share())
		if i > 0 && last.d(func(s Stats) int64 { return s.Misses }) == 0 {
			missFree = time.Since(start)
		}
	}
	t.Logf("R trace %.2f; no miss in a pass over the pages after %v", trace, missFree)
	if missFree == 0 {
		t.Fatalf("misses went on for %d passes over data that fits compressed; R trace %.2f", len(trace), trace)
	}
	if c := last.d(func(s Stats) int64 { return s.Demotions - s.FreeDemotions }); c != 0 {
		t.Errorf("the pass without a miss compressed %d demotions: %v", c, last)
	}
	reversals := 0
	for i := 2; i < len(trace); i++ {
		if (trace[i]-trace[i-1])*(trace[i-1]-trace[i-2]) < 0 {
			reversals++
		}
	}
	if reversals > 2 {
		t.Errorf("R changed direction %d times while following the data: %.2f", reversals, trace)
	}
}

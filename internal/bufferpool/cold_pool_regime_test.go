package bufferpool

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/codec"
)

// TestControllerWarmsUpFromColdPool: a pool that starts empty, on data
// twice its budget read uniformly from a simulated 100 µs device, whose own
// compressions (zstd-19 here; zstd on a loaded host in the sysbench case)
// cost more than the misses their images save. The best R is high: every
// page keeps the image it was read from, so demotions compress nothing and
// the images hold most of the data. The first turnover of the frames
// compresses every demotion (the pages loaded before the first eviction have
// no image) and the images have few hits yet; judged then, the gate turned
// compressions off and the hill climb lowered R from the images' partial
// use to below α/(1+α), where pages no longer keep their read images, and
// nothing filled the images again: R stayed at the minimum with a fifth of
// the reads missing (docs/BENCHMARKS.md, uniform point reads at 1×). The
// controller must wait for the warm-up to end (warmedUp) and climb.
func TestControllerWarmsUpFromColdPool(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("the controller reads real codec and device times: not under -short or -race")
	}
	p, n := coldSlowPool(t, hotSetBudget, 5*time.Millisecond)
	rng := rand.New(rand.NewPCG(3, 4))
	var trace []float64
	for i := 0; i < 20; i++ {
		readUniform(t, p, n, rng, 5000)
		trace = append(trace, p.Share())
	}
	ph := phase{before: p.Stats()}
	readUniform(t, p, n, rng, 20000)
	ph.after = p.Stats()
	// R as the controller chose it, not a trial's setting: let a trial
	// under way end.
	for i := 0; i < 40 && p.trialRunning(); i++ {
		readUniform(t, p, n, rng, 500)
	}
	t.Logf("%v; R trace %.2f; compressing %v, T_comp %v, T_miss %v, T_hit %v; trials %d (kept %d; frames alone %d, kept %d), jumps %d", ph, trace, ph.after.Compressing, ph.after.TComp, ph.after.TMiss, ph.after.TImageHit, ph.after.ControllerTrials, ph.after.TrialsKept, ph.after.FramesTrials, ph.after.FramesTrialsKept, ph.after.ControllerJumps)
	if r := p.Share(); r < 0.6 {
		t.Errorf("data twice the budget, read uniformly, pages keeping their read images: R = %.2f, want ≥ 0.6 (trace %.2f)", r, trace)
	}
	if m := ph.d(func(s Stats) int64 { return s.Misses }); m > 20000/5 {
		t.Errorf("%d misses in 20,000 reads (%.0f%%), want ≤ 20%%: %v", m, float64(m)/200, ph)
	}
	checkInvariants(t, p)
}

// TestControllerWaitsForWarmUp: while a cold pool has not yet turned its
// frames over once (warmedUp), the controller takes no step and the gate keeps
// compressions on, whatever the warm-up's compressions cost (zstd-19 here);
// decisions come once the frames have turned over and the images filled.
func TestControllerWaitsForWarmUp(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("the controller reads real codec and device times: not under -short or -race")
	}
	p, n := coldSlowPool(t, 32<<20, 20*time.Millisecond)
	rng := rand.New(rand.NewPCG(5, 6))
	warm := false
	for i := 0; i < 400 && !warm; i++ {
		readUniform(t, p, n, rng, 100)
		st := p.Stats()
		// Within the first turnover: the frames only shrink while the
		// images fill, so fewer evictions than frames now is fewer than
		// the frames at any earlier decision.
		if st.Evictions < int64(st.Frames) {
			if st.ControllerSteps != 0 || !st.Compressing {
				t.Fatalf("the controller acted during the warm-up (%d evictions, %d frames): %d steps, R %.2f, compressing %v", st.Evictions, st.Frames, st.ControllerSteps, st.Share, st.Compressing)
			}
			continue
		}
		warm = st.ControllerSteps > 0
		if warm {
			t.Logf("first step after %d evictions, %d frames, images %d, R %.2f", st.Evictions, st.Frames, st.Images, st.Share)
		}
	}
	if !warm {
		t.Fatalf("no controller step after 40,000 reads of data twice the budget: %+v", p.Stats())
	}
}

// readUniform reads k uniformly random pages of the n of the pool's store
// and checks them.
func readUniform(t *testing.T, p *Pool, n uint64, rng *rand.Rand, k int) {
	t.Helper()
	for i := 0; i < k; i++ {
		id := PageID(rng.Uint64N(n))
		if i%3 != 0 {
			id = PageID(rng.Uint64N(n / 50)) // the branches: hot
		}
		readSimPage(t, p, id)
	}
}

// coldSlowPool is a simPool of data twice budget on a 100 µs device, auto
// R from 0.5, whose own compressions use zstd-19 (slower than the misses
// they save), with the controller's interval given.
func coldSlowPool(t *testing.T, budget int, interval time.Duration) (*Pool, uint64) {
	slow, err := codec.Parse("zstd-19")
	if err != nil {
		t.Fatal(err)
	}
	return simPool(t, 2, budget, -1, 100*time.Microsecond, func(o *Options) { o.Codec, o.ControllerInterval = slow, interval })
}

// trialRunning reports whether the controller has a trial under way.
func (p *Pool) trialRunning() bool {
	p.ctl.mu.Lock()
	defer p.ctl.mu.Unlock()
	return p.ctl.trial.active
}

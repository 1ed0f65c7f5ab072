package bufferpool

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// TestControllerLeavesExclusiveRegime: data about the budget's size raw,
// R starting below α/(1+α), a device whose reads take 500 µs. Pages keep
// no read image there, so every image hit compresses the page it demotes,
// the images use less than their share and are never evicted: the hill
// climb has no gradient, and R stayed where every demotion compressed
// (sysbench and events point reads at 0.5× the limit, 4 KiB pages: 0.58–
// 0.61× of R = 0.95). The controller must leave that state (trial.go):
// once it has, demotions are free.
func TestControllerLeavesExclusiveRegime(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("the controller reads real codec and device times: not under -short or -race")
	}
	const budget = 1 << 20
	n := budget * 11 / 10 / testPageSize
	mem := vfs.NewMem()
	s := openStore(t, mem, "zstd")
	writePages(t, s, n)
	s.Close()
	dev := vfs.NewLatency(mem, vfs.Device{Name: "500us", ReadLatency: 500 * time.Microsecond, QueueDepth: 1})
	s = openStore(t, dev, "zstd")
	defer s.Close()
	opts := poolOptions(budget, -1)
	opts.CompressedShare = 0.15
	p, err := New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rng := rand.New(rand.NewPCG(11, 12))
	var trace []float64
	for i := 0; i < 30; i++ {
		readRandom(t, p, rng, n, n)
		trace = append(trace, p.Share())
	}
	ph := phase{before: p.Stats()}
	readRandom(t, p, rng, n, 20000)
	ph.after = p.Stats()
	t.Logf("%v; R trace %.2f; trials %d (kept %d)", ph, trace, ph.after.ControllerTrials, ph.after.TrialsKept)
	if c := ph.d(func(s Stats) int64 { return s.Demotions - s.FreeDemotions }); c > ph.d(func(s Stats) int64 { return s.Demotions })/10 {
		t.Errorf("%d of %d demotions compressed in the steady state: still exclusive", c, ph.d(func(s Stats) int64 { return s.Demotions }))
	}
}

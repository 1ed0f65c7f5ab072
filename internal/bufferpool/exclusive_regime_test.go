package bufferpool

import (
	"math/rand/v2"
	"testing"
	"time"
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
	p := autoPoolOnDevice(t, budget, n, 500*time.Microsecond, 0.15)
	trace, ph := settleThenMeasure(t, p, rand.New(rand.NewPCG(11, 12)), n)
	t.Logf("%v; R trace %.2f; trials %d (kept %d)", ph, trace, ph.after.ControllerTrials, ph.after.TrialsKept)
	if c := ph.d(func(s Stats) int64 { return s.Demotions - s.FreeDemotions }); c > ph.d(func(s Stats) int64 { return s.Demotions })/10 {
		t.Errorf("%d of %d demotions compressed in the steady state: still exclusive", c, ph.d(func(s Stats) int64 { return s.Demotions }))
	}
}

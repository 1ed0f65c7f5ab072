package bufferpool

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// timer accumulates durations between controller ticks without locks.
type timer struct {
	n, nanos atomic.Int64
}

func (t *timer) add(d time.Duration) {
	t.n.Add(1)
	t.nanos.Add(int64(d))
}

// take returns and resets the count and total.
func (t *timer) take() (int64, int64) { return t.n.Swap(0), t.nanos.Swap(0) }

// timing holds the pool's measurements of its three costs.
type timing struct {
	disk, decom, comp timer
}

// ewma is an exponentially weighted moving average of per-event costs.
type ewma struct {
	v     float64 // nanoseconds
	valid bool
}

// fold merges an interval's n events of total nanos: the weight of the new
// interval grows with its number of events, so a quiet interval barely
// moves the average and a busy one dominates it.
func (e *ewma) fold(n, nanos int64) {
	if n == 0 {
		return
	}
	mean := float64(nanos) / float64(n)
	if !e.valid {
		e.v, e.valid = mean, true
		return
	}
	w := 1 - math.Pow(0.5, float64(n)/64) // half-life of 64 events
	e.v += w * (mean - e.v)
}

// controller tunes R, the compressed tier's share of the budget. Every
// interval it compares what the next bytes of each tier would have saved:
//
//	gainU = (compressed hits on pages in the uncompressed ghost) × T_decom
//	      + (misses on pages in the uncompressed ghost) × (T_decom + T_disk_read)
//	gainC = (misses on pages in the compressed ghost) × T_disk_read
//
// Both ghosts cover the same number of bytes (a tenth of the budget), so
// the gains are per equal memory. R moves toward the larger gain in bounded
// steps; the step halves when the direction reverses and grows slowly while
// it holds, so R settles instead of oscillating; differences under 10% (or
// too few ghost hits to tell) hold R still.
type controller struct {
	mu            sync.Mutex
	minShare      float64
	step          float64
	lastDir       int
	tDisk, tDecom ewma
	tComp         ewma
	lastGainU     float64
	lastGainC     float64
	ghostHitsU    int64
	ghostHitsC    int64
	adjustments   int64
}

const (
	minStep        = 0.005
	maxStep        = 0.10
	minGhostEvents = 16
	hysteresis     = 0.10
)

func (c *controller) init(o Options) {
	c.minShare = o.MinShare
	c.step = 0.05
}

// decide returns the share R the controller wants given the current one.
func (c *controller) decide(r float64, uOnC, uOnMiss, cOnMiss int64) float64 {
	tDecom, tDisk := c.tDecom.v, c.tDisk.v
	gainU := float64(uOnC)*tDecom + float64(uOnMiss)*(tDecom+tDisk)
	gainC := float64(cOnMiss) * tDisk
	c.lastGainU, c.lastGainC = gainU, gainC
	c.ghostHitsU, c.ghostHitsC = uOnC+uOnMiss, cOnMiss
	if uOnC+uOnMiss+cOnMiss < minGhostEvents || !c.tDisk.valid || !c.tDecom.valid {
		return r
	}
	big := math.Max(gainU, gainC)
	if big == 0 || math.Abs(gainU-gainC) < hysteresis*big {
		c.step = math.Max(minStep, c.step*0.8)
		return r
	}
	dir := 1 // more compressed memory
	if gainU > gainC {
		dir = -1
	}
	if c.lastDir != 0 && dir != c.lastDir {
		c.step = math.Max(minStep, c.step/2)
	} else {
		c.step = math.Min(maxStep, c.step*1.25)
	}
	c.lastDir = dir
	c.adjustments++
	return math.Min(1-c.minShare, math.Max(c.minShare, r+float64(dir)*c.step))
}

func (p *Pool) controlLoop() {
	defer p.done.Done()
	tick := time.NewTicker(p.opts.ControllerInterval)
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
			p.adjust()
		}
	}
}

// adjust runs one controller step: fold the interval's timings, collect the
// ghost hits, decide, and (in auto mode) apply the new R.
func (p *Pool) adjust() {
	var uOnC, uOnMiss, cOnMiss int64
	for _, pt := range p.parts {
		uOnC += pt.st.ghostUonC.Swap(0)
		uOnMiss += pt.st.ghostUonMiss.Swap(0)
		cOnMiss += pt.st.ghostConMiss.Swap(0)
	}
	c := &p.ctl
	c.mu.Lock()
	c.tDisk.fold(p.timing.disk.take())
	c.tDecom.fold(p.timing.decom.take())
	c.tComp.fold(p.timing.comp.take())
	want := c.decide(math.Float64frombits(p.target.Load()), uOnC, uOnMiss, cOnMiss)
	c.mu.Unlock()
	p.target.Store(math.Float64bits(want))
	if !p.fixed.Load() && want != p.Share() {
		p.setShare(want)
		for _, pt := range p.parts {
			pt.mu.Lock()
			pt.retarget()
			pt.mu.Unlock()
		}
	}
}

func (p *Pool) setShare(r float64) { p.share.Store(math.Float64bits(r)) }

// Share is R, the compressed tier's current share of the budget.
func (p *Pool) Share() float64 { return math.Float64frombits(p.share.Load()) }

// SetShare fixes R (and switches automatic tuning off).
func (p *Pool) SetShare(r float64) {
	p.fixed.Store(true)
	p.setShare(math.Min(1, math.Max(0, r)))
	for _, pt := range p.parts {
		pt.mu.Lock()
		pt.retarget()
		pt.mu.Unlock()
	}
}

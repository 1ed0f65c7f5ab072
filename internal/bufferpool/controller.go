package bufferpool

import (
	"math"

	"github.com/stratadb/strata/internal/codec"
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
	decomBy           [numCodecs]timer // decompressions per codec
}

// numCodecs bounds the codec ids timed separately.
const numCodecs = 8

func (t *timing) addDecom(c codec.ID, d time.Duration) {
	t.decom.add(d)
	if int(c) < numCodecs {
		t.decomBy[c].add(d)
	}
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
//	gainC = (misses on pages in the compressed ghost) × T_disk_read × (1−α)
//
// where α is the mean image size over the page size (see decide).
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
	tDecomBy      [numCodecs]ewma // T_decom per codec, for Stats
	lastGainU     float64
	lastGainC     float64
	ghostHitsU    int64
	ghostHitsC    int64
	adjustments   int64
	// Evidence accumulated since the last decision.
	pendUonC, pendUonMiss, pendConMiss    int64
	pendDemotions, pendHitsC, pendSkipped int64
	// Evidence for switching the compressed tier off or on.
	gateDem, gateHits, gateSkipped, gateConMiss int64
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
func (c *controller) decide(r, alpha float64, uOnC, uOnMiss, cOnMiss int64) float64 {
	tDecom, tDisk := c.tDecom.v, c.tDisk.v
	gainU := float64(uOnC)*tDecom + float64(uOnMiss)*(tDecom+tDisk)
	// Memory moved from frames to images first receives the pages the
	// frames no longer hold (demoted, at α of their size), so only 1−α of
	// it catches new pages. Without this factor the controller would
	// compare T_decom with r·T_disk_read instead of the model's (r−1)·T_disk_read.
	gainC := float64(cOnMiss) * tDisk * (1 - alpha)
	c.lastGainU, c.lastGainC = gainU, gainC
	c.ghostHitsU, c.ghostHitsC = uOnC+uOnMiss, cOnMiss
	if !c.tDisk.valid || !c.tDecom.valid {
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
// ghost hits (accumulated over intervals until there are enough to judge),
// decide, and (in auto mode) apply the new R.
//
// It also decides whether the compressed tier pays at all. Each demotion
// costs a compression (T_comp) whatever R is, and each compressed hit saves
// a disk read (T_disk_read) over a miss (both decompress). Once the tier is
// full, if its hits saved less time than its demotions cost, it is a loss
// whatever memory it has (giving that memory to frames can only add hits),
// so demotion is switched off and R set to 0: all memory goes to frames. While off, evicted pages are entered
// in the compressed ghost as if demoted, and demotion comes back on when
// the misses that the ghost says a compressed tier would have served are
// worth more than the compressions it would have cost.
func (p *Pool) adjust() {
	c := &p.ctl
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, pt := range p.parts {
		c.pendUonC += pt.st.ghostUonC.Swap(0)
		c.pendUonMiss += pt.st.ghostUonMiss.Swap(0)
		c.pendConMiss += pt.st.ghostConMiss.Swap(0)
		c.pendDemotions += pt.st.ctlDemotions.Swap(0)
		c.pendHitsC += pt.st.ctlHitsC.Swap(0)
		c.pendSkipped += pt.st.ctlSkipped.Swap(0)
	}
	c.tDisk.fold(p.timing.disk.take())
	c.tDecom.fold(p.timing.decom.take())
	c.tComp.fold(p.timing.comp.take())
	for i := range c.tDecomBy {
		c.tDecomBy[i].fold(p.timing.decomBy[i].take())
	}
	r := math.Float64frombits(p.target.Load())
	auto := !p.fixed.Load()

	// The on/off judgement of the compressed tier needs a whole turnover
	// of the tier (as many demotions as it holds images) while full, so
	// that its hit rate is the steady one, not the warm-up's.
	fill, images := p.imageFill()
	if p.demoting.Load() && fill < 0.9 {
		c.gateDem, c.gateHits = 0, 0
	} else {
		c.gateDem += c.pendDemotions
		c.gateHits += c.pendHitsC
		c.gateSkipped += c.pendSkipped
		c.gateConMiss += c.pendConMiss
	}
	c.pendDemotions, c.pendHitsC, c.pendSkipped = 0, 0, 0
	turnover := int64(max(4*minGhostEvents, images))
	switch {
	case auto && !p.demoting.Load():
		// Compressed tier off: should it come back? The C-ghost holds
		// the pages evicted since, as if demoted.
		if c.gateSkipped < turnover {
			break
		}
		if float64(c.gateConMiss)*c.tDisk.v > 1.25*float64(c.gateSkipped)*c.tComp.v {
			p.demoting.Store(true)
			r = c.minShare
			p.opts.Logger.Info("bufferpool: compressed tier on", "misses_it_would_serve", c.gateConMiss, "t_disk", c.tDisk.v, "t_comp", c.tComp.v)
		}
		c.gateSkipped, c.gateConMiss = 0, 0
	case auto && c.gateDem >= turnover && c.tDisk.valid && c.tComp.valid:
		off := float64(c.gateHits)*c.tDisk.v < float64(c.gateDem)*c.tComp.v
		c.gateDem, c.gateHits = 0, 0
		if off {
			p.demoting.Store(false)
			c.gateSkipped, c.gateConMiss = 0, 0
			r = 0
			p.opts.Logger.Info("bufferpool: compressed tier off", "t_disk", c.tDisk.v, "t_comp", c.tComp.v)
			break
		}
		fallthrough
	default:
		if c.pendUonC+c.pendUonMiss+c.pendConMiss < minGhostEvents {
			return // not enough evidence yet
		}
		if p.demoting.Load() || !auto {
			r = c.decide(r, p.imageAlpha(), c.pendUonC, c.pendUonMiss, c.pendConMiss)
		}
	}
	c.pendUonC, c.pendUonMiss, c.pendConMiss = 0, 0, 0
	p.target.Store(math.Float64bits(r))
	if auto && r != p.Share() {
		p.setShare(r)
		p.retargetAll()
	}
}

// imageFill is the compressed tier's use of its target (0..1) and the
// number of images it holds.
func (p *Pool) imageFill() (float64, int) {
	var used, target, images int
	for _, pt := range p.parts {
		pt.mu.RLock()
		used += pt.chunksUsed
		target += pt.chunkTarget
		images += pt.images
		pt.mu.RUnlock()
	}
	if target == 0 {
		return 0, images
	}
	return float64(used) / float64(target), images
}

// imageAlpha is α, the mean compressed image size over the page size, of
// the images in the pool (0.5 until there are any).
func (p *Pool) imageAlpha() float64 {
	var bytes, n int64
	for _, pt := range p.parts {
		pt.mu.RLock()
		bytes += int64(pt.chunksUsed * chunkSize)
		n += int64(pt.images)
		pt.mu.RUnlock()
	}
	if n == 0 {
		return 0.5
	}
	return min(1, float64(bytes)/float64(n*int64(p.pageSize)))
}

func (p *Pool) setShare(r float64) { p.share.Store(math.Float64bits(r)) }

// Share is R, the compressed tier's current share of the budget.
func (p *Pool) Share() float64 { return math.Float64frombits(p.share.Load()) }

// SetShare fixes R (and switches automatic tuning off, and the compressed
// tier on if the controller had switched it off). NaN is ignored.
func (p *Pool) SetShare(r float64) {
	if math.IsNaN(r) {
		return
	}
	c := &p.ctl
	c.mu.Lock() // not in the middle of a controller step
	defer c.mu.Unlock()
	p.fixed.Store(true)
	p.demoting.Store(true)
	r = math.Min(1, math.Max(0, r))
	p.setShare(r)
	p.target.Store(math.Float64bits(r))
	p.retargetAll()
}

// retargetAll applies the current R to every partition.
func (p *Pool) retargetAll() {
	for _, pt := range p.parts {
		pt.mu.Lock()
		pt.retarget()
		pt.mu.Unlock()
	}
}

package bufferpool

import (
	"context"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
)

// The controller: R, the images' share of the budget under pressure, and
// the gate that decides whether frames without an image are compressed
// when they are evicted.
//
// Its objective is the time per access over all tiers,
//
//	T = (image hits × T_decom + compressing demotions × T_comp
//	     + misses × (T_disk_read + T_decom)) / accesses,
//
// measured every interval (Stats.TimePerAccess): an image hit costs
// T_hit (measured whole: from the start of its load to its end, so the
// demotion it caused, compression included, and any wait are in it; by
// default T_decom) and a miss T_miss (likewise; by default T_disk_read +
// T_decom). Each interval it moves R the way that lowers T, from what a
// tenth of the budget more or less in each tier would change:
//
//   - more frames would turn the image hits and misses on pages recently
//     evicted from frames (the uncompressed ghost) into frame hits:
//     gainU = uOnC × T_hit + uOnMiss × T_miss;
//   - more image memory would turn the misses on pages whose image was
//     recently evicted (the compressed ghost) into image hits, and spare
//     the compressions of pages whose redundant image was (or the drop
//     and later miss that replace them where compressing does not pay):
//     gainC = (cOnMiss × (T_miss − T_hit) + cOnComp × min(T_comp, T_miss − T_hit)) × (1 − α·f),
//     where memory moved to images first receives the pages the frames
//     lose, at α of their size for the fraction f of demotions that
//     compress (document 000's (1 − α) for exclusive tiers, f = 1);
//   - a tier that evicts nothing gains nothing from more memory, but
//     loses from less what the ghosts cannot see: the hits of the share it
//     would give up, estimated as hits × (tenth of the budget / its bytes),
//     each costing T_hit more (frames) or T_miss − T_hit more (images).
//
// R rises if gainC beats the frames' loss, falls if gainU beats the
// images' loss, each by a 10% margin and by 1.5 times the noise of the
// difference (its counts are Poisson, a count n known to about ±√n; the
// bound poissonSD adds the terms linearly); evidence that passes the
// margin but not the noise is kept and added to the next interval's, up
// to 1,024 ghost hits, after which the sides count as balanced. Steps
// halve when the direction reverses and grow by 1.25× while it holds
// (0.5%–10%); R stays in [MinShare, 1 − MinShare], and at or below the
// ceiling that leaves the frames room for the inner pages (innerCeiling).
// A step starts from where the images really are when R is beyond it (a
// tier that does not use its share is not limited by R), so R never
// drifts where it changes nothing. A step down
// stops at α/(1+α) + 0.02 (copiesFloor), where the regime changes, while
// images still pay, and crosses only after floorPatience decisions that
// want lower; the far view below (the depth histogram, depth.go) may take
// R under it at once, and in auto mode each of its jumps is a trial,
// kept only where it clearly beats the recent past (jump.go). Below
// the floor the climb cannot see the regime above it, and anywhere it
// cannot see what frames alone would do; trials (trial.go) measure both,
// and hold what they keep for a while.
//
// Nothing is decided and the gate judges nothing during a trial (but in
// a jump's settle: jump.go) or a kept frames trial's hold (trial.go), after a trial goes back until the
// tiers have refilled (settle), nor during the warm-up (warmedUp):
// until the memory is full and the frames have turned over, the costs and
// hits are those of a pool filling up, not of its steady state.
//
// The gate (auto mode only): once memory is full and the images have
// turned over, if the hits on images that compressing demotions made saved
// less (hits × (T_miss − T_hit)) than the compressions cost (× T_comp), frames
// without an image are dropped instead; evicted pages then enter the
// compressed ghost as if demoted, and compression comes back when the
// misses it would have served are worth 1.25× the compressions it would
// have cost. Demotions of frames with an image compress nothing and
// continue either way.
//
// Lock rules: the controller's mutex guards its state; it is taken before
// any partition's mu (adjust reads each partition under its shared lock).

// evidence is what the partitions counted since the controller's last
// decision.
type evidence struct {
	uOnC, uOnMiss, cOnMiss, cOnComp int64 // ghost hits
	hitsU, hitsC, misses            int64
	frameEvictions, imageEvictions  int64
	demotions, compressions         int64               // all demotions, and those that compressed
	depth                           [depthBuckets]int64 // image hits by depth below the frames (depth.go)
}

func (e *evidence) add(o evidence) {
	e.uOnC += o.uOnC
	e.uOnMiss += o.uOnMiss
	e.cOnMiss += o.cOnMiss
	e.cOnComp += o.cOnComp
	e.hitsU += o.hitsU
	e.hitsC += o.hitsC
	e.misses += o.misses
	e.frameEvictions += o.frameEvictions
	e.imageEvictions += o.imageEvictions
	e.demotions += o.demotions
	e.compressions += o.compressions
	for i, n := range o.depth {
		e.depth[i] += n
	}
}

func (e *evidence) ghostHits() int64 { return e.uOnC + e.uOnMiss + e.cOnMiss + e.cOnComp }

func (e *evidence) accesses() int64 { return e.hitsU + e.hitsC + e.misses }

// memState is the pool's memory when the controller decides: bytes in
// frames in use and in images, resident in all, and what pages may take
// (avail) of the budget.
type memState struct {
	frameBytes, imageBytes, resident, avail, budget float64
	// innerBytes: what the cached inner pages (Page.MarkInner) take in
	// frames (innerCeiling).
	innerBytes float64
}

// controller tunes R (see the top of this file).
type controller struct {
	mu       sync.Mutex
	minShare float64
	// ceiling is the highest R the controller applies: 1 − MinShare, or
	// lower where the inner pages need more frames (innerCeiling).
	ceiling       float64
	step          float64
	lastDir       int
	tDisk, tDecom ewma
	tComp         ewma
	tDecomBy      [numCodecs]ewma // T_decom per codec, for Stats
	tHitC, tMiss  ewma            // whole time of an image hit and of a miss
	timePerAccess ewma            // the objective, per access
	lastGainU     float64
	lastGainC     float64
	lastLossU     float64
	lastLossC     float64
	ghostHitsU    int64
	ghostHitsC    int64
	adjustments   int64
	jumps         int64 // decisions that lowered R by the depth histogram
	// Running totals of the partitions' cumulative counters at the last
	// interval, to take differences.
	seenHitsU, seenHitsC, seenMisses, seenDemotions int64
	seenProgress                                    int64 // Options.Progress
	// Evidence accumulated since the last decision.
	pend evidence
	// Evidence for switching compressing demotions off or on.
	gateDem, gateHits, gateSkipped, gateConMiss int64
	// evictedUnits counts the frame evictions since New in units of the
	// page memory: the depths the depth histogram can have seen
	// (farViewReady).
	evictedUnits float64
	// warm: the pool has left its warm-up (warmedUp); warmEvictions
	// counts the frame evictions since its memory was first full.
	warm          bool
	warmEvictions int64
	// floorHeld counts the decisions in a row that wanted R below
	// copiesFloor and were held there.
	floorHeld int
	// thin: the last decision wanted a step its evidence was too noisy
	// to justify; adjust keeps the evidence for the next one.
	thin bool
	// wantedUp: the last decision wanted R higher, stepped or not.
	wantedUp bool
	// upStalled counts the decisions that wanted R higher, stepped or
	// not, since the climb last showed it was finding (R more than
	// steadyDrift from upStallFrom, or two steps up in a row; decisions
	// that want nothing, or lower, count nothing): a climb stalled so is
	// no longer finding where images pay (mayPay's raising). The frames
	// arm then still waits its own trialPatience decisions. See
	// countStall.
	upStalled   int
	upStallFrom float64
	steppedUp   bool // the last decision raised R
	// probe measures a miss when nothing misses (probe.go).
	probe prober
	// trial measures the regimes the climb cannot see (trial.go).
	trial trial
	// settling: a trial went back and nothing is decided (its evidence is
	// dropped) until the tiers have refilled (settle): the images
	// dropped for a frames trial come back only as their pages miss (the
	// frames shrunk for a copy trial, as their pages hit images), and
	// those misses, on pages the frames evicted, looked to the
	// uncompressed ghost like what more frames would save (after a lost
	// frames trial, sysbench point reads at 0.5× the memory, 4 KiB pages:
	// one step from where the images were refilling, R 0.95 to the floor
	// 0.35, with 1.6% misses where R = 0.95 has none). settled counts its
	// intervals with accesses.
	settling bool
	settled  int
	// settleWin holds the last trialSettle intervals of the settle.
	settleWin [trialSettle]window
	// mem is the memory at the decision being taken (a trial that starts
	// records what its return waits for: refillFrom).
	mem memState
	// alpha is α as last measured (imageAlpha), 0.5 before any image:
	// with compressions off below the floor the images drain to none, and
	// copyMayPay still needs the codec's ratio.
	alpha float64
	// now is the time of the decision being taken (zero in tests that
	// call decide directly).
	now time.Time
	// lastTick is the time of the last interval's adjust.
	lastTick time.Time
	// log receives the controller's decisions and trials at Debug level
	// (Options.Logger): a trace for whoever tunes it, off by default.
	log *slog.Logger
}

const (
	minStep        = 0.005
	maxStep        = 0.10
	minGhostEvents = 16
	// maxThinGhostEvents: evidence too noisy to step on is kept for the
	// next decision until it holds this many ghost hits; sides still
	// within their noise then are balanced (decidePending), and the
	// evidence starts anew.
	maxThinGhostEvents = 1024
	// maxQuietAccesses: with this many accesses and still too few ghost
	// hits, decide anyway (a tier that evicts nothing still has a loss).
	maxQuietAccesses = 50000
	hysteresis       = 0.10
	// noiseZ: a step needs the difference of the two sides to exceed
	// this many times its noise (poissonSD).
	noiseZ = 1.5
)

func (c *controller) init(o Options) {
	c.minShare = o.MinShare
	c.ceiling = 1 - o.MinShare
	c.step = 0.05
	c.alpha = 0.5
	c.trial.init()
	c.log = o.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
}

// costs returns what an image hit and a miss cost more than a frame hit:
// their measured whole times when there are measurements (which include
// the demotions they caused, waits and scheduling, a stretched few bounded:
// timer.go), else the sums of their
// parts (T_decom; T_disk_read + T_decom). whole says which.
func (c *controller) costs() (hitC, miss float64, whole bool) {
	hitC, miss = c.tDecom.value(), c.tDisk.value()+c.tDecom.value()
	if c.tHitC.valid && c.tMiss.valid {
		return c.tHitC.v, math.Max(c.tMiss.v, c.tHitC.v), true
	}
	if c.tHitC.valid {
		hitC = c.tHitC.v
	}
	if c.tMiss.valid {
		miss = c.tMiss.v
	}
	return hitC, math.Max(miss, hitC), false
}

// decide returns the share R the controller wants given the current one,
// the images' actual share of the memory (usage), α (mean image size over
// the page size) and the evidence (see the top of this file).
func (c *controller) decide(r, usage, alpha float64, mem memState, ev evidence) float64 {
	c.thin, c.wantedUp = false, false
	r = math.Min(r, c.ceiling) // a fixed R above it: what auto would want from there
	costHitC, costMiss, _ := c.costs()
	saveMiss := costMiss - costHitC // an image hit instead of a miss
	tComp := c.tComp.value()
	delta := mem.budget / 10 // what each ghost covers
	fComp := 1.0
	if ev.demotions > 0 {
		fComp = float64(ev.compressions) / float64(ev.demotions)
	}
	// Each side's figure and its noise (sd): the counts are Poisson, so a
	// count n is known to ±√n.
	var gainU, gainC, lossU, lossC, sdU, sdC float64
	if ev.frameEvictions > 0 {
		gainU = float64(ev.uOnC)*costHitC + float64(ev.uOnMiss)*costMiss
		sdU = poissonSD(ev.uOnC, costHitC, ev.uOnMiss, costMiss)
		lossU = gainU
	} else if mem.frameBytes > 0 {
		lossU = float64(ev.hitsU) * math.Min(1, delta/mem.frameBytes) * costHitC
		sdU = poissonSD(ev.hitsU, math.Min(1, delta/mem.frameBytes)*costHitC, 0, 0)
	}
	if ev.imageEvictions > 0 {
		// A redundant image kept longer spares its frame's compression at
		// demotion, or, where compressions do not pay (the gate), the
		// drop and the miss that follows: at most the cheaper.
		spared := math.Min(tComp, saveMiss)
		gainC = (float64(ev.cOnMiss)*saveMiss + float64(ev.cOnComp)*spared) * (1 - alpha*fComp)
		sdC = poissonSD(ev.cOnMiss, saveMiss, ev.cOnComp, spared) * math.Abs(1-alpha*fComp)
		lossC = gainC
	} else if mem.imageBytes > 0 {
		lossC = float64(ev.hitsC) * math.Min(1, delta/mem.imageBytes) * saveMiss
		sdC = poissonSD(ev.hitsC, math.Min(1, delta/mem.imageBytes)*saveMiss, 0, 0)
		if !c.tDisk.valid && !c.tMiss.valid && ev.hitsC > 0 {
			// The pool never read the store (it made its pages): what a
			// miss costs is unknown, so the images holding everything are
			// not given up on a guess.
			lossC = math.Inf(1)
		}
	}
	c.lastGainU, c.lastGainC, c.lastLossU, c.lastLossC = gainU, gainC, lossU, lossC
	c.ghostHitsU, c.ghostHitsC = ev.uOnC+ev.uOnMiss, ev.cOnMiss+ev.cOnComp
	// First the far view: would frames much larger (a hot set that does
	// not fit by more than a ghost's tenth) beat the current split?
	if to, predicted, current, ok := lowerShare(math.Min(r, usage), c.minShare, alpha, costHitC, costMiss, &ev.depth, ev.hitsC, ev.misses, ev.accesses()); ok && farViewReady(c.evictedUnits, math.Min(r, usage), alpha) && !c.trial.holdsFloor(to, alpha, c.now) && !c.trial.holdsShare(c.now) && c.trial.mayJump(to, c.now) {
		c.log.Debug("bufferpool: far view wants to jump", "from", r, "to", to, "usage", usage, "predicted_ns", predicted, "current_ns", current,
			"cost_hit_c", costHitC, "cost_miss", costMiss, "hits_c", ev.hitsC, "misses", ev.misses, "accesses", ev.accesses())
		c.jumps++
		c.adjustments++
		c.lastDir, c.step = -1, 0.05
		return to
	}
	// A step needs the winning side to win by the margin, and by more
	// than noiseZ times the noise of the difference (bounded from above:
	// the sum of the sides' poissonSD). Where only the noise
	// stands in the way, the evidence is thin, not balanced: nothing
	// moves, and the evidence accumulates into the next decision
	// (decidePending). With the ghosts' 16 events a decision, uniform
	// reads that favoured the frames by 1.35× (document 000's NVMe +
	// deflate-6 scenario: 8 against 22 ghost hits a decision) saw the
	// images win one decision in four, and R hovered at 0.35–0.50.
	dir, wanted := 0, 0
	switch {
	case gainC > 0 && gainC > lossU*(1+hysteresis):
		wanted = 1 // more compressed memory
		if gainC-lossU > noiseZ*(sdC+sdU) {
			dir = 1
		}
	case gainU > 0 && gainU > lossC*(1+hysteresis):
		wanted = -1
		if gainU-lossC > noiseZ*(sdU+sdC) {
			dir = -1
		}
	}
	c.thin = wanted != dir
	c.wantedUp = wanted > 0
	if c.thin {
		return r
	}
	floor := copiesFloor(alpha)
	if dir < 0 && math.Abs(r-floor) <= 0.01 && ev.cOnMiss > 0 && c.imagesPay(alpha) {
		// At the floor and the climb wants lower: hold for floorPatience
		// decisions (the gate's judgement can change the costs: with
		// compressions off an image hit no longer pays for one), then
		// let the climb cross.
		if c.floorHeld++; c.floorHeld <= floorPatience {
			dir = 0
		}
	} else {
		c.floorHeld = 0
	}
	if dir < 0 && (c.trial.holdsShare(c.now) || (r <= floor+0.01 && c.trial.holding(c.now))) {
		dir = 0 // a kept copy trial holds R, or the floor (trial.go)
	}
	if dir == 0 {
		c.step = math.Max(minStep, c.step*0.8)
		return r
	}
	if c.lastDir != 0 && dir != c.lastDir {
		c.step = math.Max(minStep, c.step/2)
	} else {
		c.step = math.Min(maxStep, c.step*1.25)
	}
	c.lastDir = dir
	c.adjustments++
	from := r
	if dir > 0 && usage > r {
		from = usage // images already beyond R: raising R to there changes nothing
	} else if dir < 0 && usage < r {
		from = usage // images below R: lowering R to their use changes nothing
	}
	next := math.Min(c.ceiling, math.Max(c.minShare, from+float64(dir)*c.step))
	if dir < 0 && r > floor+0.01 && next < floor && ev.cOnMiss > 0 && c.imagesPay(alpha) {
		next = math.Max(floor, c.minShare) // a step stops at the floor (copiesFloor)
	}
	if dir < 0 && c.trial.holdsFloor(next, alpha, c.now) {
		next = math.Max(next, math.Min(r, floor)) // a kept trial holds the floor (trial.go)
	}
	return next
}

// decidePending decides on the evidence accumulated since the last
// decision, and starts anew unless it was too thin to step on (see decide).
func (c *controller) decidePending(r, usage, alpha float64, mem memState) float64 {
	r = c.decide(r, usage, alpha, mem, c.pend)
	switch {
	case !c.thin:
		c.pend = evidence{}
	case c.pend.ghostHits() >= maxThinGhostEvents:
		// As much evidence as a decision ever waits for, and the sides
		// are still within its noise: balanced, as a decision that wants
		// no step (the step shrinks).
		c.step = math.Max(minStep, c.step*0.8)
		c.pend = evidence{}
	}
	return r
}

// poissonSD bounds the noise of a·w + b·v for Poisson counts a and b from
// above: each count is known to ±√(n+1) while it has events (a count of 3
// from a mean of 8 is common: its own √3 would understate the noise most
// exactly when it misleads), and the terms add linearly, as do the two
// sides' noises in decide, not in quadrature: the costs the counts are
// weighted with (T_miss − T_image_hit, a difference of two noisy
// averages) are noisy too. In quadrature, R rose on noise 15 times in
// TestControllerWaitsOutNoise's 20 runs (4 times so), and the NVMe +
// deflate scenario hovered again.
func poissonSD(a int64, w float64, b int64, v float64) float64 {
	return math.Sqrt(poissonVar(a))*math.Abs(w) + math.Sqrt(poissonVar(b))*math.Abs(v)
}

// poissonVar estimates the variance of a Poisson count observed as n.
func poissonVar(n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(n + 1)
}

// floorPatience is how many decisions in a row the hill climb holds R at
// copiesFloor while it wants lower, before it crosses.
const floorPatience = 8

// imagesPay reports whether, by the measured device and codec, memory given
// to images saves more than it costs with pages re-read uniformly: a byte
// of images holds 1/α pages' worth where a byte of frames holds one, and
// each of the 1/α − 1 more pages turns a disk read into a decompression,
// while each page the frames give up costs a decompression per hit. So
// (1/α − 1) × T_disk_read > T_decom.
func (c *controller) imagesPay(alpha float64) bool {
	return alpha > 0 && (1/alpha-1)*c.tDisk.value() > c.tDecom.value()
}

// copiesFloor is the least R at which the images' share holds a copy of
// every frame, α/(1+α) (document 000's constraint, copiesFit), with a
// margin. Above it pages keep the images they were read from and demotions
// compress nothing; below it every image costs a compression and the tiers
// are exclusive, so the step across changes the regime rather than the
// split: the time per access measured on one side says little about the
// other. While the compressed ghost still sees misses the images would
// serve and the device and codec say images pay (imagesPay), a hill-climb
// step down stops there, and R stays for floorPatience decisions that
// want lower before the climb crosses; the far view (lowerShare), which
// predicts the whole time per access at the lower R, may go below at once.
func copiesFloor(alpha float64) float64 { return alpha/(1+alpha) + 0.02 }

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

// adjust runs one controller step: fold the interval's timings and
// counters, measure the objective, run the gate, decide (when there is
// enough evidence) and, in auto mode, apply the new R.
func (p *Pool) adjust() {
	c := &p.ctl
	p.probeIfWanted() // before c.mu: a probe reads the store
	c.mu.Lock()
	defer c.mu.Unlock()
	var ev evidence
	var hitsU, hitsC, misses, demotions, skipped, hitsOnCompressed int64
	for _, pt := range p.parts {
		s := &pt.st
		ev.uOnC += s.ghostUonC.Swap(0)
		ev.uOnMiss += s.ghostUonMiss.Swap(0)
		ev.cOnMiss += s.ghostConMiss.Swap(0)
		ev.cOnComp += s.ghostConComp.Swap(0)
		ev.compressions += s.ctlDemotions.Swap(0)
		ev.frameEvictions += s.ctlFrameEvictions.Swap(0)
		ev.imageEvictions += s.ctlImageEvictions.Swap(0)
		hitsOnCompressed += s.ctlHitsC.Swap(0)
		for i := range s.depth {
			ev.depth[i] += s.depth[i].Swap(0)
		}
		skipped += s.ctlSkipped.Swap(0)
		hitsU += s.hitsU.Load()
		// Read-ahead hits are not the compressed tier's (readahead.go).
		// A load counts raHits before hitsC, and raHits is read first
		// here, so the difference is never negative.
		ra := s.raHits.Load()
		hitsC += s.hitsC.Load() - ra
		misses += s.misses.Load()
		demotions += s.demotions.Load()
	}
	ev.hitsU, c.seenHitsU = hitsU-c.seenHitsU, hitsU
	ev.hitsC, c.seenHitsC = hitsC-c.seenHitsC, hitsC
	ev.misses, c.seenMisses = misses-c.seenMisses, misses
	ev.demotions, c.seenDemotions = demotions-c.seenDemotions, demotions
	c.tDisk.foldTimers(&p.timing.disk)
	c.tDecom.foldTimers(&p.timing.decom)
	c.tComp.foldTimers(&p.timing.comp)
	c.tHitC.foldTimers(&p.timing.hitC, &p.timing.hitCSlow)
	c.tMiss.foldTimers(&p.timing.miss, &p.timing.missSlow)
	for i := range c.tDecomBy {
		c.tDecomBy[i].foldTimers(&p.timing.decomBy[i])
	}
	now := time.Now()
	c.probe.wanted = c.probeDue(ev, now, p.opts.ControllerInterval)
	var iv window // the objective over this interval, and its wall time
	if !c.lastTick.IsZero() {
		iv.wall = float64(now.Sub(c.lastTick))
	}
	c.lastTick = now
	if p.opts.Progress != nil {
		done := p.opts.Progress()
		iv.work, iv.progress, c.seenProgress = float64(done-c.seenProgress), true, done
	}
	if n := ev.accesses(); n > 0 {
		costHitC, costMiss, whole := c.costs()
		cost := float64(ev.hitsC)*costHitC + float64(ev.misses)*costMiss
		if !whole {
			cost += float64(ev.compressions) * c.tComp.value()
		}
		c.timePerAccess.fold(n, int64(cost))
		iv.cost, iv.n = cost, float64(n)
		iv.misses, iv.hitsC = float64(ev.misses), float64(ev.hitsC)
	}
	r := math.Float64frombits(p.target.Load())
	auto := !p.fixed.Load()
	mem, images := p.memory()
	c.ceiling = innerCeiling(c.minShare, mem)
	if auto && p.Share() > c.ceiling {
		// The inner pages' frames come first, whatever the interval
		// (warm-up, a hold, a settle, a trial): R never waits for a
		// decision to come down to the ceiling.
		c.applyShare(p, c.ceiling)
	}
	if mem.avail > 0 {
		c.evictedUnits += float64(ev.frameEvictions) * float64(p.pageSize) / mem.avail
	}
	if !c.warm {
		if c.warm = c.warmedUp(r, mem, ev, p.pageSize, len(p.parts)); !c.warm {
			return // the warm-up's evidence is not the steady state's
		}
		c.log.Debug("bufferpool: warmed up", "share", p.Share(), "frame_bytes", mem.frameBytes, "image_bytes", mem.imageBytes)
	}
	if iv.n == 0 {
		iv.idle = 1
	}
	if auto {
		jumping := c.trial.active && c.trial.arm == armJump
		if to, ran := c.observeTrial(iv, now); ran {
			c.syncCompressing(p, now)
			if jumping {
				c.duringJump(p, mem, images, ev, skipped, hitsOnCompressed) // jump.go: the gate judges
			}
			c.applyShare(p, to) // trial.go: no decision, no gate while one runs (but in a jump's settle)
			return
		}
		c.syncCompressing(p, now)
		if c.trial.framesHeld(now) {
			c.trial.observeSteady(iv, p.Share()) // trial.go: a kept frames trial holds
			return
		}
		if c.settling {
			c.settle(mem, iv) // after a trial went back: the refill is not evidence
			c.trial.observeSteady(iv, p.Share())
			return
		}
		c.gate(p, mem, images, ev, skipped, hitsOnCompressed)
	}
	c.pend.add(ev)
	c.trial.observeSteady(iv, p.Share())
	c.trial.observeRecent(iv)
	if c.pend.ghostHits() < minGhostEvents && c.pend.accesses() < maxQuietAccesses {
		return // not enough evidence yet
	}
	usage := 0.0
	if mem.avail > 0 {
		usage = mem.imageBytes / mem.avail
	}
	steps, jumps := c.adjustments, c.jumps
	if a, ok := p.imageAlpha(); ok {
		c.alpha = a
	}
	decided, alpha := c.pend, c.alpha
	prev := r
	c.now, c.mem = time.Now(), mem
	if !auto {
		// A fixed R takes no step: the decision is only reported (the
		// wanted R, gains and losses in Stats).
		r = c.decidePending(r, usage, alpha, mem)
		c.adjustments, c.jumps = steps, jumps
		p.target.Store(math.Float64bits(r))
		return
	}
	r = c.climb(r, usage, alpha, mem)
	tried := c.trial.tried()
	if c.jumps > jumps {
		r = c.startJump(prev, r, p.compressing.Load()) // jump.go: a jump is measured
	} else {
		r = c.considerTrial(prev, r, alpha, decided, c.wantedUp, p.compressing.Load(), c.now)
	}
	if c.trial.tried() > tried && c.adjustments == steps {
		c.adjustments++ // a trial is a step (ControllerSteps), once; its end is not
	}
	c.syncCompressing(p, c.now)
	c.applyShare(p, r)
	if c.log.Enabled(context.Background(), slog.LevelDebug) {
		c.log.Debug("bufferpool: decision", "from", prev, "to", p.Share(), "usage", usage, "alpha", alpha,
			"gain_u", finite(c.lastGainU), "loss_u", finite(c.lastLossU), "gain_c", finite(c.lastGainC), "loss_c", finite(c.lastLossC),
			"thin", c.thin, "wanted_up", c.wantedUp, "step", c.step, "up_stalled", c.upStalled, "compressing", p.compressing.Load(),
			"hits_u", decided.hitsU, "hits_c", decided.hitsC, "misses", decided.misses,
			"u_on_c", decided.uOnC, "u_on_miss", decided.uOnMiss, "c_on_miss", decided.cOnMiss, "c_on_comp", decided.cOnComp,
			"demotions", decided.demotions, "compressions", decided.compressions,
			"frame_evictions", decided.frameEvictions, "image_evictions", decided.imageEvictions,
			"t_hit_c", c.tHitC.v, "t_miss", c.tMiss.v, "t_comp", c.tComp.v, "t_disk", c.tDisk.v,
			"stuck_copy", c.trial.stuck[armCopy], "stuck_frames", c.trial.stuck[armFrames], "trial", c.trial.active)
	}
}

// finite is x for a log record, or its name if it is infinite or NaN,
// which a JSON handler cannot write.
func finite(x float64) any {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return x
}

// climb takes the hill climb's decision from R r on the evidence
// pending, unless a pending frames confirmation holds R (holdsR), the
// far view jumped with no recent window to judge the jump against
// (jump.go), or the decision is a step up from at or above a kept jump's
// R within its hold (jump.go): then the decision moves nothing, the
// climb's step and direction and the step counts stay as they were, and
// it is not counted as stepping; whether it wanted R up stays known
// (mayPay), except after a jump, which decides nothing else. Of these
// only a step up held by the jump counts as stalled (countStall: the
// climb wanted R up and could not raise it, as at its maximum). Within
// the hold a step up from below the jump's R goes no higher than it, and
// counts as the step it is.
func (c *controller) climb(r, usage, alpha float64, mem memState) float64 {
	steps, jumps, step, lastDir := c.adjustments, c.jumps, c.step, c.lastDir
	next := c.decidePending(r, usage, alpha, mem)
	_, judged := c.trial.recentWindow()
	waits := c.jumps > jumps && !judged
	if waits {
		c.log.Debug("bufferpool: far view waits for a recent window to judge its jump against", "from", r, "to", next)
	}
	// jump.go: a kept jump holds R at or below its own.
	heldAtJump := next > r && c.trial.holdsJump(c.now) && c.trial.jumpHoldAt <= r
	if next != r && (waits || heldAtJump || c.holdsR()) {
		c.adjustments, c.jumps, c.step, c.lastDir = steps, jumps, step, lastDir
		c.steppedUp = false
		if heldAtJump {
			c.countStall(r, r) // it wanted R up and could not raise it
		}
		return r
	}
	if next > r && c.trial.holdsJump(c.now) {
		next = math.Min(next, c.trial.jumpHoldAt)
	}
	if c.jumps == jumps {
		c.countStall(r, next)
	} else {
		// A jump is a trial: the stall count carries over it if it goes
		// back (no step up either), and a kept one starts it anew at the
		// next decision.
		c.steppedUp = false
	}
	return next
}

// countStall counts a decision that took R from prev to r into
// upStalled: one that wanted R up counts, unless the climb shows it is
// finding, which starts the count anew: R more than steadyDrift from
// where the count began, or two steps up in a row (a climb that finds
// steps while its evidence holds, and its step grows by 1.25× each time).
// One whose sides are level within their noise wins a small step now and
// then, among thin and level decisions that shrink its step, and creeps
// (document 000's NVMe + deflate-6 scenario, skewed keys, decompressions
// twice as slow as reads: R crept from 0.48 to 0.57 in steps of
// 0.006–0.022 over 7 s, never two in a row, images serving a third of
// the accesses, while frames alone read 1.1× faster); counted only while
// R did not move at all, it never stalled, and the frames arm waited for
// it as for a climb still finding (mayPay). A climb that finds on
// evidence so thin that it steps only every other decision, from the
// smallest step, counts as stalled too; a frames trial is then the
// arbiter (it must win clearly, and twice unless the model favours frames
// alone). The count carries over a trial that goes back (to within
// steadyDrift of where it started): the climb it left had stalled.
func (c *controller) countStall(prev, r float64) {
	up := r > prev
	if math.Abs(r-c.upStallFrom) > steadyDrift || (up && c.steppedUp) {
		c.upStalled, c.upStallFrom = 0, r // the climb is finding
	} else if c.wantedUp {
		c.upStalled++
	}
	c.steppedUp = up
}

// farViewReady reports whether the frames have evicted enough pages since
// the pool started (evicted, in units of the page memory) for the depth
// histogram to have seen every depth at which the images, holding u of
// the memory at α, serve hits: u/α. A page cannot be found deeper below
// the frames than the evictions so far, so until then the histogram is
// cut short: its image hits all look shallow, and the far view
// (lowerShare) predicts that larger frames would hold them, while in the
// steady state most would be deeper and become misses. Right after an
// open of sysbench rows at 1× the memory read by range scans, read-ahead
// filled the images within half a second, the warm-up ended, and in 1 of 2
// runs the far view jumped from R 0.5 to 0.10, where the gate switched
// compressions off and R stayed at 0.05: 25% misses and 454–525 txn/s,
// against 2,358–2,926 at R 0.94 with none (docs/BENCHMARKS.md).
func farViewReady(evicted, u, alpha float64) bool {
	return alpha > 0 && evicted >= u/alpha
}

// innerMargin is how many times the cached inner pages' bytes the frames
// keep at least in auto mode (innerCeiling): the inner pages, and room for
// the leaves that pass through the frames on their way in or out.
const innerMargin = 1.5

// innerCeiling is the highest R that leaves the frames innerMargin times
// the bytes of the cached inner pages (and MinShare of the memory at
// least), or MinShare if they need more. An index's inner pages are on the
// path of every lookup: each is used hundreds of times as often as a leaf,
// so its frame saves a decompression per use, where the same bytes of
// images would save a miss per use of two or three leaves. The hill climb
// cannot see this: an inner page missing from the frames is found in the
// images, and the few of its hits that a tenth of the budget would bring
// back weigh as much in the ghosts as the leaves' misses a tenth more of
// images would spare (JSON events at 8× the memory, 4 KiB pages: at auto's
// R 0.85, with 5 MiB of frames, 8% of the branch pages' uses were image
// hits, at R 0.95 26%, docs/BENCHMARKS.md).
//
// The count is of the inner pages cached, used lately or not: an image of
// a branch no lookup has used for long keeps its frames reserved until it
// is evicted. A B+tree's branches are all on the paths of uniform lookups,
// so this overstates the need only for indexes read in a small part.
func innerCeiling(minShare float64, mem memState) float64 {
	top := 1 - minShare
	if mem.avail <= 0 || mem.innerBytes <= 0 {
		return top
	}
	return math.Max(minShare, math.Min(top, 1-innerMargin*mem.innerBytes/mem.avail))
}

// resetGate starts the gate's windows anew (a regime changed under it).
func (c *controller) resetGate() {
	c.gateDem, c.gateHits, c.gateSkipped, c.gateConMiss = 0, 0, 0, 0
}

// applyShare makes r, at most the ceiling, the wanted and applied R (auto
// mode).
func (c *controller) applyShare(p *Pool, r float64) {
	r = math.Min(r, c.ceiling)
	p.target.Store(math.Float64bits(r))
	if r != p.Share() {
		p.setShare(r)
		p.retargetAll()
	}
}

// warmedUp reports whether the pool has left its warm-up, given share r,
// the memory and the interval's evidence: memory full, and then the frames
// turned over once (the pages loaded before the first eviction are
// demoted) and the images at their share, or the frames turned over four
// times. Until then the controller neither decides nor runs the gate (the
// costs are still measured). A pool that starts
// empty fills its frames first; the pages loaded before the first eviction
// have no image, so the first turnover of the frames compresses every
// demotion, and the images have few hits yet: judged then, the gate
// switched compressions off and the hill climb lowered R from the images'
// partial use, below α/(1+α) where pages no longer keep their read images
// and nothing fills the images again (uniform sysbench point reads at 1×:
// R = 0.05 where 0.95 ran 1.13× faster, docs/BENCHMARKS.md).
func (c *controller) warmedUp(r float64, mem memState, ev evidence, pageSize, parts int) bool {
	if mem.resident < mem.avail-float64(2*parts*pageSize) {
		return false
	}
	c.warmEvictions += ev.frameEvictions
	frames := mem.frameBytes / float64(pageSize)
	turnovers := float64(c.warmEvictions) / math.Max(frames, 1)
	return turnovers >= 1 && (mem.imageBytes >= 0.9*r*mem.avail || turnovers >= 4)
}

// gate switches compressing demotions off when they do not pay, and back
// on when they would (see the top of this file).
func (c *controller) gate(p *Pool, mem memState, images int, ev evidence, skipped, hitsOnCompressed int64) {
	// The judgement needs the steady state: memory full and a whole
	// turnover of the images (as many compressions as images).
	full := mem.resident >= mem.avail-float64(2*len(p.parts)*p.pageSize)
	turnover := int64(max(4*minGhostEvents, images))
	if p.compressing.Load() {
		if !full {
			c.gateDem, c.gateHits = 0, 0
			return
		}
		c.gateDem += ev.compressions
		c.gateHits += hitsOnCompressed
		if c.gateDem < turnover || !c.tDisk.valid || !c.tComp.valid {
			return
		}
		costHitC, costMiss, _ := c.costs()
		off := float64(c.gateHits)*(costMiss-costHitC) < float64(c.gateDem)*c.tComp.v
		c.gateDem, c.gateHits = 0, 0
		if off {
			p.compressing.Store(false)
			c.gateSkipped, c.gateConMiss = 0, 0
			c.trial.steadyN = 0 // a new regime: the steady window starts anew
			p.opts.Logger.Info("bufferpool: compressing demotions off", "t_disk", c.tDisk.v, "t_comp", c.tComp.v)
		}
		return
	}
	// Off: should it come back? The compressed ghost holds the pages
	// dropped since, as if demoted.
	c.gateSkipped += skipped
	c.gateConMiss += ev.cOnMiss
	if c.gateSkipped < turnover {
		return
	}
	costHitC, costMiss, _ := c.costs()
	if float64(c.gateConMiss)*(costMiss-costHitC) > 1.25*float64(c.gateSkipped)*c.tComp.value() {
		p.compressing.Store(true)
		c.trial.steadyN = 0
		p.opts.Logger.Info("bufferpool: compressing demotions on", "misses_it_would_serve", c.gateConMiss, "t_disk", c.tDisk.v, "t_comp", c.tComp.v)
	}
	c.gateSkipped, c.gateConMiss = 0, 0
}

// memory sums the partitions' memory and counts their images.
func (p *Pool) memory() (memState, int) {
	var m memState
	var images int
	for _, pt := range p.parts {
		pt.mu.RLock()
		m.frameBytes += float64(pt.framesUsed * pt.ps)
		m.imageBytes += float64(pt.imageBytes())
		m.resident += float64(pt.resident())
		m.avail += float64(pt.avail)
		m.budget += float64(pt.budget)
		m.innerBytes += float64(pt.innerPages.Load() * int64(pt.ps))
		images += pt.images + pt.redundant
		pt.mu.RUnlock()
	}
	return m, images
}

// imageAlpha is α, the mean compressed image size over the page size, of
// the images in the pool, and whether there are any.
func (p *Pool) imageAlpha() (float64, bool) {
	var bytes, n int64
	for _, pt := range p.parts {
		pt.mu.RLock()
		bytes += int64(pt.imageUsed())
		n += int64(pt.images + pt.redundant)
		pt.mu.RUnlock()
	}
	if n == 0 {
		return 0, false
	}
	return min(1, float64(bytes)/float64(n*int64(p.pageSize))), true
}

func (p *Pool) setShare(r float64) { p.share.Store(math.Float64bits(r)) }

// Share is R, the compressed tier's current share of the budget.
func (p *Pool) Share() float64 { return math.Float64frombits(p.share.Load()) }

// SetShare fixes R (and switches automatic tuning off, and compressing
// demotions on if the controller had switched them off). NaN is ignored.
func (p *Pool) SetShare(r float64) {
	if math.IsNaN(r) {
		return
	}
	c := &p.ctl
	c.mu.Lock() // not in the middle of a controller step
	defer c.mu.Unlock()
	p.fixed.Store(true)
	p.compressing.Store(true)
	c.trial.end() // a trial under way, and its hold, end with the user's R
	c.settling = false
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

package bufferpool

import (
	"math/rand/v2"
	"time"

	"github.com/stratadb/strata/internal/codec"
)

// Probe reads: what a miss costs when nothing misses.
//
// The controller prices the image hits it could lose with the cost of a
// miss (T_miss, the whole time of a load from the store). While the data
// fits in memory nothing misses, so that cost is the one measured during
// the warm-up, when the device was busy with the pool filling up: a
// 4 KiB store's warm-up measured 636 µs per miss where its steady state
// measured 118 µs (docs/BENCHMARKS.md), and the controller, pricing every
// image it would give up at five times its worth, kept a split that ran
// at half the speed of R = 0. So when an interval has image hits and no
// miss, and at most once per probeIntervals controller intervals (1 s by
// default), the controller reads one page from the store as a miss would
// (a clean page a frame holds, so that it exists), decompresses it into a buffer of its own and moves its
// estimates a quarter of the way towards what that took:
//
//	T_disk_read toward the probe's read,
//	T_miss toward the probe's read + T_image_hit (an image hit and a miss
//	       cause the same eviction; they differ by the read), or the
//	       probe's read + decompression before any image hit was timed.
//
// A stale cost so loses three quarters of its error within five probes.
//
// Lock rules: adjust decides under the controller's mutex whether the
// next interval probes (probe.wanted); probeIfWanted runs at the start of
// the next adjust without that mutex, so that Stats and SetShare never
// wait for a device read: it takes one partition's mu shared to choose the
// page, reads the store without any lock, and takes the controller's
// mutex to fold the result. The prober's buffers, rng and clock are
// touched only by the control loop; its count n only under the
// controller's mutex.

const (
	probeIntervals = 10 // controller intervals between probes: 1 s by default
	probeWeight    = 0.25
	probeScan      = 256 // frame slots looked at for a clean page
)

// prober holds the probe's buffers and state (the controller's).
type prober struct {
	last  time.Time
	rng   *rand.Rand
	buf   []byte // the image read
	frame []byte // its decompression
	n     int64  // probes that measured (Stats.MissProbes)
	// wanted: the last interval asked for a probe (probeDue).
	wanted bool
}

// probeDue reports whether the interval's evidence asks for a probe: image
// hits priced against a miss cost that nothing measured.
func (c *controller) probeDue(ev evidence, now time.Time, interval time.Duration) bool {
	return ev.misses == 0 && ev.hitsC > 0 && now.Sub(c.probe.last) >= probeIntervals*interval
}

// probeIfWanted reads one page from the store and ages the miss cost
// toward it, if the last interval asked for it (see the top of this
// file). It reports whether it measured.
func (p *Pool) probeIfWanted() bool {
	c := &p.ctl
	if !c.probe.wanted {
		return false
	}
	c.probe.wanted = false
	now := time.Now()
	c.probe.last = now
	if c.probe.rng == nil {
		c.probe.rng = rand.New(rand.NewPCG(uint64(now.UnixNano()), 0))
		c.probe.buf = make([]byte, 0, 2*p.pageSize+64)
		c.probe.frame = make([]byte, p.pageSize)
	}
	id, ok := p.cleanPageID(c.probe.rng)
	if !ok {
		return false
	}
	start := time.Now()
	img, err := p.store.ReadImage(id, c.probe.buf[:0])
	read := time.Since(start)
	if err != nil {
		return false // freed since, or an I/O error: the next load will say
	}
	start = time.Now()
	if err := codec.Decompress(img.Codec, c.probe.frame, img.Data); err != nil {
		return false
	}
	decom := time.Since(start)
	if cap(img.Data) <= 2*p.pageSize+64 {
		c.probe.buf = img.Data[:0]
	}
	c.mu.Lock()
	c.ageMissCost(read, decom)
	c.probe.n++
	c.mu.Unlock()
	return true
}

// ageMissCost moves T_disk_read and T_miss a probeWeight of the way toward
// a probe that read a page in read and decompressed it in decom.
func (c *controller) ageMissCost(read, decom time.Duration) {
	// One read and one decompression, which a descheduled controller
	// goroutine may have stretched: bounded as the timers bound theirs
	// (timer.go).
	if c.tDisk.valid {
		read = min(read, time.Duration(timerOutlier*c.tDisk.v))
	}
	if c.tDecom.valid {
		decom = min(decom, time.Duration(timerOutlier*c.tDecom.v))
	}
	c.tDisk.toward(float64(read), probeWeight)
	whole := float64(read + decom)
	if c.tHitC.valid {
		whole = float64(read) + c.tHitC.v
	}
	c.tMiss.toward(whole, probeWeight)
}

// toward moves the average the fraction w of the way to v (to v if it
// has none yet).
func (e *ewma) toward(v, w float64) {
	if !e.valid {
		e.v, e.valid = v, true
		return
	}
	e.v += w * (v - e.v)
}

// cleanPageID picks a page a frame holds unmodified, from a random
// partition: it is in the store. It looks at up to probeScan frame slots
// from a random one (at R near 1 most slots are free).
func (p *Pool) cleanPageID(rng *rand.Rand) (PageID, bool) {
	pt := p.parts[rng.IntN(len(p.parts))]
	pt.mu.RLock()
	defer pt.mu.RUnlock()
	n := len(pt.frameDesc)
	if n == 0 {
		return 0, false
	}
	start := rng.IntN(n)
	for i := 0; i < min(n, probeScan); i++ {
		di := pt.frameDesc[(start+i)%n]
		if di < 0 {
			continue
		}
		d := pt.desc(di)
		if d.state.Load() == stFrame && !d.dirty.Load() {
			return d.pageID(), true
		}
	}
	return 0, false
}

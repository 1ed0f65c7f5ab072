package bufferpool

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// TestMissCostAgesWithoutMisses: data that fits in memory compressed, so
// nothing misses once warm, and a miss cost the warm-up left five times
// too high (as a 4 KiB store's busy warm-up did: 636 µs against 118 µs).
// The controller must measure a miss by probing the store and bring the
// cost down to what a read costs now; without probes the stale cost
// stayed for good and priced every image the frames could take at five
// times its worth.
func TestMissCostAgesWithoutMisses(t *testing.T) {
	const budget = 1 << 20
	n := 2 * budget / testPageSize
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	writePages(t, s, n)
	p, err := New(s, poolOptions(budget, 0.9))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rng := rand.New(rand.NewPCG(9, 10))
	readRandom(t, p, rng, n, 20*n)

	const stale = 5 * time.Millisecond
	p.ctl.mu.Lock()
	p.ctl.tMiss = ewma{v: float64(stale), valid: true}
	p.ctl.tDisk = ewma{v: float64(stale), valid: true}
	probes := p.ctl.probe.n
	p.ctl.mu.Unlock()

	before := p.Stats()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		readRandom(t, p, rng, n, 2000)
		if st := p.Stats(); st.TMiss < stale/5 && st.MissProbes-probes >= 3 {
			break
		}
	}
	after := p.Stats()
	t.Logf("after %d probes: T_miss %v, T_disk_read %v, T_image_hit %v; misses %d",
		after.MissProbes-probes, after.TMiss, after.TDiskRead, after.TImageHit, after.Misses-before.Misses)
	if after.Misses != before.Misses {
		t.Fatalf("%d misses: the data should fit compressed", after.Misses-before.Misses)
	}
	if after.MissProbes == probes {
		t.Fatalf("no probe in 10 s of image hits without a miss")
	}
	if after.TMiss >= stale/5 || after.TDiskRead >= stale/5 {
		t.Errorf("T_miss %v, T_disk_read %v after %d probes of an in-memory store: still near the stale %v",
			after.TMiss, after.TDiskRead, after.MissProbes-probes, stale)
	}
}

// TestProbeAgesTowardReadPlusImageHit: each probe moves T_miss a quarter
// of the way to its read plus the whole time of an image hit (both cause
// the same eviction), and T_disk_read to its read.
func TestProbeAgesTowardReadPlusImageHit(t *testing.T) {
	c := testController()
	c.tMiss = ewma{v: float64(1000 * time.Microsecond), valid: true}
	c.tHitC = ewma{v: float64(40 * time.Microsecond), valid: true}
	c.ageMissCost(60*time.Microsecond, 10*time.Microsecond)
	if want := 1000 - 0.25*(1000-100); c.tMiss.v != want*float64(time.Microsecond) {
		t.Errorf("T_miss %v after one probe, want %vµs", time.Duration(c.tMiss.v), want)
	}
	if want := 100 - 0.25*(100-60); c.tDisk.v != want*float64(time.Microsecond) {
		t.Errorf("T_disk_read %v after one probe, want %vµs", time.Duration(c.tDisk.v), want)
	}
	for i := 0; i < 30; i++ {
		c.ageMissCost(60*time.Microsecond, 10*time.Microsecond)
	}
	if d := time.Duration(c.tMiss.v) - 100*time.Microsecond; d > 2*time.Microsecond {
		t.Errorf("T_miss %v after 31 probes of 60 µs reads with 40 µs image hits, want ~100 µs", time.Duration(c.tMiss.v))
	}
}

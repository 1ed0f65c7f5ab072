package bufferpool

import (
	"math"
	"testing"
)

func TestModelOptimum(t *testing.T) {
	// Slow device, fast codec: every byte is worth more compressed.
	m := Model{Alpha: 0.5, Beta: 0.125, TDecom: 10e-6, TDiskRead: 8e-3}
	if r := m.OptimalShare(); r < 0.999 {
		t.Errorf("T_disk ≫ T_decom: optimum R = %.3f, want the maximum (1)", r)
	}
	// Fast device, slow codec: InnoDB's inclusive tiers bottom out at
	// R = α/(1+α); Strata's exclusive tiers can go to 0.
	m = Model{Alpha: 0.5, Beta: 0.125, TDecom: 100e-6, TDiskRead: 20e-6}
	if r, want := m.OptimalShare(), 0.5/1.5; math.Abs(r-want) > 1e-3 {
		t.Errorf("T_decom > T_disk: optimum R = %.3f, want α/(1+α) = %.3f", r, want)
	}
	m.Exclusive = true
	if r := m.OptimalShare(); r > 1e-3 {
		t.Errorf("exclusive tiers, T_decom > T_disk: optimum R = %.3f, want 0", r)
	}
	// The sign of dT/dR is the paper's: βr[α·T_decom − (1−α)·T_disk].
	for _, c := range []struct{ alpha, decom, disk float64 }{{0.5, 30e-6, 20e-6}, {0.3, 50e-6, 20e-6}, {0.4, 10e-6, 20e-6}} {
		m := Model{Alpha: c.alpha, Beta: 0.05, TDecom: c.decom, TDiskRead: c.disk, Exclusive: true}
		slope := m.TRead(0.6) - m.TRead(0.5)
		want := c.alpha*c.decom - (1-c.alpha)*c.disk
		if math.Signbit(slope) != math.Signbit(want) {
			t.Errorf("%+v: dT/dR sign %v, paper says %v", c, slope, want)
		}
	}
	// Hit ratios never exceed 1 even when the cache could hold the data.
	m = Model{Alpha: 0.25, Beta: 0.5, TDecom: 1, TDiskRead: 1}
	for R := 0.0; R <= 1; R += 0.1 {
		if hc, hu := m.HitRatios(R); hc+hu > 1+1e-12 || hc < 0 || hu < 0 {
			t.Errorf("R=%.1f: H_c %.3f + H_u %.3f", R, hc, hu)
		}
	}
}

func TestGhost(t *testing.T) {
	g := newGhost(16)
	g.setWindow(4)
	for id := PageID(0); id < 10; id++ {
		g.add(id)
	}
	if g.take(5) {
		t.Error("id 5 is outside the 4 most recent evictions")
	}
	if !g.take(9) || !g.take(6) {
		t.Error("recent ids not found")
	}
	if g.take(9) {
		t.Error("take did not forget the id")
	}
	for id := PageID(100); id < 200; id++ {
		g.add(id)
	}
	if len(g.seq) > 16 {
		t.Errorf("ghost map grew to %d entries, capacity 16", len(g.seq))
	}
}

func TestFreeBitmapLowestFirst(t *testing.T) {
	b := newFreeBitmap(130)
	for i := 0; i < 130; i++ {
		if got := b.alloc(); got != i {
			t.Fatalf("alloc %d: got %d", i, got)
		}
	}
	if b.alloc() != -1 {
		t.Fatal("full bitmap allocated")
	}
	b.release(100)
	b.release(3)
	if b.alloc() != 3 || b.alloc() != 100 || b.alloc() != -1 {
		t.Fatal("not lowest first")
	}
}

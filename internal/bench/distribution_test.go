package bench

import (
	"math"
	"slices"
	"sync/atomic"
	"testing"
)

func draw(t *testing.T, name string, n uint64, draws int, seed uint64, thread int) []uint64 {
	t.Helper()
	var next atomic.Uint64
	next.Store(n)
	g, err := newKeyGen(name, n, newRand(seed, thread), &next, zeta(n, zipfianTheta))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]uint64, draws)
	for i := range out {
		out[i] = g.Next()
		if out[i] >= n {
			t.Fatalf("%s: draw %d out of [0, %d)", name, out[i], n)
		}
	}
	return out
}

func counts(ids []uint64, n uint64) []int {
	c := make([]int, n)
	for _, id := range ids {
		c[id]++
	}
	return c
}

// topShare is the share of draws that went to the most drawn frac of ids.
func topShare(c []int, frac float64) float64 {
	sorted := slices.Clone(c)
	slices.Sort(sorted)
	slices.Reverse(sorted)
	top, all := 0, 0
	for i, x := range sorted {
		if i < int(frac*float64(len(c))) {
			top += x
		}
		all += x
	}
	return float64(top) / float64(all)
}

func TestUniform(t *testing.T) {
	const n, draws = 100, 200_000
	c := counts(draw(t, "uniform", n, draws, 1, 0), n)
	for id, x := range c {
		if math.Abs(float64(x)-draws/n) > 0.1*draws/n {
			t.Errorf("id %d drawn %d times, want about %d", id, x, draws/n)
		}
	}
}

func TestSpecial(t *testing.T) {
	const n, draws = 100_000, 200_000
	ids := draw(t, "special", n, draws, 1, 0)
	lo := specialStart(n)
	hot := 0
	for _, id := range ids {
		if id >= lo && id < lo+n/100 {
			hot++
		}
	}
	// 75% go to the special rows, plus the share of the bell around the
	// centre that falls on them (a few percent).
	if share := float64(hot) / draws; share < 0.75 || share > 0.80 {
		t.Errorf("%.3f of requests to the special 1%%, want 0.75..0.80", share)
	}
	if lo < n/2-n/100 || lo > n/2 {
		t.Errorf("special rows start at %d, want centred on %d", lo, n/2)
	}
}

func TestPareto(t *testing.T) {
	const n, draws = 10_000, 200_000
	ids := draw(t, "pareto", n, draws, 1, 0)
	low := 0
	for _, id := range ids {
		if id < n/5 {
			low++
		}
	}
	// h = 0.2: 80% of requests to the first 20% of rows.
	if share := float64(low) / draws; math.Abs(share-0.8) > 0.01 {
		t.Errorf("%.3f of requests to the first 20%%, want 0.80", share)
	}
}

func TestZipfianSkewAndScramble(t *testing.T) {
	const n, draws = 10_000, 200_000
	ids := draw(t, "zipfian", n, draws, 1, 0)
	c := counts(ids, n)
	// The hottest 1% of 10^10 items (by rank) take zeta(100)/zeta(10^10)
	// ≈ 20% of requests; scrambling keeps them on distinct keys mostly.
	if share := topShare(c, 0.01); share < 0.15 || share > 0.35 {
		t.Errorf("hottest 1%% of keys got %.3f of requests, want about 0.2", share)
	}
	// Scrambled: the hot keys are spread, not the first rows.
	firstPct := 0
	for _, x := range c[:n/100] {
		firstPct += x
	}
	if share := float64(firstPct) / draws; share > 0.05 {
		t.Errorf("first 1%% of ids got %.3f of requests: not scrambled", share)
	}
	// The hottest item gets 1/zeta(10^10) ≈ 3.8% of requests.
	if top := float64(slices.Max(c)) / draws; top < 0.03 || top > 0.05 {
		t.Errorf("hottest key got %.3f of requests, want about 0.038", top)
	}
}

func TestZetaMatchesYCSB(t *testing.T) {
	// YCSB's hard-coded zeta(10^10, 0.99).
	if got := zeta(scrambledItems, zipfianTheta); math.Abs(got-scrambledZetaN)/scrambledZetaN > 1e-9 {
		t.Errorf("zeta(1e10) = %.12f, YCSB has %.12f", got, scrambledZetaN)
	}
	// The Euler–Maclaurin tail agrees with the exact sum just past the
	// switch.
	n := uint64(zetaExactTerms + 5000)
	var exact float64
	for i := uint64(1); i <= n; i++ {
		exact += math.Pow(float64(i), -zipfianTheta)
	}
	if got := zeta(n, zipfianTheta); math.Abs(got-exact)/exact > 1e-12 {
		t.Errorf("zeta(%d) = %.15f, exact %.15f", n, got, exact)
	}
}

func TestLatestFollowsInserts(t *testing.T) {
	const n = 1000
	var next atomic.Uint64
	next.Store(n)
	g := newLatest(newRand(1, 0), &next, n, zeta(n, zipfianTheta))
	c := map[uint64]int{}
	for range 50_000 {
		c[g.Next()]++
	}
	if c[n-1] < c[n-2] || c[n-2] < c[n-10] || c[n-1] < 50_000/40 {
		t.Errorf("newest rows not the most popular: %d, %d, %d", c[n-1], c[n-2], c[n-10])
	}
	next.Store(n + 500)
	newest := 0
	for range 10_000 {
		id := g.Next()
		if id >= n+500 {
			t.Fatalf("draw %d beyond the newest id %d", id, n+499)
		}
		if id == n+499 {
			newest++
		}
	}
	if newest < 10_000/40 {
		t.Errorf("newest id drawn %d times in 10000 after growth", newest)
	}
	// Incremental zeta equals a fresh computation.
	if math.Abs(g.z.zetaN-zeta(n+500, zipfianTheta)) > 1e-9 {
		t.Errorf("grown zeta %.12f, fresh %.12f", g.z.zetaN, zeta(n+500, zipfianTheta))
	}
}

func TestDistributionsDeterministic(t *testing.T) {
	for _, name := range Distributions {
		a := draw(t, name, 5000, 1000, 7, 3)
		b := draw(t, name, 5000, 1000, 7, 3)
		if !slices.Equal(a, b) {
			t.Errorf("%s: same seed and thread, different draws", name)
		}
		if slices.Equal(a, draw(t, name, 5000, 1000, 7, 4)) {
			t.Errorf("%s: two threads draw the same stream", name)
		}
		if slices.Equal(a, draw(t, name, 5000, 1000, 8, 3)) {
			t.Errorf("%s: two seeds draw the same stream", name)
		}
	}
}

func TestUnknownDistribution(t *testing.T) {
	var next atomic.Uint64
	if _, err := newKeyGen("gaussian", 10, newRand(1, 0), &next, 0); err == nil {
		t.Error("unknown distribution accepted")
	}
	if _, err := newKeyGen("uniform", 0, newRand(1, 0), &next, 0); err == nil {
		t.Error("empty range accepted")
	}
}

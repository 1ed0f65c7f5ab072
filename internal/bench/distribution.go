package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
)

// Key distributions choose which row a request touches. Each worker
// goroutine owns its generators (and their PCG source), so the hot path
// takes no lock; the only shared state is the insert counter that "latest"
// reads atomically.
//
// Rows are numbered from 0, so every distribution returns ids in
// [0, TableSize) except "latest", which follows the inserts.

// Distributions lists the names accepted in RunSpec.Distribution.
var Distributions = []string{"uniform", "special", "zipfian", "pareto", "latest"}

// keyGen draws row ids.
type keyGen interface {
	Next() uint64
}

// newKeyGen returns the generator named name over [0, n). nextID is the
// shared insert counter (the next id an insert will take), used by
// "latest"; zetaN is zeta(nextID, zipfianTheta) for "latest", computed once
// per run rather than per worker (see zeta).
func newKeyGen(name string, n uint64, rng *rand.Rand, nextID *atomic.Uint64, zetaN float64) (keyGen, error) {
	if n == 0 {
		return nil, fmt.Errorf("bench: key distribution over an empty table")
	}
	switch name {
	case "uniform":
		return &uniformGen{rng: rng, n: n}, nil
	case "special":
		return &specialGen{rng: rng, n: n}, nil
	case "zipfian":
		return newScrambledZipfian(rng, n), nil
	case "pareto":
		return &paretoGen{rng: rng, n: n, power: math.Log(paretoH) / math.Log(1-paretoH)}, nil
	case "latest":
		return newLatest(rng, nextID, nextID.Load(), zetaN), nil
	}
	return nil, fmt.Errorf("bench: unknown distribution %q (known: %v)", name, Distributions)
}

// newRand returns the PCG source of one worker: distinct per thread, fixed
// by the seed.
func newRand(seed uint64, thread int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, mix64(uint64(thread)+0x5851f42d4c957f2d)))
}

type uniformGen struct {
	rng *rand.Rand
	n   uint64
}

func (g *uniformGen) Next() uint64 { return g.rng.Uint64N(g.n) }

// Sysbench's "special" distribution (sb_rand_special in sysbench 1.0's
// sb_rand.c, with its defaults --rand-spec-pct=1 --rand-spec-res=75
// --rand-spec-iter=12): a uniform draw over four times the range decides;
// three quarters of the requests go uniformly to the special rows, 1% of
// the table centred on its middle id (as sysbench places them, not the
// first 1%), and the rest follow the mean of 12 uniform draws, a bell
// around the same centre. So a little over 75% of requests hit the 1%.
const (
	specialPct  = 1  // share of rows that are special, percent
	specialRes  = 75 // share of requests sent to them, percent
	specialIter = 12 // uniform draws averaged for the other requests
)

type specialGen struct {
	rng *rand.Rand
	n   uint64
}

func (g *specialGen) Next() uint64 {
	t := g.n
	rangeSize := t * (100 / (100 - specialRes))
	res := g.rng.Uint64N(rangeSize)
	if res < t {
		var sum uint64
		for range specialIter {
			sum += g.rng.Uint64N(t)
		}
		return sum / specialIter
	}
	d := max(t*specialPct/100, 1)
	return res%d + specialStart(t)
}

// specialStart is the first special row of a table of t rows.
func specialStart(t uint64) uint64 {
	return t/2 - t*specialPct/(100*2)
}

// Sysbench's pareto (sb_rand_pareto): a + n·u^power with power =
// log(h)/log(1-h), h = 0.2 by default (--rand-pareto-h): the low ids are
// hot, about 80% of requests go to the first 20% of rows... and so on
// recursively.
const paretoH = 0.2

type paretoGen struct {
	rng   *rand.Rand
	n     uint64
	power float64
}

func (g *paretoGen) Next() uint64 {
	v := uint64(float64(g.n) * math.Pow(g.rng.Float64(), g.power))
	return min(v, g.n-1)
}

// zipfianTheta is YCSB's ZIPFIAN_CONSTANT.
const zipfianTheta = 0.99

// zipfian is YCSB's ZipfianGenerator: the algorithm of Gray et al., "Quickly
// Generating Billion-Record Synthetic Databases" (SIGMOD 1994), drawing from
// [0, items) with P(i) ∝ 1/(i+1)^theta; item 0 is the most popular.
type zipfian struct {
	rng             *rand.Rand
	items           uint64
	theta, alpha    float64
	zeta2, zetaN    float64
	eta, halfPowTh  float64
	zetaComputedFor uint64
}

func newZipfian(rng *rand.Rand, items uint64, zetaN float64) *zipfian {
	z := &zipfian{rng: rng, theta: zipfianTheta, alpha: 1 / (1 - zipfianTheta),
		zeta2: zetaSum(1, 2, zipfianTheta), halfPowTh: math.Pow(0.5, zipfianTheta)}
	z.setItems(items, zetaN)
	return z
}

func (z *zipfian) setItems(items uint64, zetaN float64) {
	z.items, z.zetaN, z.zetaComputedFor = items, zetaN, items
	z.eta = (1 - math.Pow(2/float64(items), 1-z.theta)) / (1 - z.zeta2/z.zetaN)
}

// grow extends the item count, updating zeta incrementally as YCSB does
// for its latest distribution (only the new terms are summed).
func (z *zipfian) grow(items uint64) {
	if items <= z.zetaComputedFor {
		return
	}
	z.setItems(items, z.zetaN+zetaSum(z.zetaComputedFor+1, items, z.theta))
}

func (z *zipfian) Next() uint64 {
	u := z.rng.Float64()
	uz := u * z.zetaN
	if uz < 1 {
		return 0
	}
	if uz < 1+z.halfPowTh {
		return 1
	}
	v := uint64(float64(z.items) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(v, z.items-1)
}

// YCSB's ScrambledZipfianGenerator draws from a zipfian over 10^10 items
// (whose zeta it hard-codes) and hashes the result with FNV-1a into the
// key range, so the popular items are spread over the table instead of
// being its first rows. The popularity of the hottest keys therefore does
// not depend on the table size.
const (
	scrambledItems = 10_000_000_000
	scrambledZetaN = 26.46902820178302 // zeta(10^10, 0.99), YCSB's ZETAN
)

type scrambledZipfian struct {
	z *zipfian
	n uint64
}

func newScrambledZipfian(rng *rand.Rand, n uint64) *scrambledZipfian {
	return &scrambledZipfian{z: newZipfian(rng, scrambledItems, scrambledZetaN), n: n}
}

func (g *scrambledZipfian) Next() uint64 {
	return fnv64(g.z.Next()) % g.n
}

// fnv64 is YCSB's Utils.fnvhash64: FNV-1a over the 8 bytes of v, low byte
// first, made non-negative as a Java long.
func fnv64(v uint64) uint64 {
	h := uint64(0xcbf29ce484222325)
	for range 8 {
		h ^= v & 0xff
		h *= 1099511628211
		v >>= 8
	}
	if int64(h) < 0 {
		h = uint64(-int64(h))
	}
	return h
}

// latestGen is YCSB's SkewedLatestGenerator: the most recently inserted
// row is the most popular, then the one before, zipfian-distributed
// backwards from the newest id. Ids still being inserted by another worker
// may be drawn and not be found yet; YCSB has the same window.
type latestGen struct {
	z      *zipfian
	nextID *atomic.Uint64
}

func newLatest(rng *rand.Rand, nextID *atomic.Uint64, n uint64, zetaN float64) *latestGen {
	return &latestGen{z: newZipfian(rng, n, zetaN), nextID: nextID}
}

func (g *latestGen) Next() uint64 {
	items := g.nextID.Load()
	g.z.grow(items)
	newest := items - 1
	return newest - min(g.z.Next(), newest)
}

// zeta is zeta(n, theta) = Σ_{i=1..n} 1/i^theta. Summing the first million
// terms exactly and the tail with the Euler–Maclaurin formula keeps it
// O(1) for large tables (a worker per thread needs it at start) with a
// relative error far below 1e-12.
func zeta(n uint64, theta float64) float64 {
	return zetaSum(1, n, theta)
}

const zetaExactTerms = 1 << 20

// zetaSum is Σ_{i=from..to} 1/i^theta.
func zetaSum(from, to uint64, theta float64) float64 {
	if from > to {
		return 0
	}
	if to-from < zetaExactTerms {
		var s float64
		for i := from; i <= to; i++ {
			s += math.Pow(float64(i), -theta)
		}
		return s
	}
	// Exact head, then for f(x) = x^-theta over [a, b]:
	// Σ_{i=a+1..b} f(i) ≈ ∫_a^b f + (f(b) - f(a))/2 + (f'(b) - f'(a))/12.
	a := from + zetaExactTerms - 1
	s := zetaSum(from, a, theta)
	fa, fb := float64(a), float64(to)
	integral := (math.Pow(fb, 1-theta) - math.Pow(fa, 1-theta)) / (1 - theta)
	f := func(x float64) float64 { return math.Pow(x, -theta) }
	df := func(x float64) float64 { return -theta * math.Pow(x, -theta-1) }
	return s + integral + (f(fb)-f(fa))/2 + (df(fb)-df(fa))/12
}

// mix64 is splitmix64's output function, a bijection on uint64.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

package bufferpool

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLowerShare: shallow image hits (a hot set just below the frames)
// make the frames take the memory; deep ones (pages the images alone
// hold) or unplaced ones keep R.
func TestLowerShare(t *testing.T) {
	const hitC, miss = 20e3, 100e3 // ns
	var shallow, deep [depthBuckets]int64
	shallow[depthScale/8] = 1000 // an eighth of the memory below the frames
	deep[3*depthScale] = 1000    // three times the memory below
	if r, _, _, ok := lowerShare(0.5, 0.05, 0.5, hitC, miss, &shallow, 1000, 10, 10000); !ok || r > 0.351 {
		t.Errorf("shallow hits: R %.2f, ok %v; want a jump to ≤ 0.35", r, ok)
	}
	if r, _, _, ok := lowerShare(0.5, 0.05, 0.5, hitC, miss, &deep, 1000, 10, 10000); ok {
		t.Errorf("deep hits: jump to %.2f, want none", r)
	}
	var none [depthBuckets]int64
	if r, _, _, ok := lowerShare(0.5, 0.05, 0.5, hitC, miss, &none, 1000, 10, 10000); ok {
		t.Errorf("hits the histogram did not place: jump to %.2f, want none", r)
	}
	if r, _, _, ok := lowerShare(0.5, 0.05, 0.5, hitC, miss, &shallow, 100, 10, 10000); ok {
		t.Errorf("too few hits to judge: jump to %.2f, want none", r)
	}
}

// TestBelowStackModel: the Fenwick stack against a plain set of the
// evictions still live, through many wraps of the ring, with takes (image
// hits) and drops (pages loaded by a miss), starting from 0 and just before
// the eviction count wraps around uint32, so that the ring's positions and
// the window checks are tested across the wrap; takes and drops of
// evictions that left the ring, or were taken or dropped already, change
// nothing.
func TestBelowStackModel(t *testing.T) {
	for _, start := range []uint32{0, math.MaxUint32 - 5000, math.MaxUint32 - 63} {
		b := newBelowStack(16) // a ring of 64
		b.next = start
		n := uint32(len(b.live))
		rng := rand.New(rand.NewPCG(uint64(start), 2))
		live := map[uint32]bool{}
		var seqs []uint32
		inRing := func(s uint32) bool { return b.next-s <= n && b.next != s }
		for i := 0; i < 20000; i++ {
			switch op := rng.IntN(4); {
			case op < 2 || len(seqs) == 0:
				s := b.push()
				delete(live, s-n) // left the ring
				live[s] = true
				seqs = append(seqs, s)
				if len(seqs) > 200 {
					seqs = seqs[100:]
				}
			case op == 2:
				s := seqs[rng.IntN(len(seqs))]
				if rng.IntN(8) == 0 {
					s += uint32(rng.IntN(3 * int(n))) // also evictions not made yet
				}
				want, wantOK := 0, live[s] && inRing(s)
				for o := range live {
					if d := o - s; d > 0 && d < 1<<31 && inRing(o) {
						want++
					}
				}
				got, ok := b.take(s)
				if ok != wantOK || (ok && got != want) {
					t.Fatalf("start %d, op %d: take(%d) = %d, %v; want %d, %v", start, i, s, got, ok, want, wantOK)
				}
				delete(live, s)
			default:
				s := seqs[rng.IntN(len(seqs))]
				b.drop(s)
				delete(live, s)
			}
			if i%997 == 0 { // the tree's total is the live count
				count := 0
				for o := range live {
					if inRing(o) {
						count++
					}
				}
				if got := b.prefix(int(n)); got != count {
					t.Fatalf("start %d, op %d: %d live in the tree, want %d", start, i, got, count)
				}
			}
		}
	}
}

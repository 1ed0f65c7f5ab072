package bufferpool

import "math"

// The depth histogram: how far below the frames each image hit was, and
// what it says about giving the frames much more memory than the hill
// climb's tenth of the budget.
//
// Pages leave the frames in eviction order; each eviction is numbered
// (desc.evictedAt). When a page is hit as an image, the pages evicted
// after it and not used since (the "below" stack: each page's latest
// eviction until it is loaded again) are the pages between it and the
// frames, as in an LRU stack: with that many more frames it would have
// been a frame hit. Counting them distinctly matters: a hot set larger
// than the frames cycles through them, and most evictions since a page's
// are of pages already loaded again. The stack is a Fenwick tree over a
// ring of the latest evictions (4 × the frames), O(log n) per eviction and
// image hit; a page loaded by a miss leaves it if the uncompressed ghost
// still knows its eviction number (else its entry stays until the ring
// wraps, which can only make depths larger: the prediction errs towards
// keeping R).
//
// The histogram counts image hits by that depth in units of the
// partition's page memory (avail / page size), 1/depthScale wide, up to
// depthBuckets/depthScale; deeper hits land in the last bucket.
//
// From it the controller predicts the time per access at a smaller R′
// (images' share) than the current one, u. Pages leave the frames in
// eviction order and the images hold the most recently evicted ones, so
// with frames larger by u − R′ of the memory and images of R′ of it
// (R′/α pages of it), an image hit at depth x becomes
//
//	a frame hit          if x < u − R′,
//	an image hit         if x < u − R′ + R′/α,
//	a miss               otherwise;
//
// misses stay misses (they were deeper than all the images, deeper than
// any of these). This sees the cliff a hill climb cannot: a hot set larger
// than the frames by more than a tenth of the budget, whose image hits
// each cost a decompression, and which frames larger by a quarter or half
// of the memory would hold entirely. The hill climb's ghosts see only the
// next tenth, where the images' loss (a few more misses, each costing far
// more than an image hit) outweighs the frames' gain, and it stays put
// (docs/BENCHMARKS.md, special keys at 1×).
//
// Larger R needs no such view: the compressed ghost measures what more
// image memory would serve, and the hill climb follows it.
//
// Lock rules: countDepth is called with the partition's mu held (by
// beginPromote); the counters are atomics, swapped to zero by the
// controller without the mutex.

const (
	depthScale   = 64  // buckets per unit of page memory
	depthBuckets = 256 // up to 4 × the page memory
)

// countDepth counts an image hit on the page evicted from its frame at
// eviction number seq. Called with mu held.
func (pt *partition) countDepth(seq uint32) {
	e, ok := pt.below.take(seq)
	if !ok || pt.avail <= 0 {
		pt.st.depth[depthBuckets-1].Add(1)
		return
	}
	b := int(float64(e) * float64(pt.ps) * depthScale / float64(pt.avail))
	pt.st.depth[min(b, depthBuckets-1)].Add(1)
}

// belowStack numbers frame evictions and counts, for any recent one, the
// later ones whose pages have not been loaded again (see the top of this
// file). Guarded by the partition's mu.
type belowStack struct {
	tree []int32 // Fenwick tree over ring positions (1-based)
	live []bool  // ring position holds a page's latest eviction, not loaded since
	next uint32  // number of the next eviction
}

func newBelowStack(frames int) *belowStack {
	n := 64
	for n < 4*frames {
		n *= 2
	}
	return &belowStack{tree: make([]int32, n+1), live: make([]bool, n)}
}

func (b *belowStack) bytes() int { return len(b.tree)*4 + len(b.live) }

func (b *belowStack) addAt(pos int, v int32) {
	for i := pos + 1; i < len(b.tree); i += i & -i {
		b.tree[i] += v
	}
}

// prefix counts the live positions below pos.
func (b *belowStack) prefix(pos int) int {
	s := 0
	for i := pos; i > 0; i -= i & -i {
		s += int(b.tree[i])
	}
	return s
}

// push numbers a frame eviction; the oldest entry leaves the ring.
func (b *belowStack) push() uint32 {
	seq := b.next
	b.next++
	pos := int(seq % uint32(len(b.live)))
	if b.live[pos] {
		b.addAt(pos, -1)
	}
	b.live[pos] = true
	b.addAt(pos, 1)
	return seq
}

// take removes eviction seq (its page is loaded again) and returns how many
// later evictions are still live, or false if seq left the ring or was
// taken already.
func (b *belowStack) take(seq uint32) (int, bool) {
	n := uint32(len(b.live))
	if b.next-seq > n || b.next == seq {
		return 0, false
	}
	pos := int(seq % n)
	if !b.live[pos] {
		return 0, false
	}
	b.live[pos] = false
	b.addAt(pos, -1)
	end := int(b.next % n) // exclusive end of the later evictions
	var later int
	if end > pos {
		later = b.prefix(end) - b.prefix(pos+1)
	} else {
		later = b.prefix(int(n)) - b.prefix(pos+1) + b.prefix(end)
	}
	return later, true
}

// drop removes eviction seq without counting (a page loaded by a miss).
func (b *belowStack) drop(seq uint32) {
	n := uint32(len(b.live))
	if b.next-seq > n || b.next == seq {
		return
	}
	if pos := int(seq % n); b.live[pos] {
		b.live[pos] = false
		b.addAt(pos, -1)
	}
}

// jumpMargin: a jump needs a predicted time per access this much below the
// current one (the prediction idealises CLOCK as LRU).
const jumpMargin = 0.25

// minJumpHits: image hits the histogram needs before it is trusted.
const minJumpHits = 256

// framesAloneMisses predicts from the depth histogram the misses that
// frames alone (R = minShare, images of minShare of the memory at most)
// would have had over the accesses of hist's interval, in which the images
// held u of the memory: today's misses, and the image hits deeper than
// frames larger by u − minShare of the page memory and images holding
// minShare/α of it would reach (lowerShare's rule at its lowest candidate;
// image hits the histogram did not place count as deep, as do depths
// overstated by stale entries: the prediction errs towards more misses,
// against the frames trial it gates). ok is false where the histogram
// holds too few image hits to be trusted (minJumpHits).
func framesAloneMisses(u, minShare, alpha float64, hist *[depthBuckets]int64, hitsC, misses int64) (predicted float64, ok bool) {
	if hitsC < minJumpHits || alpha <= 0 {
		return 0, false
	}
	imagesEnd := math.Max(0, u-minShare) + minShare/alpha
	var counted, deep int64
	for b, n := range hist {
		counted += n
		if b == depthBuckets-1 || (float64(b)+0.5)/depthScale >= imagesEnd {
			deep += n
		}
	}
	return float64(misses + deep + max(0, hitsC-counted)), true
}

// lowerShare returns the share below u (the images' current share of the
// memory) whose predicted time per access is lowest, and that time and the
// current one (both per access, nanoseconds), or ok false when no smaller
// share is predicted to beat the current time by jumpMargin. α is the mean
// image size over the page size; costHitC and costMiss what an image hit
// and a miss cost; hist the interval's depth histogram, misses its misses.
func lowerShare(u, minShare, alpha, costHitC, costMiss float64, hist *[depthBuckets]int64, hitsC, misses, accesses int64) (r, predicted, current float64, ok bool) {
	if accesses == 0 || hitsC < minJumpHits || alpha <= 0 {
		return u, 0, 0, false
	}
	current = (float64(hitsC)*costHitC + float64(misses)*costMiss) / float64(accesses)
	var counted int64
	for _, n := range hist {
		counted += n
	}
	best, bestR := current, u
	// Candidates every 0.05 below u, down to minShare.
	for k := int(math.Ceil(u*20)) - 1; k >= 0; k-- {
		cand := math.Max(float64(k)/20, minShare)
		if cand >= u {
			continue
		}
		toFrames := u - cand
		imagesEnd := toFrames + cand/alpha
		// Image hits the histogram did not place count as deep.
		cost := float64(misses+max(0, hitsC-counted)) * costMiss
		for b, n := range hist {
			if n == 0 {
				continue
			}
			x := (float64(b) + 0.5) / depthScale
			if b == depthBuckets-1 {
				x = math.Inf(1)
			}
			switch {
			case x < toFrames:
			case x < imagesEnd:
				cost += float64(n) * costHitC
			default:
				cost += float64(n) * costMiss
			}
		}
		cost /= float64(accesses)
		if cost < best {
			best, bestR = cost, cand
		}
		if cand == minShare {
			break
		}
	}
	if bestR < u && best < current*(1-jumpMargin) {
		return bestR, best, current, true
	}
	return u, best, current, false
}

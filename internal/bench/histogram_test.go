package bench

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestHistogramBuckets(t *testing.T) {
	prev := -1
	for _, v := range []uint64{0, 1, 63, 64, 65, 66, 127, 128, 1000, 1 << 20, 123456789, 1 << 40} {
		b := histBucket(v)
		lo, hi := histBucketRange(b)
		if v < lo || v > hi {
			t.Errorf("value %d in bucket %d = [%d, %d]", v, b, lo, hi)
		}
		if v >= 2*histSub && float64(hi-lo+1) > float64(lo)/histSub+1 {
			t.Errorf("bucket [%d, %d] wider than 1/%d of its values", lo, hi, histSub)
		}
		if b < prev {
			t.Errorf("bucket of %d (%d) below the previous, smaller value's (%d)", v, b, prev)
		}
		prev = b
	}
	// Consecutive buckets tile the range.
	for b := 1; b < histBuckets; b++ {
		_, hiPrev := histBucketRange(b - 1)
		lo, _ := histBucketRange(b)
		if lo != hiPrev+1 {
			t.Fatalf("bucket %d starts at %d, previous ends at %d", b, lo, hiPrev)
		}
	}
	if histBucket(math.MaxUint64) != histBuckets-1 {
		t.Error("huge value not in the last bucket")
	}
}

func TestHistogramQuantiles(t *testing.T) {
	var a, b histogram
	rng := rand.New(rand.NewPCG(1, 2))
	// Uniform latencies from 0 to 10 ms split over two histograms.
	for i := range 100_000 {
		d := time.Duration(rng.Int64N(int64(10 * time.Millisecond)))
		if i%2 == 0 {
			a.record(d)
		} else {
			b.record(d)
		}
	}
	a.merge(&b)
	for _, q := range []float64{0.5, 0.95, 0.99} {
		want := q * float64(10*time.Millisecond)
		if got := a.quantile(q); math.Abs(got-want)/want > 0.04 {
			t.Errorf("q%.2f = %.0f ns, want %.0f ± 4%%", q, got, want)
		}
	}
	var empty histogram
	if empty.quantile(0.5) != 0 {
		t.Error("empty histogram has a median")
	}
	a.reset()
	if a.total != 0 || a.quantile(0.99) != 0 {
		t.Error("reset left counts")
	}
}

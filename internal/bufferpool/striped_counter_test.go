package bufferpool

import (
	"sync"
	"testing"
)

// TestStripedCounterCountsEveryAdd: adds from many goroutines at once,
// whatever stripes their stacks hash to, sum exactly.
func TestStripedCounterCountsEveryAdd(t *testing.T) {
	var c stripedCounter
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				c.add(1)
			}
		}()
	}
	wg.Wait()
	if got := c.Load(); got != 16000 {
		t.Fatalf("Load = %d after 16,000 adds", got)
	}
}

// TestStackStripesSpread: stacks 2 KiB apart (goroutines' smallest stacks,
// allocated side by side) hash to every stripe, so that goroutines adding
// at once mostly write different cache lines.
func TestStackStripesSpread(t *testing.T) {
	seen := make(map[int]int)
	const base = uintptr(0xc000100000)
	for i := uintptr(0); i < 64; i++ {
		s := stackStripe(base + i*2048 + 100)
		if s < 0 || s >= counterStripes {
			t.Fatalf("stripe %d out of range", s)
		}
		seen[s]++
	}
	if len(seen) != counterStripes {
		t.Fatalf("64 neighbouring stacks hashed to %d of %d stripes: %v", len(seen), counterStripes, seen)
	}
	for s, n := range seen {
		if n > 16 {
			t.Fatalf("stripe %d took %d of 64 neighbouring stacks: %v", s, n, seen)
		}
	}
}

package bufferpool

import (
	"math/rand/v2"
	"sync/atomic"
)

// stripedCounter is a count that many goroutines add to at once: its
// stripes are on separate cache lines, and each add picks one at random
// (the runtime's per-thread generator, a few nanoseconds), so that
// goroutines adding at once, even for the same page (the root, on every
// lookup), mostly write different lines. Load sums the stripes; it is read
// rarely (stats, the controller's ticks). Lock rules: none (atomic).
type stripedCounter struct {
	_       [cacheLine]byte // off the line of whatever comes before
	stripes [counterStripes]struct {
		n atomic.Int64
		_ [cacheLine - 8]byte
	}
}

const (
	counterStripes = 8
	cacheLine      = 64
)

func (c *stripedCounter) add(n int64) {
	c.stripes[rand.Uint32()%counterStripes].n.Add(n)
}

func (c *stripedCounter) Load() int64 {
	var sum int64
	for i := range c.stripes {
		sum += c.stripes[i].n.Load()
	}
	return sum
}

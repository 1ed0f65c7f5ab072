package bufferpool

import "sync/atomic"

// stripedCounter is a count that many goroutines add to at once: its
// stripes are on separate cache lines, and a caller picks one by something
// it already owns (the frame it hit), so that hits on different pages
// write different lines. Load sums the stripes; it is read rarely (stats,
// the controller's ticks). Lock rules: none (atomic).
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

func (c *stripedCounter) add(key int32, n int64) {
	c.stripes[uint32(key)%counterStripes].n.Add(n)
}

func (c *stripedCounter) Load() int64 {
	var sum int64
	for i := range c.stripes {
		sum += c.stripes[i].n.Load()
	}
	return sum
}

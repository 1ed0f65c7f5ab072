package bufferpool

import (
	"sync/atomic"
	"unsafe"
)

// stripedCounter is a count that many goroutines add to at once: its
// stripes are on separate cache lines, and each goroutine adds to the
// stripe its stack's address hashes to, so that goroutines adding at once,
// even for the same page (the root, on every lookup), mostly write
// different lines, and a goroutine keeps writing the same line (already in
// its CPU's cache) rather than one picked at random each time, which the
// other CPUs wrote last as often as not. A stack moves when it grows: the
// goroutine then writes another stripe, which changes nothing but the
// line. Load sums the stripes; it is read rarely (stats, the controller's
// ticks). Lock rules: none (atomic).
//
// Measured on cached oltp_read_only (2 CPUs, every access a frame hit,
// about 50 hits a transaction): with stripes picked at random, add was
// 5.3% of the CPU, 44 ns an add, mostly lines moving between the CPUs;
// by stack, under the profile's threshold, and the pool's hit path went
// from 19% of the CPU to 14% (docs/BENCHMARKS.md, seventeenth session).
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
	var here byte
	c.stripes[stackStripe(uintptr(unsafe.Pointer(&here)))].n.Add(n)
}

// stackStripe hashes an address on a goroutine's stack to a stripe: the
// bits above 2 KiB (a goroutine's smallest stack), mixed by a
// multiplicative hash so that neighbouring stacks spread.
func stackStripe(sp uintptr) int {
	return int((uint64(sp>>11) * 0x9e3779b97f4a7c15) >> 61) // top 3 bits: counterStripes = 8
}

func (c *stripedCounter) Load() int64 {
	var sum int64
	for i := range c.stripes {
		sum += c.stripes[i].n.Load()
	}
	return sum
}

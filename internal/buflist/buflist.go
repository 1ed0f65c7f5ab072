// Package buflist keeps reusable scratch buffers in a bounded list that the
// garbage collector does not empty.
//
// sync.Pool drops what it holds at every other collection. Where the Go
// heap is small beside the data (a cache filling the memory limit, a
// GOMEMLIMIT of 20 MiB) and a workload allocates, collections run many
// times a second, and every scratch buffer a pool gave out was allocated
// again: at data 8× the memory, the page store's aligned read buffers and
// the buffer pool's compression buffers were 62% of all bytes allocated by
// a write workload, whose collector took 28% of the CPU (docs/BENCHMARKS.md,
// twenty-first session). A List keeps up to its capacity of buffers for
// good: that many buffers are the memory it costs.
//
// Get and Put are safe for concurrent use and never block.
package buflist

// List is a bounded list of buffers made by newBuf.
type List struct {
	free   chan *[]byte
	newBuf func() *[]byte
}

// New returns a List that keeps up to capacity buffers, made by newBuf when
// it has none.
func New(capacity int, newBuf func() *[]byte) *List {
	return &List{free: make(chan *[]byte, capacity), newBuf: newBuf}
}

// Get returns a kept buffer, or a new one.
func (l *List) Get() *[]byte {
	select {
	case b := <-l.free:
		return b
	default:
		return l.newBuf()
	}
}

// Put keeps b for a later Get, or drops it if the list is full.
func (l *List) Put(b *[]byte) {
	select {
	case l.free <- b:
	default:
	}
}

// capacityBytes bounds the memory a List sized by Capacity keeps.
const capacityBytes = 1 << 20

// Capacity is how many buffers of size bytes a List keeps: as many as fit
// in 1 MiB, between 8 and 64 (enough for the reads and compressions in
// flight at once: the deferred commits' applier alone has up to 32 reads).
func Capacity(size int) int { return min(max(capacityBytes/max(size, 1), 8), 64) }

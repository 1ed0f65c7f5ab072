// Package buflist keeps reusable scratch buffers in a bounded list that the
// garbage collector does not empty.
//
// sync.Pool drops what it holds at every other collection. Where the Go
// heap is small beside the data (a cache filling the memory limit, a
// GOMEMLIMIT of 20 MiB) and a workload allocates, collections run many
// times a second, and every scratch buffer a pool gave out was allocated
// again: at data 8× the memory, the page store's aligned read buffers and
// the buffer pool's compression buffers were 62% of all bytes allocated by
// a write workload, 29.6 KB per transaction, 5.7 KB with Lists
// (docs/BENCHMARKS.md, twenty-first session). A List keeps the buffers
// given back, up to Capacity, for good: that is the memory it costs
// (1 MiB of 16 KiB buffers at 4 KiB pages, if 64 were ever in use at once).
//
// Get and Put are safe for concurrent use and never block.
package buflist

// Capacity is how many buffers a List keeps at most. A List keeps only
// buffers given back, so it holds what the most uses at once needed (the
// deferred commits' applier alone has up to 32 reads in flight), never
// more than Capacity.
const Capacity = 64

// List is a bounded list of buffers made by newBuf.
type List struct {
	free   chan *[]byte
	newBuf func() *[]byte
}

// New returns a List that keeps up to Capacity buffers, made by newBuf
// when it has none.
func New(newBuf func() *[]byte) *List {
	return &List{free: make(chan *[]byte, Capacity), newBuf: newBuf}
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

package flashcache

import (
	"sync"
	"sync/atomic"
	"time"
)

// Admission: the bounded queue between the buffer pool's evictions and the
// flash writer, the write-rate budget, and the admission filter.
//
// The queue is a ring of bytes (QueueBytes, allocated once) holding copies
// of the offered images, and a ring of item records. The pool's evicting
// goroutine copies an image in and returns; the writer copies images out
// into its write buffer. When the ring is full the offer is dropped and
// counted: nothing in the foreground ever waits for the flash.
//
// Lock rules: queue.mu guards the rings' positions, the item records and
// the rate budget; it is held for a memcpy at most, never across I/O, and
// never together with a shard mutex. The writer reads the bytes of items it
// has taken without the mutex: producers only write beyond the tail, which
// is outside every taken item until the writer releases it.

type item struct {
	id, version uint32
	codec       uint8
	frame       bool // an uncompressed frame: the writer compresses it
	pos         uint64
	n           int
}

type queue struct {
	mu    sync.Mutex
	buf   []byte
	head  uint64 // byte position of the oldest item not released
	tail  uint64 // byte position after the newest item
	items []item
	ih    int // first item not taken
	in    int // items not taken
	taken int // items taken by the writer, not yet released

	// The write-rate budget: a token bucket of bytes.
	rate     float64 // bytes per second; ≤ 0: none
	burst    float64
	tokens   float64
	refilled time.Time

	kick chan struct{}
	// waiting is set while the writer sleeps with an empty queue, so
	// producers kick it only then.
	waiting atomic.Bool
}

// queueItems is the number of item records of a queue of bytes: one per
// 512 bytes (an image is rarely smaller), at least 16.
func queueItems(bytes int) int { return max(bytes/512, 16) }

func newQueue(bytes int, rate int64, burst int) *queue {
	q := &queue{
		buf:   make([]byte, bytes),
		items: make([]item, queueItems(bytes)),
		rate:  float64(rate),
		burst: float64(burst),
		kick:  make(chan struct{}, 1),
	}
	q.tokens = q.burst
	q.refilled = time.Now()
	return q
}

// free is the room for one more contiguous image of n bytes. Called with
// mu held.
func (q *queue) fits(n int) bool {
	if q.in+q.taken == len(q.items) {
		return false
	}
	size := uint64(len(q.buf))
	start := q.tail
	if start%size+uint64(n) > size {
		start += size - start%size // skip the end of the ring
	}
	return start+uint64(n)-q.head <= size
}

// refill adds the tokens earned since the last refill. Called with mu
// held.
func (q *queue) refill(now time.Time) {
	if q.rate <= 0 {
		return
	}
	q.tokens = min(q.burst, q.tokens+now.Sub(q.refilled).Seconds()*q.rate)
	q.refilled = now
}

// admissible reports whether an image of n bytes could be queued now:
// room in the rings and in the write budget.
func (q *queue) admissible(n int) (ok, rateLimited bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.fits(n) {
		return false, false
	}
	if q.rate > 0 {
		q.refill(time.Now())
		if q.tokens < float64(n) {
			return false, true
		}
	}
	return true, false
}

// push copies data into the queue as an item; false if it does not fit
// (or the budget is spent).
func (q *queue) push(it item, data []byte) bool {
	n := len(data)
	q.mu.Lock()
	if !q.fits(n) {
		q.mu.Unlock()
		return false
	}
	if q.rate > 0 {
		q.refill(time.Now())
		if q.tokens < float64(n) {
			q.mu.Unlock()
			return false
		}
		q.tokens -= float64(n)
	}
	size := uint64(len(q.buf))
	if q.tail%size+uint64(n) > size {
		q.tail += size - q.tail%size
	}
	it.pos, it.n = q.tail, n
	copy(q.buf[q.tail%size:], data)
	q.tail += uint64(n)
	q.items[(q.ih+q.in)%len(q.items)] = it
	q.in++
	q.mu.Unlock()
	if q.waiting.Load() {
		select {
		case q.kick <- struct{}{}:
		default:
		}
	}
	return true
}

// take moves up to len(dst) items to the writer and returns them.
func (q *queue) take(dst []item) []item {
	q.mu.Lock()
	defer q.mu.Unlock()
	dst = dst[:0]
	for q.in > 0 && len(dst) < cap(dst) {
		dst = append(dst, q.items[q.ih])
		q.ih = (q.ih + 1) % len(q.items)
		q.in--
		q.taken++
	}
	return dst
}

// data is the bytes of a taken item.
func (q *queue) data(it item) []byte {
	p := it.pos % uint64(len(q.buf))
	return q.buf[p : p+uint64(it.n)]
}

// release frees the taken items up to and including last.
func (q *queue) release(taken []item) {
	if len(taken) == 0 {
		return
	}
	last := taken[len(taken)-1]
	q.mu.Lock()
	q.head = last.pos + uint64(last.n)
	q.taken -= len(taken)
	if q.in == 0 && q.taken == 0 {
		q.head, q.tail = 0, 0 // empty: start again at the beginning
	}
	q.mu.Unlock()
}

// pendingItems is the number of items not yet taken.
func (q *queue) pendingItems() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.in
}

// bytes is what the queue holds now.
func (q *queue) bytes() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return int64(q.tail - q.head)
}

// filter is the admission filter of AdmitSecond: a direct-mapped table of
// the ids of pages that left RAM once recently. A page is admitted when it
// finds its own id there (and clears it); otherwise it leaves its id and
// is not admitted. Slots are atomics: concurrent offers race harmlessly.
type filter struct {
	slots []atomic.Uint32
	mask  uint64
}

func filterLen(maxEntries int) int {
	n := 1024
	for n < maxEntries/2 && n < 1<<24 {
		n *= 2
	}
	return n
}

func filterBytes(maxEntries int) int64 { return int64(filterLen(maxEntries)) * 4 }

func newFilter(maxEntries int) *filter {
	n := filterLen(maxEntries)
	return &filter{slots: make([]atomic.Uint32, n), mask: uint64(n - 1)}
}

// second reports whether id was seen once before (and forgets it), or
// records it and reports false.
func (f *filter) second(id uint32) bool {
	s := &f.slots[(hashID(id)>>20)&f.mask]
	tag := id + 1 // 0 is empty
	if s.Load() == tag {
		s.Store(0)
		return true
	}
	s.Store(tag)
	return false
}

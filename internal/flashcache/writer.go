package flashcache

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/vfs"
)

// The flash writer: one goroutine that takes admitted images from the
// queue, packs them into an aligned write buffer and writes it, in large
// sequential writes, at the head of a ring of regions (CacheLib's
// BlockCache regions, L2ARC's rotor). When the head region is full the
// writer moves to the next one, the oldest: it first removes that region's
// entries from the index (evictions), then bumps its generation, then
// overwrites it. An entry enters the index (pending → written) only once
// its write has completed; an entry invalidated meanwhile (the page was
// rewritten or freed) is not installed.
//
// A failed write disables its region (its entries are purged, the ring
// skips it); after maxWriteErrors consecutive failures, or with every
// region bad, the cache disables itself. Reads then fall through to the
// page store: nothing is lost.
//
// Lock rules: the writer's fields, the regions' id lists and purged flags
// belong to the writer goroutine. It takes the queue's and the shards'
// mutexes one at a time, never across I/O.

// errRegionBad: the buffer's region was disabled before it was written.
var errRegionBad = errors.New("flashcache: region disabled")

const (
	idleFlush      = 20 * time.Millisecond // a partial buffer is written after this long without admissions
	maxWriteErrors = 8
)

type pendingEntry struct{ id, version, loc, size uint32 }

type writer struct {
	c        *Cache
	buf      []byte // aligned write buffer
	bufStart int64  // offset in the head region where buf begins
	bufLen   int
	head     int // region being written
	pend     []pendingEntry
	comp     []byte
	items    []item
	listCap  int
	lastAdd  time.Time
	errors   int // consecutive write errors

	purge atomic.Bool
	idle  atomic.Bool // waiting with nothing queued or buffered (tests)
	stop  chan struct{}
	done  chan struct{}
}

func newWriter(c *Cache, head int, headOff int64) *writer {
	return &writer{
		c:        c,
		buf:      vfs.AlignedBuffer(c.opts.WriteUnit),
		bufStart: headOff,
		head:     head,
		comp:     make([]byte, 0, 2*c.lay.pageSize+64),
		items:    make([]item, 0, 64),
		listCap:  regionListCap(c.lay.maxEntries, c.lay.regions),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// kickPurge asks the writer to purge the entries of regions disabled by
// readers.
func (w *writer) kickPurge() {
	w.purge.Store(true)
	select {
	case w.c.q.kick <- struct{}{}:
	default:
	}
}

func (w *writer) run() {
	defer close(w.done)
	q := w.c.q
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if w.purge.Swap(false) {
			w.purgeBad()
		}
		if items := q.take(w.items); len(items) > 0 {
			w.process(items)
			q.release(items)
			continue
		}
		select {
		case <-w.stop:
			w.flush()
			return
		default:
		}
		wait := time.Hour
		if w.bufLen > 0 {
			if since := time.Since(w.lastAdd); since >= idleFlush {
				w.flush()
				continue
			} else {
				wait = idleFlush - since
			}
		}
		q.waiting.Store(true)
		if q.pendingItems() > 0 {
			q.waiting.Store(false)
			continue
		}
		w.idle.Store(w.bufLen == 0)
		timer.Reset(wait)
		select {
		case <-q.kick:
		case <-timer.C:
		case <-w.stop:
		}
		timer.Stop()
		w.idle.Store(false)
		q.waiting.Store(false)
	}
}

// process packs taken items into the write buffer, writing it when full.
func (w *writer) process(items []item) {
	c := w.c
	for _, it := range items {
		if c.failed.Load() {
			c.ix.removeVersion(it.id, it.version)
			continue
		}
		if !c.ix.pending(it.id, it.version) {
			c.st.staleRejects.Add(1) // rewritten or freed since it was queued
			continue
		}
		payload, cid := c.q.data(it), codec.ID(it.codec)
		if it.frame {
			img, used, err := codec.EncodePage(c.opts.Codec, w.comp[:0], payload)
			if err != nil {
				c.ix.removeVersion(it.id, it.version)
				continue
			}
			if cap(img) > cap(w.comp) {
				w.comp = img[:0]
			}
			payload, cid = img, used
			c.st.compressedFrames.Add(1)
		}
		span := int((int64(entryHeaderSize+len(payload)) + c.lay.unit - 1) / c.lay.unit * c.lay.unit)
		if !w.room(span) {
			c.ix.removeVersion(it.id, it.version)
			continue
		}
		encodeEntry(w.buf[w.bufLen:], c.seed, entryHeader{id: it.id, version: it.version, size: uint32(len(payload)), codec: uint8(cid)}, payload)
		off := c.lay.regionBase(w.head) + w.bufStart + int64(w.bufLen)
		w.pend = append(w.pend, pendingEntry{id: it.id, version: it.version, loc: c.loc(off), size: uint32(len(payload))})
		w.bufLen += span
		w.lastAdd = time.Now()
		if w.bufLen == len(w.buf) {
			w.flush()
		}
	}
}

// room makes room for an entry of span bytes in the write buffer and the
// head region, writing the buffer or moving to the next region as needed.
// It reports false if the cache was disabled.
func (w *writer) room(span int) bool {
	c := w.c
	for {
		if c.failed.Load() {
			return false
		}
		reg := &c.regions[w.head]
		switch {
		case reg.bad.Load():
			w.flush() // drops the buffer's entries
			if !w.advance() {
				return false
			}
		case w.bufStart+int64(w.bufLen+span) > c.lay.regionSize || len(reg.ids)+len(w.pend) >= w.listCap:
			w.flush()
			if !w.advance() {
				return false
			}
		case w.bufLen+span > len(w.buf):
			w.flush()
		default:
			return true
		}
	}
}

// flush writes the buffer (padded to a block) at its place in the head
// region and installs its entries in the index.
func (w *writer) flush() {
	if w.bufLen == 0 {
		return
	}
	c := w.c
	n := (w.bufLen + blockSize - 1) &^ (blockSize - 1)
	clear(w.buf[w.bufLen:n])
	reg := &c.regions[w.head]
	var err error
	if reg.bad.Load() {
		err = errRegionBad
	} else {
		_, err = c.f.WriteAt(w.buf[:n], c.lay.regionBase(w.head)+w.bufStart)
	}
	if err != nil {
		for _, p := range w.pend {
			c.ix.removeVersion(p.id, p.version)
		}
		w.pend, w.bufLen = w.pend[:0], 0
		if err != errRegionBad {
			c.st.writeErrors.Add(1)
			c.opts.Logger.Warn("flashcache: write failed; region disabled", "path", c.opts.Path, "region", w.head, "err", err)
			c.disableRegion(w.head, "write error")
			if w.errors++; w.errors >= maxWriteErrors {
				c.disable("repeated write errors")
			}
		}
		return
	}
	w.errors = 0
	c.st.writes.Add(1)
	c.st.bytesWritten.Add(int64(n))
	for _, p := range w.pend {
		if c.ix.install(p.id, p.version, p.loc, p.size) {
			reg.ids = append(reg.ids, p.id)
			c.st.written.Add(1)
		} else {
			c.st.staleRejects.Add(1)
		}
	}
	w.pend = w.pend[:0]
	w.bufStart += int64(n)
	w.bufLen = 0
}

// advance moves the head to the next region that is not bad, evicting
// what it held. The buffer must be empty. It reports false (and disables
// the cache) if every region is bad.
func (w *writer) advance() bool {
	c := w.c
	for range c.lay.regions {
		next := (w.head + 1) % c.lay.regions
		w.head = next
		if c.regions[next].bad.Load() {
			continue
		}
		w.recycle(next)
		w.bufStart, w.bufLen = 0, 0
		return true
	}
	c.disable("every region is bad")
	return false
}

// recycle empties region r for rewriting: its entries leave the index
// (evictions), then its generation changes, so that a read of it that
// began before sees the change.
func (w *writer) recycle(r int) {
	c := w.c
	n := w.dropEntries(r)
	c.st.evictions.Add(int64(n))
	c.regions[r].gen.Add(1)
	c.regions[r].csumFails.Store(0)
}

// dropEntries removes region r's entries from the index and empties its
// list; it returns how many were still there.
func (w *writer) dropEntries(r int) int {
	c := w.c
	base := c.lay.regionBase(r)
	lo, hi := c.loc(base), c.loc(base+c.lay.regionSize)
	n := 0
	reg := &c.regions[r]
	for _, id := range reg.ids {
		if c.ix.removeIn(id, lo, hi) {
			n++
		}
	}
	reg.ids = reg.ids[:0]
	return n
}

// purgeBad removes the entries of regions disabled since the last purge.
func (w *writer) purgeBad() {
	c := w.c
	for r := range c.regions {
		reg := &c.regions[r]
		if reg.bad.Load() && !reg.purged {
			reg.purged = true
			w.dropEntries(r)
			reg.gen.Add(1)
		}
	}
}

// stopAndWait makes the writer write what it holds and stop, waiting at
// most timeout. It reports whether the writer stopped.
func (w *writer) stopAndWait(timeout time.Duration) bool {
	close(w.stop)
	select {
	case <-w.done:
		return true
	case <-time.After(timeout):
		return false
	}
}

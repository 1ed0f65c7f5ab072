package flashcache

import (
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// The cache: its state, the foreground read path (lookup, flash read with
// a deadline, validation), invalidation, and admission offers.
//
// Lock rules: the foreground methods (read, Invalidate, WantsEvicted,
// OfferEvicted) take only the index shards' and the queue's mutexes, one
// at a time and briefly; they never wait for flash I/O except read, which
// waits at most ReadTimeout for a reader goroutine. WantsEvicted and
// OfferEvicted are called by the buffer pool with a partition mutex held.
// A region's generation and bad flag are atomics, read by readers and
// written by the writer goroutine (and bad also by readers); its id list
// belongs to the writer goroutine alone.

// Cache is a second-level cache of compressed page images on flash. It is
// safe for concurrent use.
type Cache struct {
	opts Options
	fs   vfs.FS
	lock io.Closer
	f    vfs.File
	lay  layout
	seed uint32 // entry checksum seed, from the cache's identity

	// sb is the superblock as last written; sbMu serializes its writes.
	sbMu sync.Mutex
	sb   superblock

	ix      *index
	regions []region
	q       *queue
	filt    *filter
	rd      *readers
	w       *writer

	// active: reads are served and pages admitted. Off when the cache is
	// disabled (errors) or closing.
	active atomic.Bool
	// failed: disabled by errors; the writer stops writing.
	failed atomic.Bool
	closed atomic.Bool
	// tracking: every write and free has invalidated the index since the
	// session began, so the index can be persisted at Close.
	tracking atomic.Bool
	// stallUntil: reads bypass the flash until then (unix nanoseconds),
	// after a read timed out.
	stallUntil    atomic.Int64
	timeoutsInRow atomic.Int32
	version       atomic.Uint32 // last admission version given out

	st counters
	// infoMu guards openInfo after Open (disable writes disabledBy, Stats
	// reads it); never held across I/O, so that neither waits for a
	// superblock write on a stalled device, as they did under sbMu.
	infoMu   sync.Mutex
	openInfo openInfo
}

// region is one slot of the ring.
type region struct {
	gen       atomic.Uint64 // bumped before the region is rewritten
	bad       atomic.Bool   // disabled after an I/O error or repeated checksum failures
	csumFails atomic.Int32
	// The writer's own: ids of the entries written here this round, and
	// whether a bad region's entries have been purged from the index.
	ids    []uint32
	purged bool
}

// counters are the cache's statistics, updated without locks.
type counters struct {
	lookups, hits, misses                     atomic.Int64
	pendingMisses, bypassed, raceMisses       atomic.Int64
	offered, admitted, droppedBusy            atomic.Int64
	droppedRate, droppedFull, rejected        atomic.Int64
	alreadyCached, inactive                   atomic.Int64
	written, bytesWritten, writes             atomic.Int64
	evictions, invalidations, staleRejects    atomic.Int64
	readErrors, writeErrors, checksumErrors   atomic.Int64
	readTimeouts, readNanos, reads            atomic.Int64
	compressedFrames, badRegions, writeStalls atomic.Int64
}

// openInfo says how Open found the flash file.
type openInfo struct {
	state      string
	rebuild    time.Duration
	rebuilt    int64
	discarded  int64
	disabledBy string
}

// loc converts a file offset to index units and back.
func (c *Cache) loc(off int64) uint32       { return uint32(off / c.lay.unit) }
func (c *Cache) off(loc uint32) int64       { return int64(loc) * c.lay.unit }
func (c *Cache) regionOfLoc(loc uint32) int { return c.lay.regionOf(c.off(loc)) }

// Read returns page id's image from flash, copied into dst's storage (grown
// if too small), if the cache holds a valid one. ok false means the caller
// reads the page store. Seq of the image is 0.
func (c *Cache) Read(id pagestore.PageID, dst []byte) (img pagestore.Image, ok bool) {
	if !c.active.Load() || id > pagestore.MaxPageID {
		return img, false
	}
	c.st.lookups.Add(1)
	pid := uint32(id)
	// The region's generation is read under the shard's mutex, with the
	// entry: the writer removes a region's entries from the index (under
	// that mutex) before it bumps the generation and only then rewrites
	// the region, so the generation read here is the one the entry was
	// written in, and a change after the read means the region was reused.
	s := c.ix.shardOf(pid)
	s.mu.RLock()
	i := s.find(pid)
	if i < 0 {
		s.mu.RUnlock()
		c.st.misses.Add(1)
		return img, false
	}
	e := s.slots[i]
	if e.loc == locPending {
		s.mu.RUnlock()
		c.st.misses.Add(1)
		c.st.pendingMisses.Add(1)
		return img, false
	}
	r := c.regionOfLoc(e.loc)
	reg := &c.regions[r]
	gen := reg.gen.Load()
	s.mu.RUnlock()
	if reg.bad.Load() {
		c.st.misses.Add(1)
		return img, false
	}
	if now := time.Now().UnixNano(); now < c.stallUntil.Load() {
		c.st.misses.Add(1)
		c.st.bypassed.Add(1)
		return img, false
	}
	off := c.off(e.loc)
	start := off &^ (blockSize - 1)
	end := (off + entryHeaderSize + int64(e.size) + blockSize - 1) &^ (blockSize - 1)
	req, status := c.rd.read(start, int(end-start), c.opts.ReadTimeout)
	switch status {
	case readBusy:
		c.st.misses.Add(1)
		c.st.bypassed.Add(1)
		return img, false
	case readTimedOut:
		// The flash may be stalled: bypass it for a while, longer after
		// each timeout in a row (50 ms, doubling, up to a second).
		c.st.misses.Add(1)
		c.st.readTimeouts.Add(1)
		n := min(c.timeoutsInRow.Add(1), 6)
		c.stallUntil.Store(time.Now().Add(min(maxStallCooldown, minStallCooldown<<(n-1))).UnixNano())
		return img, false
	}
	c.timeoutsInRow.Store(0)
	defer c.rd.put(req)
	c.st.reads.Add(1)
	c.st.readNanos.Add(int64(req.took))
	if req.err != nil {
		c.st.misses.Add(1)
		c.st.readErrors.Add(1)
		c.disableRegion(r, "read error")
		c.opts.Logger.Warn("flashcache: read failed; region disabled", "path", c.opts.Path, "region", r, "err", req.err)
		return img, false
	}
	if reg.gen.Load() != gen {
		// The writer recycled the region while we read it: what we read
		// may be anything, but nothing is wrong with the flash.
		c.st.misses.Add(1)
		c.st.raceMisses.Add(1)
		return img, false
	}
	cid, payload, err := decodeEntry(req.buf[off-start:req.n], c.seed, pid, e.version, e.size)
	if err != nil {
		c.st.misses.Add(1)
		c.st.checksumErrors.Add(1)
		c.ix.removeVersion(pid, e.version)
		if reg.csumFails.Add(1) >= 3 {
			c.disableRegion(r, "checksum failures")
		}
		c.opts.Logger.Warn("flashcache: bad entry; read from the page store", "path", c.opts.Path, "page", id, "err", err)
		return img, false
	}
	c.st.hits.Add(1)
	return pagestore.Image{Codec: codec.ID(cid), Data: append(dst[:0], payload...)}, true
}

// Invalidate forgets page id's image: the page is being rewritten or
// freed. Every write and free of a page must call it (before the store
// does the write), or the cache could return an old version. It does no
// I/O.
func (c *Cache) Invalidate(id pagestore.PageID) {
	if id > pagestore.MaxPageID {
		return
	}
	if c.ix.invalidate(uint32(id)) {
		c.st.invalidations.Add(1)
	}
}

// WantsEvicted reports whether the cache would take page id's image now:
// it is active, the queue and the write budget have room, the page is not
// cached already, and the admission policy takes it. The buffer pool asks
// first so as not to assemble images that would be dropped. Called with a
// partition mutex of the pool held: it never blocks.
func (c *Cache) WantsEvicted(id pagestore.PageID, n int) bool {
	c.st.offered.Add(1)
	if !c.active.Load() || id > pagestore.MaxPageID || n <= 0 || n > c.lay.pageSize {
		c.st.inactive.Add(1)
		return false
	}
	if c.ix.contains(uint32(id)) {
		c.st.alreadyCached.Add(1)
		return false
	}
	ok, rateLimited := c.q.admissible(n)
	if !ok {
		if rateLimited {
			c.st.droppedRate.Add(1)
		} else {
			c.st.droppedBusy.Add(1)
		}
		return false
	}
	if c.opts.Admission == AdmitSecond && !c.filt.second(uint32(id)) {
		c.st.rejected.Add(1)
		return false
	}
	return true
}

// OfferEvicted queues a copy of page id's image (codec cid; with frame,
// the uncompressed page, which the writer compresses) for the flash. The
// page is clean: data is what the page store holds for it. Called after
// WantsEvicted, with a partition mutex of the pool held: it never blocks.
func (c *Cache) OfferEvicted(id pagestore.PageID, cid codec.ID, data []byte, frame bool) {
	if !c.active.Load() || id > pagestore.MaxPageID || len(data) == 0 || len(data) > c.lay.pageSize {
		return
	}
	pid := uint32(id)
	ver := c.version.Add(1)
	ok, full := c.ix.reserve(pid, ver, uint32(len(data)))
	if !ok {
		if full {
			c.st.droppedFull.Add(1)
		} else {
			c.st.alreadyCached.Add(1)
		}
		return
	}
	if !c.q.push(item{id: pid, version: ver, codec: uint8(cid), frame: frame}, data) {
		c.ix.removeVersion(pid, ver)
		c.st.droppedBusy.Add(1)
		return
	}
	c.st.admitted.Add(1)
}

// disableRegion marks region r bad: reads of it stop at once, and the
// writer purges its entries and skips it from then on.
func (c *Cache) disableRegion(r int, why string) {
	if !c.regions[r].bad.Swap(true) {
		c.st.badRegions.Add(1)
		c.opts.Logger.Warn("flashcache: region disabled", "path", c.opts.Path, "region", r, "why", why)
		c.w.kickPurge()
	}
}

// disable stops the cache: no more reads or admissions, and the index will
// not be persisted (the next Open starts cold).
func (c *Cache) disable(why string) {
	c.active.Store(false)
	if !c.failed.Swap(true) {
		c.opts.Logger.Warn("flashcache: disabled", "path", c.opts.Path, "why", why)
	}
	c.tracking.Store(false)
	c.infoMu.Lock()
	if c.openInfo.disabledBy == "" {
		c.openInfo.disabledBy = why
	}
	c.infoMu.Unlock()
}

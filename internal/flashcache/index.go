package flashcache

import (
	"sync"
	"sync/atomic"
)

// The RAM index: page id → where the page's image is on flash.
//
// 16 bytes per slot (page id, version, location in units, payload size),
// open addressing with linear probing in shards, each a fixed array of
// slots allocated when the cache opens, so its memory is known up front and
// charged to the database's memory budget. Slices of structs without
// pointers: nothing for the garbage collector to scan. At a load factor of
// at most 3/4 (each shard's capacity) and with each shard's slack (1/16
// above the mean), an entry of the index's capacity costs 22.7 bytes here,
// plus 8 in the regions' id lists (room for twice a region's mean,
// writer.go) and 1 to 2 in AdmitSecond's filter: about 32 bytes
// (TestIndexMemory; Options.MemoryBytes counts them exactly), between
// CacheLib's ~12 and L2ARC's 96. The capacity is Size over a quarter page,
// the images' expected size: with larger images the index is partly empty
// and costs more per cached page; with smaller ones it fills before the
// flash does (DroppedFull).
//
// A slot is pending (loc == locPending) from the admission of an image
// until the writer has written it to flash; lookups treat it as a miss.
//
// Lock rules: each shard has its own RWMutex, held only for operations on
// its table (never across I/O, never while taking another lock of this
// package). The buffer pool calls in (eviction offers) with its partition
// mutex held; the shard mutexes are taken after it.

const (
	indexShards = 64
	locPending  = ^uint32(0)
)

type slot struct {
	id, version, loc, size uint32 // size 0: empty
}

type shard struct {
	mu    sync.RWMutex
	slots []slot
	n     int // slots in use
	w     int // of which written (not pending)
	max   int // at most this many (3/4 of the slots)
	_     [32]byte
}

type index struct {
	shards [indexShards]shard
	// used counts the slots in use, pending included, in all shards; at
	// most capacity (take). Each shard's own bound (max) is its share of
	// the capacity plus slack, so the shards together could hold about
	// 1.06 × capacity + 512: more than the snapshot area, sized for
	// capacity entries, takes (persist.go). Without this bound a cache of
	// small images (a quarter page or less) filled the index past it,
	// and every clean Close wrote a snapshot the next Open refused.
	used     atomic.Int64
	capacity int64
}

// newIndex returns an index for up to capacity entries.
func newIndex(capacity int) *index {
	ix := &index{capacity: int64(capacity)}
	per := (capacity + indexShards - 1) / indexShards
	// A little slack above the mean, so that shards fill about together
	// (the ids of a shard vary by a few standard deviations).
	per += per/16 + 8
	for i := range ix.shards {
		s := &ix.shards[i]
		s.max = per
		s.slots = make([]slot, per*4/3+1)
	}
	return ix
}

// indexBytes is the memory of an index for capacity entries.
func indexBytes(capacity int) int64 {
	per := (capacity + indexShards - 1) / indexShards
	per += per/16 + 8
	return int64(indexShards) * (int64(per*4/3+1)*16 + 96)
}

func hashID(id uint32) uint64 { return uint64(id) * 0x9E3779B97F4A7C15 }

func (ix *index) shardOf(id uint32) *shard {
	return &ix.shards[hashID(id)>>58] // indexShards = 64
}

// home is id's first probe position.
func (s *shard) home(id uint32) int {
	return int((uint64(uint32(hashID(id))) * uint64(len(s.slots))) >> 32)
}

// find returns id's slot, or -1. Called with the shard's mutex held.
func (s *shard) find(id uint32) int {
	n := len(s.slots)
	for i := s.home(id); ; {
		e := &s.slots[i]
		if e.size == 0 {
			return -1
		}
		if e.id == id {
			return i
		}
		if i++; i == n {
			i = 0
		}
	}
}

// insert adds e, whose id is not in the shard; false if the shard is full.
// Called with the shard's mutex held (exclusively).
func (s *shard) insert(e slot) bool {
	if s.n >= s.max {
		return false
	}
	n := len(s.slots)
	i := s.home(e.id)
	for s.slots[i].size != 0 {
		if i++; i == n {
			i = 0
		}
	}
	s.slots[i] = e
	s.n++
	return true
}

// remove empties slot i, shifting the entries of its probe run back so
// that no tombstone is needed. Called with the shard's mutex held
// (exclusively).
func (s *shard) remove(i int) {
	if s.slots[i].loc != locPending {
		s.w--
	}
	n := len(s.slots)
	for j := i; ; {
		if j++; j == n {
			j = 0
		}
		e := s.slots[j]
		if e.size == 0 {
			break
		}
		// Move e back to i unless its home lies cyclically in (i, j].
		k := s.home(e.id)
		if (i <= j && (k <= i || k > j)) || (i > j && k <= i && k > j) {
			s.slots[i] = e
			i = j
		}
	}
	s.slots[i] = slot{}
	s.n--
}

// lookup returns id's slot.
func (ix *index) lookup(id uint32) (slot, bool) {
	s := ix.shardOf(id)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if i := s.find(id); i >= 0 {
		return s.slots[i], true
	}
	return slot{}, false
}

// contains reports whether id has a slot (pending or written).
func (ix *index) contains(id uint32) bool {
	_, ok := ix.lookup(id)
	return ok
}

// reserve adds a pending slot for id at version ver, unless id already has
// one or the shard is full.
func (ix *index) reserve(id, ver, size uint32) (ok, full bool) {
	s := ix.shardOf(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.find(id) >= 0 {
		return false, false
	}
	if !ix.take() {
		return false, true
	}
	if !s.insert(slot{id: id, version: ver, loc: locPending, size: size}) {
		ix.used.Add(-1)
		return false, true
	}
	return true, false
}

// take counts a slot about to be inserted; false (nothing counted) when
// the index holds capacity slots already.
func (ix *index) take() bool {
	if ix.used.Add(1) > ix.capacity {
		ix.used.Add(-1)
		return false
	}
	return true
}

// pending reports whether id still has the pending slot of version ver.
func (ix *index) pending(id, ver uint32) bool {
	e, ok := ix.lookup(id)
	return ok && e.loc == locPending && e.version == ver
}

// install turns id's pending slot of version ver into one at loc (size
// bytes of payload: the writer may have compressed a frame). It reports
// false if the slot was invalidated meanwhile.
func (ix *index) install(id, ver, loc, size uint32) bool {
	s := ix.shardOf(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.find(id)
	if i < 0 || s.slots[i].loc != locPending || s.slots[i].version != ver {
		return false
	}
	s.slots[i].loc, s.slots[i].size = loc, size
	s.w++
	return true
}

// add inserts a written entry (rebuild). It reports false if id is present
// or the shard is full.
func (ix *index) add(e slot) bool {
	s := ix.shardOf(e.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.find(e.id) >= 0 || !ix.take() {
		return false
	}
	if !s.insert(e) {
		ix.used.Add(-1)
		return false
	}
	s.w++
	return true
}

// removeVersion removes id's slot if it has version ver.
func (ix *index) removeVersion(id, ver uint32) bool {
	s := ix.shardOf(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.find(id); i >= 0 && s.slots[i].version == ver {
		s.remove(i)
		ix.used.Add(-1)
		return true
	}
	return false
}

// removeIn removes id's slot if it is written at a location in [lo, hi).
func (ix *index) removeIn(id, lo, hi uint32) bool {
	s := ix.shardOf(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.find(id); i >= 0 && s.slots[i].loc != locPending && s.slots[i].loc >= lo && s.slots[i].loc < hi {
		s.remove(i)
		ix.used.Add(-1)
		return true
	}
	return false
}

// invalidate removes id's slot, pending or written; it reports whether
// there was one.
func (ix *index) invalidate(id uint32) bool {
	s := ix.shardOf(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.find(id); i >= 0 {
		s.remove(i)
		ix.used.Add(-1)
		return true
	}
	return false
}

// written counts the written (not pending) slots.
func (ix *index) written() int64 {
	var n int64
	for i := range ix.shards {
		s := &ix.shards[i]
		s.mu.RLock()
		n += int64(s.w)
		s.mu.RUnlock()
	}
	return n
}

// each calls fn with every written slot, shard by shard, holding the
// shard's mutex shared: fn must not call the index.
func (ix *index) each(fn func(slot)) {
	for i := range ix.shards {
		s := &ix.shards[i]
		s.mu.RLock()
		for _, e := range s.slots {
			if e.size != 0 && e.loc != locPending {
				fn(e)
			}
		}
		s.mu.RUnlock()
	}
}

// count is the number of slots in use, pending included.
func (ix *index) count() int64 {
	var n int64
	for i := range ix.shards {
		s := &ix.shards[i]
		s.mu.RLock()
		n += int64(s.n)
		s.mu.RUnlock()
	}
	return n
}

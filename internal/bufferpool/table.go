package bufferpool

import (
	"sync/atomic"

	"github.com/stratadb/strata/internal/pagestore"
)

// The page table: page id → descriptor index, an open-addressing hash table
// (linear probing) whose lookups take no lock, so that a hit need not write
// the partition mutex's reader count (a cache line every lookup in the
// partition would share; the root page's partition is in every lookup).
//
// Lock rules: insert, remove and grow are called with the partition mutex
// held exclusively. lookup is called with it held (then it is exact) or
// without it: then it may miss a page being inserted, or return a
// descriptor that has since been given to another page. A caller without
// the mutex therefore checks what it found against the descriptor (its id,
// state and frame, under the frame's latch; see tryHit) and falls back to
// the locked path.
//
// Each slot is one atomic word holding the page id (at most
// pagestore.MaxPageID, 32 bits) and the descriptor index, so a reader sees
// a key and its value together. slotEmpty and slotDead hold descriptor
// indexes no descriptor has (negative).

type pageTable struct {
	slots atomic.Pointer[[]atomic.Uint64]
	live  int // entries; guarded by mu
	dead  int // tombstones; guarded by mu
}

const (
	slotEmpty = ^uint64(0)     // never used: a probe for any id ends here
	slotDead  = ^uint64(0) - 1 // removed: probes go on past it
	slotBytes = 8
)

func slotOf(id PageID, di int32) uint64 { return uint64(id)<<32 | uint64(uint32(di)) }

// tableHash spreads dense page ids over the slots (Fibonacci hashing).
func tableHash(id PageID, mask uint64) uint64 {
	return (uint64(id) * 0x9E3779B97F4A7C15 >> 32) & mask
}

// tableSlotsFor is the table size for n descriptors: a power of two at
// least twice n, so the load stays at or below a half between rebuilds.
func tableSlotsFor(n int) int {
	s := 16
	for s < 2*n {
		s <<= 1
	}
	return s
}

// resize replaces the slots by size empty ones holding the live entries
// (dropping the tombstones). Readers still probing the old slots see a
// consistent old table, possibly stale, as lookup allows.
func (t *pageTable) resize(size int) {
	slots := make([]atomic.Uint64, size)
	for i := range slots {
		slots[i].Store(slotEmpty)
	}
	mask := uint64(size - 1)
	if old := t.slots.Load(); old != nil {
		for i := range *old {
			if w := (*old)[i].Load(); w != slotEmpty && w != slotDead {
				for j := tableHash(PageID(w>>32), mask); ; j = (j + 1) & mask {
					if slots[j].Load() == slotEmpty {
						slots[j].Store(w)
						break
					}
				}
			}
		}
	}
	t.slots.Store(&slots)
	t.dead = 0
}

// lookup returns the descriptor of page id (see the lock rules).
func (t *pageTable) lookup(id PageID) (int32, bool) {
	if id > pagestore.MaxPageID {
		return -1, false
	}
	slots := *t.slots.Load()
	mask := uint64(len(slots) - 1)
	for i, n := tableHash(id, mask), 0; n < len(slots); i, n = (i+1)&mask, n+1 {
		w := slots[i].Load()
		if w == slotEmpty {
			return -1, false
		}
		if w != slotDead && PageID(w>>32) == id {
			return int32(uint32(w)), true
		}
	}
	return -1, false
}

// insert adds page id (not in the table, at most pagestore.MaxPageID) with
// descriptor di. Called with mu held.
func (t *pageTable) insert(id PageID, di int32) {
	if id > pagestore.MaxPageID || di < 0 {
		panic("bufferpool: page table entry out of range") // Pool.Get and Pool.Create refuse such ids
	}
	slots := *t.slots.Load()
	if 4*(t.live+t.dead+1) > 3*len(slots) {
		// Too many tombstones (the live load alone stays at or below a
		// half: the table grows with the descriptors): rebuild.
		t.resize(len(slots))
		slots = *t.slots.Load()
	}
	mask := uint64(len(slots) - 1)
	for i := tableHash(id, mask); ; i = (i + 1) & mask {
		if w := slots[i].Load(); w == slotEmpty || w == slotDead {
			if w == slotDead {
				t.dead--
			}
			slots[i].Store(slotOf(id, di))
			t.live++
			return
		}
	}
}

// remove deletes page id's entry if it is di. Called with mu held.
func (t *pageTable) remove(id PageID, di int32) {
	slots := *t.slots.Load()
	mask := uint64(len(slots) - 1)
	want := slotOf(id, di)
	for i, n := tableHash(id, mask), 0; n < len(slots); i, n = (i+1)&mask, n+1 {
		w := slots[i].Load()
		if w == slotEmpty {
			return
		}
		if w == want {
			slots[i].Store(slotDead)
			t.live--
			t.dead++
			return
		}
	}
}

// bytes is the table's memory.
func (t *pageTable) bytes() int {
	if s := t.slots.Load(); s != nil {
		return len(*s) * slotBytes
	}
	return 0
}

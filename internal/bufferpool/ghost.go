package bufferpool

// ghost remembers the ids of the pages most recently evicted from a tier,
// without their data. A later access to a page still in a tier's ghost
// means "had this tier been larger by the memory the ghost covers, this
// access would have hit it". The controller turns these ghost hits into the
// marginal benefit of each tier's next bytes.
//
// It is a FIFO ring of ids plus a map for membership; an id's entry is
// current only while its sequence number is within the window, so removal
// and re-insertion need no search.
type ghost struct {
	ring []PageID
	seq  map[PageID]uint64
	next uint64 // sequence number of the next insertion
	size int    // window: how many of the latest insertions count
}

func newGhost(capacity int) *ghost {
	capacity = max(capacity, 16)
	return &ghost{ring: make([]PageID, capacity), seq: make(map[PageID]uint64, capacity)}
}

// setWindow changes how many recent evictions count (≤ capacity), so the
// ghost can cover a fixed number of bytes as the mean image size changes.
func (g *ghost) setWindow(n int) { g.size = min(max(n, 1), len(g.ring)) }

func (g *ghost) add(id PageID) {
	slot := g.next % uint64(len(g.ring))
	if g.next >= uint64(len(g.ring)) {
		old := g.ring[slot]
		if s, ok := g.seq[old]; ok && s == g.next-uint64(len(g.ring)) {
			delete(g.seq, old)
		}
	}
	g.ring[slot] = id
	g.seq[id] = g.next
	g.next++
}

// seqOf returns the insertion number of id's latest entry, if the ghost
// still holds it (in the window or not).
func (g *ghost) seqOf(id PageID) (uint64, bool) {
	s, ok := g.seq[id]
	return s, ok
}

// take reports whether id is in the window, and forgets it.
func (g *ghost) take(id PageID) bool {
	s, ok := g.seq[id]
	if !ok {
		return false
	}
	delete(g.seq, id)
	return g.next-s <= uint64(g.size)
}

// bytes is the memory the ghost's bookkeeping takes (ring and map).
func (g *ghost) bytes() int { return len(g.ring) * ghostEntryBytes } // at capacity: a full map

// ghostEntryBytes is the memory of one ghost entry: its ring slot and its
// map entry.
const ghostEntryBytes = 8 + 48

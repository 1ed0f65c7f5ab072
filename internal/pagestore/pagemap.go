package pagestore

// location says where the newest record of a page is: segment number,
// byte offset of the record in the segment and the record's total length
// (header and payload). Segment numbers start at 1, so the zero location
// means "no such page".
type location struct {
	seg uint32
	off uint32
	len uint32
}

// locationSize is the bytes per page of the in-memory page map and of the
// checkpoint: three uint32s, no pointers, so the garbage collector never
// scans it whatever its length.
const locationSize = 12

func (l location) present() bool { return l.seg != 0 }

// pageMap is the page id → location map: a flat array indexed by page id.
// Page ids are dense (they are allocated from a counter and reused after
// Free), so a flat array is both the smallest and the fastest map. It is
// not safe for concurrent use; the Store's mutex guards it.
//
// The map remembers which ids changed since the last checkpoint (dirty), so
// that a checkpoint can write only those entries (a delta) instead of the
// whole map.
type pageMap struct {
	entries  []location
	live     int64    // pages present
	dirty    bitset   // ids in dirtyIDs
	dirtyIDs []PageID // ids set or removed since the last checkpoint
}

func (m *pageMap) get(id PageID) location {
	if uint64(id) >= uint64(len(m.entries)) {
		return location{}
	}
	return m.entries[id]
}

// set stores loc for id and returns the previous location.
func (m *pageMap) set(id PageID, loc location) location {
	if uint64(id) >= uint64(len(m.entries)) {
		m.grow(uint64(id) + 1)
	}
	old := m.entries[id]
	m.entries[id] = loc
	if !old.present() {
		m.live++
	}
	m.markDirty(id)
	return old
}

// remove deletes id and returns its previous location.
func (m *pageMap) remove(id PageID) location {
	if uint64(id) >= uint64(len(m.entries)) {
		return location{}
	}
	old := m.entries[id]
	if old.present() {
		m.entries[id] = location{}
		m.live--
		m.markDirty(id)
	}
	return old
}

func (m *pageMap) markDirty(id PageID) {
	if !m.dirty.get(uint64(id)) {
		m.dirty.set(uint64(id))
		m.dirtyIDs = append(m.dirtyIDs, id)
	}
}

// takeDirty returns the ids changed since the last call, with their
// current locations, and forgets them. Its cost is in the number of ids.
func (m *pageMap) takeDirty() []mapEntry {
	out := make([]mapEntry, len(m.dirtyIDs))
	for i, id := range m.dirtyIDs {
		out[i] = mapEntry{id: id, loc: m.get(id)}
		m.dirty.clear(uint64(id))
	}
	m.dirtyIDs = m.dirtyIDs[:0]
	return out
}

// forgetDirty drops the record of changed ids (a full checkpoint holds them).
func (m *pageMap) forgetDirty() {
	for _, id := range m.dirtyIDs {
		m.dirty.clear(uint64(id))
	}
	m.dirtyIDs = m.dirtyIDs[:0]
}

// mapEntry is one page map entry, as a delta checkpoint stores it.
type mapEntry struct {
	id  PageID
	loc location
}

func (m *pageMap) grow(n uint64) {
	if n <= uint64(cap(m.entries)) {
		m.entries = m.entries[:n]
		return
	}
	c := max(n, uint64(cap(m.entries))*5/4, 1024)
	e := make([]location, n, c)
	copy(e, m.entries)
	m.entries = e
}

// clone returns a copy of the entries, trimmed of trailing absent pages.
func (m *pageMap) clone() []location {
	n := len(m.entries)
	for n > 0 && !m.entries[n-1].present() {
		n--
	}
	out := make([]location, n)
	copy(out, m.entries[:n])
	return out
}

package strata

import (
	"bytes"
	"slices"
)

// This file holds an Update transaction's own writes until it commits (the
// overlay), and the cursor that merges them with the tree for the
// transaction's iterators. The transaction changes no page until it
// commits: readers never see its writes early, and discarding it costs
// nothing.
//
// Lock rules: none. An overlay belongs to one Update transaction, used by
// the goroutine running it; the tree under it does not change while it
// runs (Update holds writeMu).

// overlay indexes a transaction's batch by key: the latest write of each
// key, as a position in the batch's encoded writes.
type overlay struct {
	byKey map[string]overlayEntry
	// sorted caches the keys in order for iterators; nil after a write.
	sorted []string
}

type overlayEntry struct {
	del             bool
	chunk, off, len int // the value in the batch (Batch.at)
}

// record notes the write the batch just appended: a set of key to the
// value of n bytes at off in chunk, or a delete.
func (o *overlay) record(key []byte, del bool, chunk, off, n int) {
	if o.byKey == nil {
		o.byKey = make(map[string]overlayEntry)
	}
	o.byKey[string(key)] = overlayEntry{del: del, chunk: chunk, off: off, len: n}
	o.sorted = nil
}

// lookup reports whether the transaction wrote key, and if so whether it
// deleted it or the value it set (aliasing the batch).
func (o *overlay) lookup(key []byte, b *Batch) (written, deleted bool, value []byte) {
	e, ok := o.byKey[string(key)]
	if !ok {
		return false, false, nil
	}
	if e.del {
		return true, true, nil
	}
	return true, false, b.at(e.chunk, e.off, e.len)
}

func (o *overlay) keys() []string {
	if o.sorted == nil && len(o.byKey) > 0 {
		o.sorted = slices.Sorted(func(yield func(string) bool) {
			for k := range o.byKey {
				if !yield(k) {
					return
				}
			}
		})
	}
	return o.sorted
}

// cursor is what Iterator moves: the tree's cursor, or a merge of it with
// an overlay.
type cursor interface {
	First() bool
	Last() bool
	SeekGE(key []byte) bool
	SeekLT(key []byte) bool
	Next() bool
	Prev() bool
	Key() []byte
	Value() []byte
	Err() error
	// Release lets go of the page the cursor holds (see btree.Cursor).
	Release()
}

// overlayCursor walks an overlay's keys in order.
type overlayCursor struct {
	o    *overlay
	b    *Batch
	keys []string
	i    int
}

func (c *overlayCursor) valid() bool         { return c.i >= 0 && c.i < len(c.keys) }
func (c *overlayCursor) key() []byte         { return []byte(c.keys[c.i]) }
func (c *overlayCursor) entry() overlayEntry { return c.o.byKey[c.keys[c.i]] }
func (c *overlayCursor) first()              { c.i = 0 }
func (c *overlayCursor) last()               { c.i = len(c.keys) - 1 }
func (c *overlayCursor) next()               { c.i++ }
func (c *overlayCursor) prev()               { c.i-- }
func (c *overlayCursor) seekGE(k []byte)     { c.i, _ = slices.BinarySearch(c.keys, string(k)) }
func (c *overlayCursor) seekLT(k []byte)     { i, _ := slices.BinarySearch(c.keys, string(k)); c.i = i - 1 }

// mergeCursor merges the tree (t) with the overlay (o): the overlay's
// writes replace the tree's entries of the same key, and its deletes hide
// them. At rest both sources are positioned at or beyond the current key
// in the direction of travel.
type mergeCursor struct {
	t       cursor
	tValid  bool
	o       overlayCursor
	forward bool
	cur     []byte // the current key (a copy)
	fromO   bool   // the current entry is the overlay's
	valid   bool
}

func newMergeCursor(tree cursor, o *overlay, b *Batch) *mergeCursor {
	return &mergeCursor{t: tree, o: overlayCursor{o: o, b: b, keys: o.keys()}}
}

func (m *mergeCursor) Err() error { return m.t.Err() }

func (m *mergeCursor) Release() {
	m.t.Release()
	m.valid = false
}

func (m *mergeCursor) Key() []byte { return m.cur }

func (m *mergeCursor) Value() []byte {
	if m.fromO {
		e := m.o.entry()
		return m.o.b.at(e.chunk, e.off, e.len)
	}
	return m.t.Value()
}

func (m *mergeCursor) First() bool {
	m.forward = true
	m.tValid = m.t.First()
	m.o.first()
	return m.settle()
}

func (m *mergeCursor) Last() bool {
	m.forward = false
	m.tValid = m.t.Last()
	m.o.last()
	return m.settle()
}

func (m *mergeCursor) SeekGE(key []byte) bool {
	m.forward = true
	m.tValid = m.t.SeekGE(key)
	m.o.seekGE(key)
	return m.settle()
}

func (m *mergeCursor) SeekLT(key []byte) bool {
	m.forward = false
	m.tValid = m.t.SeekLT(key)
	m.o.seekLT(key)
	return m.settle()
}

func (m *mergeCursor) Next() bool {
	if !m.valid {
		return false
	}
	if !m.forward {
		// Turn around: both sources to the first key after cur.
		m.forward = true
		m.tValid = m.t.SeekGE(m.cur)
		m.o.seekGE(m.cur)
	}
	m.skip(m.cur)
	return m.settle()
}

func (m *mergeCursor) Prev() bool {
	if !m.valid {
		return false
	}
	if m.forward {
		m.forward = false
		m.tValid = m.t.SeekLT(m.cur)
		m.o.seekLT(m.cur)
		return m.settle()
	}
	m.skip(m.cur)
	return m.settle()
}

// skip moves each source that is at key one step on.
func (m *mergeCursor) skip(key []byte) {
	if m.tValid && bytes.Equal(m.t.Key(), key) {
		m.tValid = m.step()
	}
	if m.o.valid() && bytes.Equal(m.o.key(), key) {
		m.ostep()
	}
}

func (m *mergeCursor) step() bool {
	if m.forward {
		return m.t.Next()
	}
	return m.t.Prev()
}

func (m *mergeCursor) ostep() {
	if m.forward {
		m.o.next()
	} else {
		m.o.prev()
	}
}

// settle makes the nearer of the two sources' entries current (the
// overlay's on a tie), passing over keys the overlay deletes.
func (m *mergeCursor) settle() bool {
	for {
		oValid := m.o.valid()
		if !m.tValid && !oValid {
			m.valid = false
			return false
		}
		useO := oValid
		if m.tValid && oValid {
			c := bytes.Compare(m.o.key(), m.t.Key())
			if !m.forward {
				c = -c
			}
			useO = c <= 0
		}
		if !useO {
			m.cur, m.fromO, m.valid = append(m.cur[:0], m.t.Key()...), false, true
			return true
		}
		k := m.o.key()
		if !m.o.entry().del {
			m.cur, m.fromO, m.valid = append(m.cur[:0], k...), true, true
			return true
		}
		m.skip(k) // a deleted key: hidden in the tree too
	}
}

package btree

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/stratadb/strata/internal/bufferpool"
)

// Cursor iterates over the version of a tree rooted at a given page, in
// both directions, optionally within bounds. It reads the current leaf in
// place, keeping it pinned shared between calls (released by Release, by
// moving off it, or when the cursor runs off the end): so no writer may
// change the pages of its version in place while it is used — the caller's
// snapshot freezes them: a writer changes such a page only after copying
// its bytes to a version, which the cursor then reads instead, and only
// while no reader holds it (versions.go) — and the pages must stay
// allocated (the snapshot guarantees that too).
//
// A move decodes a window of up to windowSize cells of the leaf at once
// (seekWindow after a seek), where each key and value starts and ends, all
// within the bounds. Key, an inline value (InlineValue) and the moves that
// stay inside the window (NextInWindow, PrevInWindow) then read only the
// cursor's own fields, never the page: a caller that must guard every read
// of pool memory (the database's in-flight gate) guards only the moves
// that decode, about one in windowSize rows of a scan, and the decoding
// first touches every cell of the window in a loop of independent loads,
// so the leaf's cache lines are fetched in parallel rather than one row at
// a time. A move to the next or previous leaf takes the child from ids
// cached in the branch path (frame.ids) when it can, pinning no branch.
//
// Lock rules: none; a cursor is used by one goroutine at a time. Unpin is
// the exception: it may be called from another goroutine once the owner
// no longer moves the cursor, and touches only the pin (pg, held), no
// field the window reads use.
type Cursor struct {
	t            *Tree
	root         PageID
	asOf         uint64  // the version's txid (Live: the current one); see versions.go
	lower, upper []byte  // bounds: keys in [lower, upper); nil is open
	stack        []frame // branch path: page and child index taken
	stackBuf     [4]frame
	pg           bufferpool.Page
	held         bool // pg is pinned
	leaf         node // the current leaf's page (pg.Data()), valid while held
	count        int  // the leaf's cells
	i            int  // cell index in leaf
	// The window: cells [wlo, whi) of the leaf, decoded into win[:whi-wlo]
	// (ovf bit k set when win[k]'s value is an overflow reference), every
	// key within the bounds. atUpper (atLower) reports that the key after
	// whi-1 (before wlo) is past the upper (lower) bound.
	wlo, whi         int
	win              [windowSize]cellRef
	ovf              uint32
	atUpper, atLower bool
	touch            byte   // see decode
	val              []byte // the current value, when it lives in overflow pages
	valid            bool
	err              error
	raBuf            [readAheadMax]PageID // the children a read-ahead asks for
	leafDepth        int                  // len(stack) at a leaf, once a descent reached one (0 before)
}

// windowSize is how many cells one move decodes (≤ 32: ovf's bits);
// seekWindow the fewer a seek decodes, as a scan may want only a row or two
// (a scan that goes on decodes windowSize at its next decoding move).
const (
	windowSize = 32
	seekWindow = 8
)

// cellRef is where a decoded cell's key and value are in the leaf: the
// key at [koff, koff+klen), the value (or its overflow reference) right
// after it, vlen bytes. Pages are at most 64 KiB and keys and inline
// values at most a quarter page, so 16 bits hold each (koff+klen may be
// 65536: sums are taken in int).
type cellRef struct {
	koff, klen, vlen uint16
}

type frame struct {
	id    PageID
	child int
	count int // number of keys in the branch
	// ids caches children [idsFrom, idsFrom+len(ids)) of the branch, read
	// while it was pinned or by a good optimistic read (0 past its ends): a move to the next or
	// previous leaf takes the child from here instead of pinning the
	// branch again. The version's pages (as the cursor reads them: id is
	// the version's page if the branch changed since, versions.go) do not
	// change while the cursor reads it.
	idsFrom int
	ids     [4]PageID
	// raEdge is the first child, in the direction the cursor moved when
	// it read ahead, that was not read ahead although the scan needs it
	// (-1: none): reaching it reads the next children ahead.
	raEdge int
}

// fill caches the children of branch n from index from on.
func (f *frame) fill(n node, from int) {
	f.idsFrom = from
	for k := range f.ids {
		f.ids[k] = 0
		if j := from + k; j >= 0 && j <= f.count {
			f.ids[k] = PageID(n.child(j))
		}
	}
}

// cached returns child i from the cache, or 0.
func (f *frame) cached(i int) PageID {
	if k := i - f.idsFrom; k >= 0 && k < len(f.ids) {
		return f.ids[k]
	}
	return 0
}

// NewCursor returns an unpositioned cursor over the version rooted at root,
// over the keys in [lower, upper) (nil bounds are open). The cursor keeps
// the bounds' slices: the caller must not change them.
func (t *Tree) NewCursor(root PageID, lower, upper []byte) *Cursor {
	c := new(Cursor)
	t.InitCursor(c, root, lower, upper)
	return c
}

// InitCursor makes *c, a zero Cursor, a new cursor as NewCursor returns,
// for a caller that embeds the cursor in a struct of its own (one
// allocation for both). c must not be copied after.
func (t *Tree) InitCursor(c *Cursor, root PageID, lower, upper []byte) {
	t.InitCursorAt(c, root, Live, lower, upper)
}

// InitCursorAt is InitCursor over the version of transaction asOf rooted
// at root, as a snapshot taken then reads it: the nodes commits changed
// in place since are read from their versions (versions.go).
func (t *Tree) InitCursorAt(c *Cursor, root PageID, asOf uint64, lower, upper []byte) {
	c.t, c.root, c.asOf, c.lower, c.upper = t, root, asOf, lower, upper
	c.stack = c.stackBuf[:0]
}

// Release unpins the current leaf; the cursor is then unpositioned. A
// cursor must be released before its tree's pool closes.
func (c *Cursor) Release() {
	c.Unpin()
	c.leaf, c.valid = nil, false
}

// Unpin releases the pin on the current leaf and nothing else: for a
// caller that makes sure the cursor is neither read nor moved any more
// (the database's Close, for the iterators left open), from any goroutine
// once the owner's last move has returned. A read of Key or InlineValue
// running at the same time reads only the cursor's own fields.
func (c *Cursor) Unpin() {
	if c.held {
		c.pg.Release()
		c.held = false
	}
}

// Valid reports whether the cursor is at an entry.
func (c *Cursor) Valid() bool { return c.valid }

// Err is the first error the cursor met.
func (c *Cursor) Err() error { return c.err }

// Key is the current key; valid until the cursor moves or is released. It
// reads no page memory (see the window).
func (c *Cursor) Key() []byte {
	r := &c.win[c.i-c.wlo]
	end := int(r.koff) + int(r.klen)
	return c.leaf[r.koff:end:end]
}

// InlineValue is the current value when it is stored in the leaf (valid
// as Key's slice), reading no page memory; ok is false when the value
// lives in overflow pages (Value reads it).
func (c *Cursor) InlineValue() (v []byte, ok bool) {
	k := c.i - c.wlo
	if c.ovf&(1<<k) != 0 {
		return nil, false
	}
	r := &c.win[k]
	off := int(r.koff) + int(r.klen)
	end := off + int(r.vlen)
	return c.leaf[off:end:end], true
}

// Value is the current value; valid until the cursor moves. A value in
// overflow pages is read from them at each call; if that fails, Value returns
// nil, the cursor becomes invalid and Err says why.
func (c *Cursor) Value() []byte {
	if v, ok := c.InlineValue(); ok {
		return v
	}
	ref, _, length := c.leaf.value(c.i)
	val, err := c.t.readValue(c.val[:0], ref, true, length)
	if err != nil {
		c.fail(err)
		return nil
	}
	c.val = val
	return val
}

// descend walks from page id to a leaf, taking the child pick chooses at
// each branch, and pins the leaf (releasing the one held before). back
// says which way the cursor moves (for the read-ahead: readahead.go).
func (c *Cursor) descend(id PageID, pick func(n node) int, back bool) bool {
	if c.held {
		c.pg.Release()
		c.held, c.leaf = false, nil
	}
	var redirected PageID // the version read in place of a newer node
	for {
		depth := len(c.stack)
		if depth > maxDepth {
			c.fail(errTooDeep(c.root))
			return false
		}
		var next PageID
		var ahead []PageID
		enter := func(n node) error {
			if n.txid() > c.asOf {
				return errPeekFailed // read with the latch, from its version
			}
			i := pick(n)
			c.stack = append(c.stack[:depth], frame{id: id, child: i, count: n.count()})
			top := &c.stack[depth]
			top.fill(n, i-1) // the child taken and its neighbours
			next = top.ids[1]
			ahead = c.readAheadSpan(top, n, i, back)
			return nil
		}
		// At the leaves' depth (known once a descent reached it; the
		// version's shape does not change) a peek would only fail.
		if (c.leafDepth > 0 && depth >= c.leafDepth) || !c.t.peekBranch(id, true, enter) {
			c.stack = c.stack[:depth]
			var pg bufferpool.Page
			var err error
			if c.asOf == Live {
				pg, err = c.t.pool.Get(id, bufferpool.Shared)
			} else {
				// Not waiting for a commit changing the node: its version.
				var read PageID
				if pg, read, err = c.t.pinAt(id, c.asOf); err == nil && read != id {
					id, redirected = read, read
				}
			}
			if err != nil {
				c.fail(err)
				return false
			}
			n := node(pg.Data())
			if txid := n.txid(); txid > c.asOf {
				// Changed in place since the version read: read its
				// version, which nothing changes.
				pg.Release()
				if id == redirected {
					c.fail(errVersionTooNew(id, txid, c.asOf))
					return false
				}
				if id, err = c.t.versionOf(id, txid, c.asOf); err != nil {
					c.fail(err)
					return false
				}
				redirected = id
				continue
			}
			switch n.kind() {
			case kindLeaf:
				c.pg, c.held, c.leaf, c.count = pg, true, n, n.count()
				c.leafDepth = len(c.stack)
				return true
			case kindBranch:
				pg.MarkInner()
			default:
				pg.Release()
				c.fail(fmt.Errorf("btree: page %d: %w: kind %d", id, ErrCorruptNode, n.kind()))
				return false
			}
			_ = enter(n)
			pg.Release()
		}
		if next == 0 {
			c.fail(fmt.Errorf("btree: page %d has a zero child", id))
			return false
		}
		c.readAhead(ahead)
		id = next
	}
}

func (c *Cursor) fail(err error) {
	c.err = err
	c.Release()
}

func (c *Cursor) reset() bool {
	c.stack, c.valid = c.stack[:0], false
	return c.root != 0 && c.err == nil
}

// First moves to the smallest key (in bounds).
func (c *Cursor) First() bool {
	if c.lower != nil {
		return c.SeekGE(c.lower)
	}
	if !c.reset() || !c.descend(c.root, func(node) int { return 0 }, false) {
		return false
	}
	c.i = 0
	return c.settleForward(seekWindow)
}

// Last moves to the largest key (in bounds).
func (c *Cursor) Last() bool {
	if c.upper != nil {
		return c.SeekLT(c.upper)
	}
	if !c.reset() || !c.descend(c.root, func(n node) int { return n.count() }, true) {
		return false
	}
	c.i = c.count - 1
	return c.settleBackward(seekWindow)
}

// SeekGE moves to the first key ≥ key (and in bounds).
func (c *Cursor) SeekGE(key []byte) bool {
	if c.lower != nil && bytes.Compare(key, c.lower) < 0 {
		key = c.lower
	}
	if !c.reset() || !c.descend(c.root, func(n node) int { return n.childFor(key) }, false) {
		return false
	}
	c.i, _ = c.leaf.search(key)
	return c.settleForward(seekWindow)
}

// SeekLT moves to the last key < key (and in bounds).
func (c *Cursor) SeekLT(key []byte) bool {
	if c.upper != nil && bytes.Compare(key, c.upper) > 0 {
		key = c.upper
	}
	if !c.reset() || !c.descend(c.root, func(n node) int { return n.childFor(key) }, true) {
		return false
	}
	i, _ := c.leaf.search(key)
	c.i = i - 1
	return c.settleBackward(seekWindow)
}

// NextInWindow moves to the next key if it is in the decoded window, and
// reports whether it did; it reads no page memory. When it reports false
// the cursor has not moved: Next moves it.
func (c *Cursor) NextInWindow() bool {
	if c.valid && c.i+1 < c.whi {
		c.i++
		return true
	}
	return false
}

// PrevInWindow is NextInWindow's mirror for Prev.
func (c *Cursor) PrevInWindow() bool {
	if c.valid && c.i > c.wlo {
		c.i--
		return true
	}
	return false
}

// Next moves to the next key.
func (c *Cursor) Next() bool {
	if c.NextInWindow() {
		return true
	}
	if !c.valid {
		return false
	}
	if c.atUpper {
		c.valid = false
		return false
	}
	c.i++
	return c.settleForward(windowSize)
}

// Prev moves to the previous key.
func (c *Cursor) Prev() bool {
	if c.PrevInWindow() {
		return true
	}
	if !c.valid {
		return false
	}
	if c.atLower {
		c.valid = false
		return false
	}
	c.i--
	return c.settleBackward(windowSize)
}

// settleForward moves past the end of the current leaf to the next
// non-empty leaf if needed, then decodes the window from c.i on.
func (c *Cursor) settleForward(window int) bool {
	for c.i >= c.count {
		// Pop to the first ancestor with a next child.
		for len(c.stack) > 0 && c.stack[len(c.stack)-1].child >= c.stack[len(c.stack)-1].count {
			c.stack = c.stack[:len(c.stack)-1]
		}
		if len(c.stack) == 0 {
			c.Release() // ran off the end
			return false
		}
		top := &c.stack[len(c.stack)-1]
		top.child++
		next := top.cached(top.child)
		if next == 0 || top.child == top.raEdge {
			var ahead []PageID
			edge := top.child == top.raEdge // readAheadSpan moves raEdge: fn may run twice
			read, err := c.t.readBranchAt(top.id, c.asOf, func(n node) error {
				top.fill(n, top.child)
				if edge {
					ahead = c.readAheadSpan(top, n, top.child, false)
				}
				return nil
			})
			if err != nil {
				c.fail(err)
				return false
			}
			top.id = read // its version, if it was changed in place
			if next = top.ids[0]; next == 0 {
				c.fail(fmt.Errorf("btree: page %d has a zero child", top.id))
				return false
			}
			c.readAhead(ahead)
		}
		if !c.descend(next, func(node) int { return 0 }, false) {
			return false
		}
		c.i = 0
	}
	c.decode(c.i, min(c.i+window, c.count))
	// Every key from c.i on is ≥ lower (the seek or the previous key
	// was): only the upper bound cuts the window.
	if c.upper != nil && bytes.Compare(c.keyAt(c.whi-1), c.upper) >= 0 {
		n := sort.Search(c.whi-c.wlo, func(k int) bool { return bytes.Compare(c.keyAt(c.wlo+k), c.upper) >= 0 })
		c.whi, c.atUpper = c.wlo+n, true
		if n == 0 {
			c.valid = false
			return false
		}
	}
	c.valid = true
	return true
}

// settleBackward moves before the start of the current leaf to the
// previous non-empty leaf if needed, then decodes the window that ends at
// c.i.
func (c *Cursor) settleBackward(window int) bool {
	for c.i < 0 {
		for len(c.stack) > 0 && c.stack[len(c.stack)-1].child == 0 {
			c.stack = c.stack[:len(c.stack)-1]
		}
		if len(c.stack) == 0 {
			c.Release() // ran off the end
			return false
		}
		top := &c.stack[len(c.stack)-1]
		top.child--
		next := top.cached(top.child)
		if next == 0 || top.child == top.raEdge {
			last := len(top.ids) - 1
			var ahead []PageID
			edge := top.child == top.raEdge // readAheadSpan moves raEdge: fn may run twice
			read, err := c.t.readBranchAt(top.id, c.asOf, func(n node) error {
				top.fill(n, top.child-last)
				if edge {
					ahead = c.readAheadSpan(top, n, top.child, true)
				}
				return nil
			})
			if err != nil {
				c.fail(err)
				return false
			}
			top.id = read // its version, if it was changed in place
			if next = top.ids[last]; next == 0 {
				c.fail(fmt.Errorf("btree: page %d has a zero child", top.id))
				return false
			}
			c.readAhead(ahead)
		}
		if !c.descend(next, func(n node) int { return n.count() }, true) {
			return false
		}
		c.i = c.count - 1
	}
	c.decode(max(c.i+1-window, 0), c.i+1)
	// Every key up to c.i is < upper: only the lower bound cuts.
	if c.lower != nil && bytes.Compare(c.keyAt(c.wlo), c.lower) < 0 {
		n := sort.Search(c.whi-c.wlo, func(k int) bool { return bytes.Compare(c.keyAt(c.wlo+k), c.lower) >= 0 })
		c.wlo, c.atLower = c.wlo+n, true
		if c.wlo == c.whi {
			c.valid = false
			return false
		}
		// Keep win indexed from wlo.
		copy(c.win[:], c.win[n:])
		c.ovf >>= n
	}
	c.valid = true
	return true
}

// decode fills the window with cells [from, to) of the leaf
// (to-from ≤ windowSize, from < to).
func (c *Cursor) decode(from, to int) {
	c.wlo, c.whi, c.atUpper, c.atLower, c.ovf = from, to, false, false, 0
	n := c.leaf
	// First load each cell's first byte in a loop that does nothing else:
	// the loads are independent, so the CPU has the cache lines of all the
	// window's cells in flight at once (a cell is often a line of its own,
	// not in cache) rather than as many as fit in its reorder window
	// during the decoding below.
	var touch byte
	for i := from; i < to; i++ {
		touch |= n[n.cellOff(i)]
	}
	c.touch = touch
	win := c.win[:to-from]
	for k := range win {
		i := from + k
		// node.cell, inline for a one-byte key length and a one- or
		// two-byte value length (every key under 128 bytes with a value
		// under 8 KiB); the rest take the call.
		off := n.cellOff(i)
		if klen := n[off]; klen < 0x80 {
			vf, voff := int(n[off+1]), off+2
			if vf >= 0x80 {
				if b := n[off+2]; b < 0x80 {
					vf, voff = vf&0x7f|int(b)<<7, off+3
				} else {
					vf = -1
				}
			}
			if vf >= 0 && vf&1 == 0 {
				win[k] = cellRef{koff: uint16(voff), klen: uint16(klen), vlen: uint16(vf >> 1)}
				continue
			}
		}
		koff, klen, vlen, overflow := n.cell(i)
		win[k] = cellRef{koff: uint16(koff), klen: uint16(klen), vlen: uint16(vlen)}
		if overflow {
			c.ovf |= 1 << k
		}
	}
}

// keyAt is the key of decoded cell i (wlo ≤ i < whi).
func (c *Cursor) keyAt(i int) []byte {
	r := &c.win[i-c.wlo]
	return c.leaf[r.koff : int(r.koff)+int(r.klen)]
}

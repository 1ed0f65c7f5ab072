package btree

import (
	"fmt"

	"github.com/stratadb/strata/internal/bufferpool"
)

// Cursor iterates over the version of a tree rooted at a given page, in
// both directions. It reads the current leaf in place, keeping it pinned
// shared between calls (released by Release, by moving off it, or when the
// cursor runs off the end): so no writer may change the pages of its
// version in place while it is used — the caller's snapshot freezes them —
// and the pages must stay allocated (the snapshot guarantees that too).
type Cursor struct {
	t     *Tree
	root  PageID
	stack []frame // branch path: page and child index taken
	pg    bufferpool.Page
	held  bool   // pg is pinned
	leaf  []byte // the current leaf's page (pg.Data()), valid while held
	i     int    // cell index in leaf
	val   []byte // the current value, when it lives in overflow pages
	valid bool
	err   error
}

type frame struct {
	id    PageID
	child int
	count int // number of keys in the branch
}

// NewCursor returns an unpositioned cursor over the version rooted at root.
func (t *Tree) NewCursor(root PageID) *Cursor {
	return &Cursor{t: t, root: root}
}

// Release unpins the current leaf; the cursor is then unpositioned. A
// cursor must be released before its tree's pool closes.
func (c *Cursor) Release() {
	if c.held {
		c.pg.Release()
		c.held, c.leaf = false, nil
	}
	c.valid = false
}

// Valid reports whether the cursor is at an entry.
func (c *Cursor) Valid() bool { return c.valid }

// Err is the first error the cursor met.
func (c *Cursor) Err() error { return c.err }

// Key is the current key; valid until the cursor moves or is released.
func (c *Cursor) Key() []byte { return node(c.leaf).key(c.i) }

// Value is the current value; valid until the cursor moves. A value in
// overflow pages is read from them at each call; if that fails, Value returns
// nil, the cursor becomes invalid and Err says why.
func (c *Cursor) Value() []byte {
	v, overflow, length := node(c.leaf).value(c.i)
	if !overflow {
		return v
	}
	val, err := c.t.readValue(c.val[:0], v, true, length)
	if err != nil {
		c.fail(err)
		return nil
	}
	c.val = val
	return val
}

// descend walks from page id to a leaf, taking the child pick chooses at
// each branch, and pins the leaf (releasing the one held before).
func (c *Cursor) descend(id PageID, pick func(n node) int) bool {
	if c.held {
		c.pg.Release()
		c.held, c.leaf = false, nil
	}
	for {
		pg, err := c.t.pool.Get(id, bufferpool.Shared)
		if err != nil {
			c.fail(err)
			return false
		}
		n := node(pg.Data())
		switch n.kind() {
		case kindLeaf:
			c.pg, c.held, c.leaf = pg, true, n
			return true
		case kindBranch:
		default:
			pg.Release()
			c.fail(fmt.Errorf("btree: page %d: %w: kind %d", id, ErrCorruptNode, n.kind()))
			return false
		}
		i := pick(n)
		c.stack = append(c.stack, frame{id: id, child: i, count: n.count()})
		next := PageID(n.child(i))
		pg.Release()
		if next == 0 {
			c.fail(fmt.Errorf("btree: page %d has a zero child", id))
			return false
		}
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

// First moves to the smallest key.
func (c *Cursor) First() bool {
	if !c.reset() || !c.descend(c.root, func(node) int { return 0 }) {
		return false
	}
	c.i = 0
	return c.settleForward()
}

// Last moves to the largest key.
func (c *Cursor) Last() bool {
	if !c.reset() || !c.descend(c.root, func(n node) int { return n.count() }) {
		return false
	}
	c.i = node(c.leaf).count() - 1
	return c.settleBackward()
}

// SeekGE moves to the first key ≥ key.
func (c *Cursor) SeekGE(key []byte) bool {
	if !c.reset() || !c.descend(c.root, func(n node) int { return n.childFor(key) }) {
		return false
	}
	c.i, _ = node(c.leaf).search(key)
	return c.settleForward()
}

// SeekLT moves to the last key < key.
func (c *Cursor) SeekLT(key []byte) bool {
	if !c.reset() || !c.descend(c.root, func(n node) int { return n.childFor(key) }) {
		return false
	}
	i, _ := node(c.leaf).search(key)
	c.i = i - 1
	return c.settleBackward()
}

// Next moves to the next key.
func (c *Cursor) Next() bool {
	if !c.valid {
		return false
	}
	c.i++
	return c.settleForward()
}

// Prev moves to the previous key.
func (c *Cursor) Prev() bool {
	if !c.valid {
		return false
	}
	c.i--
	return c.settleBackward()
}

// settleForward moves past the end of the current leaf to the next
// non-empty leaf if needed.
func (c *Cursor) settleForward() bool {
	for c.i >= node(c.leaf).count() {
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
		var next PageID
		if err := c.t.readNode(top.id, func(n node) error { next = PageID(n.child(top.child)); return nil }); err != nil {
			c.fail(err)
			return false
		}
		if !c.descend(next, func(node) int { return 0 }) {
			return false
		}
		c.i = 0
	}
	c.valid = true
	return true
}

func (c *Cursor) settleBackward() bool {
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
		var next PageID
		if err := c.t.readNode(top.id, func(n node) error { next = PageID(n.child(top.child)); return nil }); err != nil {
			c.fail(err)
			return false
		}
		if !c.descend(next, func(n node) int { return n.count() }) {
			return false
		}
		c.i = node(c.leaf).count() - 1
	}
	c.valid = true
	return true
}

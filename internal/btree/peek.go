package btree

import "errors"

// Optimistic reads (bufferpool.Pool.Peek): every lookup and every scan's
// descent reads the root and the upper branches, from every CPU. Latching
// them, even shared, writes the latch's reader count, a cache line the
// CPUs then pass between them on every access; a peek writes nothing
// shared. A point lookup peeks its leaf as well (Tree.lookup), copying
// the value out before it knows the read was good; scans latch leaves
// (a cursor holds its leaf while the caller reads it).
//
// Lock rules: none. A peeked page is neither latched nor pinned: its
// bytes may be another page's, or change, while fn reads them. So fn must
// survive any bytes — a panic in it (an index out of range) counts as a
// failed read — and must not act on what it read before peekBranch has
// returned true: only then were the bytes page id's, unchanged throughout.
// Its effects on the caller's variables must be ones that a second call
// (on the page read with a latch, after a failed peek) overwrites.

// peekBranch calls fn with branch page id read optimistically, and reports
// whether fn ran on page id's bytes, unchanged, and returned nil. false
// means nothing, but that the caller must read the page with a latch (it
// is not a marked inner page in a frame, was latched exclusively or
// changed meanwhile, or is not a branch). count says whether the read
// counts as a hit (as bufferpool.Pool.GetCached's). fn must not act on
// what it read before peekBranch returns true (the lock rules above);
// Tree.lookup's leaf function appends to the caller's buffer, which it
// takes back itself when the read fails (forget).
func (t *Tree) peekBranch(id PageID, count bool, fn func(n node) error) bool {
	return t.peekNode(id, count, false, fn)
}

// peekNode is peekBranch accepting a leaf too (leaves: a leaf, or a branch
// marked inner; a branch not yet marked is read with the latch, which
// marks it).
func (t *Tree) peekNode(id PageID, count, leaves bool, fn func(n node) error) bool {
	pk, ok := t.pool.Peek(id, count)
	if !ok {
		return false
	}
	ok = guarded(node(pk.Data()), pk.Inner(), leaves, fn)
	if ok && peekReadHook != nil {
		peekReadHook(id)
	}
	ok = ok && pk.Done()
	if peekHook != nil {
		peekHook(id, node(pk.Data()).kind() == kindLeaf, ok)
	}
	return ok
}

// peekReadHook, when set (by tests only), runs between a peek's read and
// its check: where a change that must fail the read lands.
var peekReadHook func(id PageID)

// errPeekFailed is returned by a peek's function for a read it leaves to
// the latched path (which reports any corruption).
var errPeekFailed = errors.New("btree: read with the latch")

// peekHook, when set (by tests only), is told of each optimistic read
// of a page in a frame, whether the page was a leaf (when the hook ran),
// and whether the read was good.
var peekHook func(id PageID, leaf, good bool)

// guarded calls fn with n if n says it is a branch marked inner (inner),
// or, with leaves, a leaf, turning a panic into false.
func guarded(n node, inner, leaves bool, fn func(n node) error) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	switch n.kind() {
	case kindBranch:
		if !inner {
			return false
		}
	case kindLeaf:
		if !leaves {
			return false
		}
	default:
		return false
	}
	return fn(n) == nil
}

// readBranch is readNode for a page the caller expects to be a branch:
// read optimistically if it can be, else pinned. fn is called once or
// twice (see the lock rules); only the last call's effects count.
func (t *Tree) readBranch(id PageID, fn func(n node) error) error {
	if t.peekBranch(id, true, fn) {
		return nil
	}
	return t.readNode(id, fn)
}

package btree

// Optimistic reads of branches (bufferpool.Pool.PeekInner): every lookup
// and every scan's descent reads the root and the upper branches, from
// every CPU. Latching them, even shared, writes the latch's reader count,
// a cache line the CPUs then pass between them on every access; a peek
// writes nothing shared.
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
// counts as a hit (as bufferpool.Pool.GetCached's).
func (t *Tree) peekBranch(id PageID, count bool, fn func(n node) error) bool {
	pk, ok := t.pool.PeekInner(id, count)
	if !ok {
		return false
	}
	ok = guarded(node(pk.Data()), fn) && pk.Done()
	if peekHook != nil {
		peekHook(id, ok)
	}
	return ok
}

// peekHook, when set (by tests only), is told of each optimistic read
// of a page in a frame and whether it was good.
var peekHook func(id PageID, good bool)

// guarded calls fn with n if n says it is a branch, turning a panic into
// false.
func guarded(n node, fn func(n node) error) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return n.kind() == kindBranch && fn(n) == nil
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

package btree

import (
	"bytes"
	"sort"
)

// Read-ahead for bounded scans: a cursor that enters a branch knows, from
// the branch's separators and its bound, which children its scan will
// visit; it asks the pool to read those not in memory now, together
// (bufferpool.Pool.ReadAhead), before it reads the first. Where the
// leaves lie close together on disk, one read brings several; the reads
// of leaves apart are made at once. Only the branches right above the
// leaves read ahead once the cursor knows the tree's height (its first
// descent): the children of higher branches are branches, mostly in
// memory, and read far ahead of their use.
//
// Only a bound says where a scan ends: a cursor without one in the
// direction it moves reads nothing ahead (its caller may stop after a row
// or two; reading ahead then wastes reads, which is what a read-ahead of
// the next two leaves of every unbounded scan measured: 0.87× on
// sysbench's scans, docs/BENCHMARKS.md). A branch's span is read
// readAheadMax children at a time: reaching the first child of the span
// not read (frame.raEdge) reads the next.
//
// Lock rules: none of the cursor's (it is used by one goroutine);
// readAheadSpan runs while the branch is pinned, or read optimistically
// (peek.go: its result is used only once the read is known good),
// readAhead after it is released. The leaf the cursor is leaving may still be pinned, shared,
// during the reads (a version's pages, as a cursor reads them, are not
// changed in place while it reads them: versions.go).

// readAheadMax is how many children one read-ahead asks for.
const readAheadMax = 16

// readAheadSpan returns the children of branch n, in frame f, that a scan
// moving from child i (backwards if back) visits before it passes its
// bound, at most readAheadMax of them, in c.raBuf; none without a bound
// that way, or when only child i is in it. It sets f.raEdge.
func (c *Cursor) readAheadSpan(f *frame, n node, i int, back bool) []PageID {
	f.raEdge = -1
	if c.leafDepth > 0 && len(c.stack) != c.leafDepth {
		return nil // a branch above the leaves' parents
	}
	lo, hi := i, i
	switch {
	case !back && c.upper != nil:
		// Child j holds keys in [key(j-1), key(j)): the last child with
		// a key below upper is the number of separators below it.
		last := sort.Search(n.count(), func(k int) bool { return bytes.Compare(n.key(k), c.upper) >= 0 })
		hi = min(last, i+readAheadMax-1)
		if hi < last {
			f.raEdge = hi + 1
		}
	case back && c.lower != nil:
		first := n.childFor(c.lower)
		lo = max(first, i-readAheadMax+1)
		if lo > first {
			f.raEdge = lo - 1
		}
	}
	if hi <= lo {
		return nil
	}
	ids := c.raBuf[:0]
	for j := lo; j <= hi; j++ {
		ids = append(ids, PageID(n.child(j)))
	}
	return ids
}

// readAhead asks the pool to read ids ahead (no page held).
func (c *Cursor) readAhead(ids []PageID) {
	if len(ids) > 0 {
		c.t.pool.ReadAhead(ids)
	}
}

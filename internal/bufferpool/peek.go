package bufferpool

import "github.com/stratadb/strata/internal/pagestore"

// Optimistic reads: a lookup reads the root and the upper branches of an
// index on every access, from every CPU. Latching them, even shared,
// writes the latch's reader count, one cache line that every CPU then
// takes in turn (on cached read-only OLTP with two threads the root's
// latch was a tenth of the CPU). A peek writes nothing shared: it reads
// the frame's version (latch.go), the page's bytes, and the version
// again; the reader uses what it read only if the version did not move.
// A point read peeks its leaf too, copying out the value it finds.
//
// Lock rules: none taken. A peek holds no latch and no pin, so the page
// may leave its frame, or the frame be rewritten, while it is read: the
// reader must survive any bytes (no slice bound, loop count or length
// taken from them may be trusted before Done says they were the page's).

// Peek is an optimistic read of a page in a frame (Pool.Peek).
type Peek struct {
	part  *partition
	d     int32
	frame int32
	ver   uint32
	count bool
	inner bool
}

// Peek returns, without latching or pinning it, a read of page id if it
// is in a frame and not latched exclusively; ok is false otherwise, and
// the caller reads it with Get. The caller reads Data defensively and
// then calls Done: only if Done returns true were the bytes it read page
// id's, unchanged throughout. count says whether the read counts as a
// frame hit (as GetCached's count), which Done records.
func (p *Pool) Peek(id PageID, count bool) (pk Peek, ok bool) {
	if !optimisticReads || p.closed.Load() || id > pagestore.MaxPageID {
		return Peek{}, false
	}
	pt := p.partFor(id)
	di, found := pt.table.lookup(id)
	if !found {
		return Peek{}, false
	}
	d := pt.desc(di)
	if d.state.Load() != stFrame {
		return Peek{}, false
	}
	f := d.frame.Load()
	if f < 0 {
		return Peek{}, false
	}
	v, free := pt.latches[f].version()
	if !free {
		return Peek{}, false
	}
	// The version was read first: if the descriptor still says the page
	// is in frame f now, it was there when the version was read, and only
	// an exclusive latch, which moves the version, can take it out.
	if d.state.Load() != stFrame || d.frame.Load() != f || d.pageID() != id {
		return Peek{}, false
	}
	return Peek{part: pt, d: di, frame: f, ver: v, count: count, inner: d.inner.Load()}, true
}

// Inner reports whether the page was marked inner (Page.MarkInner) when
// the peek began. A reader that would mark the page it finds (the tree
// marks its branches) reads an unmarked one with Get instead, so that
// marks are set only on pages read under a latch.
func (pk Peek) Inner() bool { return pk.inner }

// Data is the page's bytes, which may change while they are read.
func (pk Peek) Data() []byte { return pk.part.frameData(pk.frame) }

// Done ends the read: it reports whether everything read from Data since
// Peek was page id's bytes, unchanged. A read that was counts as a use of
// the page (the reference bit, an inner page's age, a hit).
func (pk Peek) Done() bool {
	pt := pk.part
	if !pt.latches[pk.frame].unchanged(pk.ver) {
		return false
	}
	d := pt.desc(pk.d)
	if !d.ref.Load() {
		d.ref.Store(true)
	}
	if pk.inner {
		pt.touchInner(d)
	}
	pt.countHit(d, pk.count)
	return true
}

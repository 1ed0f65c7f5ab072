package strata

import (
	"bytes"
	"sync/atomic"

	"github.com/stratadb/strata/internal/btree"
)

// This file holds iterators: their own in-flight gate (begin, end), the
// fast paths that serve a row from the cursor's decoded window without it,
// and the list of open iterators that Close releases.
//
// Lock rules: an iterator is used by one goroutine at a time. DB.Close may
// run on another: it loads busy (the gate) and, once clear, unpins the
// cursor's leaf (Cursor.Unpin), touching nothing else of the iterator;
// the ungated paths (Key, an inline Value, Next and Prev inside the
// window) load db.closed and read only fields Close never writes. The
// list of open iterators (DB.iters, through newer and older) and the
// snapshot counts are guarded by db.mu; NewIter registers its snapshot
// under treeMu held shared (takeSnapshot, as NewSnapshot does), and
// itself in the list under the same hold of db.mu (registerIter).

// IterOptions bound an iterator: keys in [LowerBound, UpperBound). Nil
// bounds are open.
//
// A bound also says where a scan ends: an iterator moving towards a bound
// reads the leaves before it that are not cached together, ahead of
// reaching them (several with one disk read where they lie together), so
// a range query whose end is known should pass it as the bound rather
// than stop by itself. Without one nothing is read ahead.
type IterOptions struct {
	LowerBound []byte
	UpperBound []byte
}

// Iterator walks keys in order, forward or backward, over one consistent
// version of the database. Key and Value are valid until the next move
// (or the end of its transaction, or DB.Close).
// Close it when done.
type Iterator struct {
	db *DB
	c  cursor // the tree's, or merged with a transaction's writes
	// tc is c when it is the tree's own cursor (not merged): its window
	// lets rows be read and stepped over without the gate (see Next).
	tc  *btree.Cursor
	cur btree.Cursor // the tree cursor, tc unless merged
	// direct: tc is the cursor and the iterator is outside a transaction,
	// the case the fast paths of Next, Key and Value serve.
	direct bool
	lower  []byte
	upper  []byte
	// seekKey holds a copy of the key of the last seek (seekCopy), in
	// seekBuf while it fits: a seek allocates nothing for short keys.
	seekKey []byte
	seekBuf [64]byte
	valid   bool
	closed  bool
	err     error
	// snap is the iterator's own snapshot (own), for iterators made by
	// DB.NewIter and Snapshot.NewIter; nil for a transaction's.
	snap *Snapshot
	own  Snapshot
	// tx is the transaction of an iterator made by Tx.NewIter, with its
	// write count then: the iterator ends when either changes.
	tx       *Tx
	txWrites uint64
	// newer and older link the database's list of open iterators outside
	// transactions (DB.iters, under db.mu).
	newer, older *Iterator
	// busy is set while a move of an iterator outside a transaction runs:
	// its own in-flight gate, on the iterator rather than the database's
	// shared counter, so that a scan's moves write no cache line other
	// goroutines write. Close waits for it to clear (see DB.Close).
	busy atomic.Bool
}

// iterList is a list of iterators through their newer and older fields:
// adding and removing cost no allocation and no hashing (an iterator is
// opened and closed per range query).
type iterList struct{ newest *Iterator }

func (l *iterList) add(it *Iterator) {
	it.newer, it.older = nil, l.newest
	if l.newest != nil {
		l.newest.newer = it
	}
	l.newest = it
}

// remove takes it out of the list; it must be in it.
func (l *iterList) remove(it *Iterator) {
	if it.newer != nil {
		it.newer.older = it.older
	} else {
		l.newest = it.older
	}
	if it.older != nil {
		it.older.newer = it.newer
	}
	it.newer, it.older = nil, nil
}

// usable reports whether the iterator may move: not closed, and its
// transaction (if any) neither finished nor written to since.
func (it *Iterator) usable() bool {
	if it.closed {
		return false
	}
	if it.tx != nil {
		switch {
		case it.tx.done:
			it.err = ErrTxDone
		case it.tx.writes != it.txWrites:
			it.err = ErrTxChanged
		default:
			return true
		}
		it.valid = false
		return false
	}
	return true
}

// begin admits a move of the iterator: it is usable and, unless it runs
// inside a transaction (which holds the database open), the database is
// not closed. Every begin that returns true is matched by end.
//
// Outside a transaction the gate is the iterator's busy flag: set, then
// db.closed loaded, while Close stores db.closed and then loads busy (the
// store-then-load handshake of inflight.go, on sequentially consistent
// atomics): either the move sees Close and backs off, or Close sees the
// move and waits for it.
//
// Only what reads pool memory takes the gate: seeks, the moves of the tree
// cursor that decode a window of the leaf (one in btree's window size of
// a scan's rows, and each new leaf), overflow values. Key, an inline
// Value and a Next or Prev inside the window read the cursor's own fields
// (the slices they return point into the leaf, valid until DB.Close as
// documented): they check usable and db.closed (loads, no store) and run
// ungated. Close's release of an open iterator's leaf (Cursor.Unpin)
// writes no field they read.
func (it *Iterator) begin() bool {
	if !it.usable() {
		return false
	}
	if it.tx == nil {
		it.busy.Store(true)
		if it.db.closed.Load() {
			it.busy.Store(false)
			it.err, it.valid = ErrClosed, false
			return false
		}
	}
	return true
}

func (it *Iterator) end() {
	if it.tx == nil {
		it.busy.Store(false)
	}
}

// open reports, without the gate, whether the iterator may read its
// current row: usable and, outside a transaction, the database not closed
// (else the iterator becomes invalid with ErrClosed).
func (it *Iterator) open() bool {
	if !it.usable() {
		return false
	}
	if it.tx == nil && it.db.closed.Load() {
		it.err, it.valid = ErrClosed, false
		return false
	}
	return true
}

// NewIter returns an iterator over the current state (it takes its own
// snapshot, released by Close). An open iterator keeps the leaf it is on
// pinned in the cache: many open at once in a small cache can pin every
// frame of a cache partition, and then a read that needs a frame there
// waits up to 10 s for one and fails with ErrCacheFull (about 30 open
// iterators fill the smallest cache Open accepts, about 235 a 1 MiB one).
func (db *DB) NewIter(opts *IterOptions) (*Iterator, error) {
	if !db.enter() {
		return nil, ErrClosed
	}
	defer db.leave()
	it := db.allocIter(opts)
	if _, err := db.takeSnapshot(it); err != nil {
		return nil, err
	}
	return it, nil
}

// newIter returns a transaction's iterator over the version of
// transaction asOf rooted at root (btree.Live: the current one; not
// registered: the transaction ends it).
func (db *DB) newIter(root btree.PageID, asOf uint64, opts *IterOptions) *Iterator {
	db.st.iters.Add(1)
	it := db.allocIter(opts)
	db.tree.InitCursorAt(&it.cur, root, asOf, it.lower, it.upper)
	return it
}

// registerIter points it at snapshot version own, which it holds and
// releases, and adds it to the open iterators, so that Close can release
// the leaf it holds if the caller does not close it first. Called with
// db.mu held, with own registered under the same hold (one acquisition
// per iterator opened, one per iterator closed).
func (db *DB) registerIter(it *Iterator, own Snapshot) {
	db.st.iters.Add(1)
	db.tree.InitCursorAt(&it.cur, own.root, own.txid, it.lower, it.upper)
	it.own = own
	it.snap = &it.own
	db.iters.add(it)
}

// allocIter allocates an iterator with its own copy of opts' bounds (one
// allocation for both) and the tree cursor as its cursor.
func (db *DB) allocIter(opts *IterOptions) *Iterator {
	it := &Iterator{db: db}
	if opts != nil && (opts.LowerBound != nil || opts.UpperBound != nil) {
		lo, up := opts.LowerBound, opts.UpperBound
		buf := make([]byte, 0, len(lo)+len(up))
		if lo != nil {
			buf = append(buf, lo...)
			it.lower = buf[:len(lo):len(lo)]
		}
		if up != nil {
			it.upper = append(buf[len(buf):], up...)
		}
	}
	it.tc = &it.cur
	it.c, it.direct = it.tc, true
	return it
}

func (it *Iterator) settle(ok bool) bool {
	if it.closed {
		it.valid = false
		return false
	}
	if err := it.c.Err(); err != nil {
		it.err = it.db.readErr(err)
	}
	it.valid = ok && it.inBounds()
	return it.valid
}

func (it *Iterator) inBounds() bool {
	k := it.c.Key()
	return (it.lower == nil || bytes.Compare(k, it.lower) >= 0) && (it.upper == nil || bytes.Compare(k, it.upper) < 0)
}

// First moves to the first key in bounds.
func (it *Iterator) First() bool {
	if !it.begin() {
		return false
	}
	defer it.end()
	if it.lower != nil {
		return it.settle(it.c.SeekGE(it.lower))
	}
	return it.settle(it.c.First())
}

// Last moves to the last key in bounds.
func (it *Iterator) Last() bool {
	if !it.begin() {
		return false
	}
	defer it.end()
	if it.upper != nil {
		return it.settle(it.c.SeekLT(it.upper))
	}
	return it.settle(it.c.Last())
}

// SeekGE moves to the first key ≥ key (and in bounds). key may be a
// slice of the iterator's own Key or Value.
func (it *Iterator) SeekGE(key []byte) bool {
	if !it.begin() {
		return false
	}
	defer it.end()
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	return it.settle(it.c.SeekGE(it.seekCopy(key)))
}

// SeekLT moves to the last key < key (and in bounds). key may be a slice
// of the iterator's own Key or Value.
func (it *Iterator) SeekLT(key []byte) bool {
	if !it.begin() {
		return false
	}
	defer it.end()
	if it.upper != nil && bytes.Compare(key, it.upper) > 0 {
		key = it.upper
	}
	return it.settle(it.c.SeekLT(it.seekCopy(key)))
}

// seekCopy copies a seek's key into the iterator's buffer. A caller may
// pass a slice of the iterator's own Key or Value, which point into the
// leaf the iterator has pinned: the seek unpins that leaf before it reads
// the key to the end, and a frame reused meanwhile (another goroutine's
// miss) changed the key under it — the seek landed on another key, with
// no error (TestSeekToOwnKeyUnderEvictions).
func (it *Iterator) seekCopy(key []byte) []byte {
	if it.seekKey == nil {
		it.seekKey = it.seekBuf[:0]
	}
	it.seekKey = append(it.seekKey[:0], key...)
	return it.seekKey
}

// Next moves to the next key.
func (it *Iterator) Next() bool {
	// Inside the decoded window: no page read, no gate (see begin). The
	// window holds only keys in bounds.
	if it.direct && it.valid && !it.db.closed.Load() && it.tc.NextInWindow() {
		return true
	}
	return it.next()
}

func (it *Iterator) next() bool {
	if !it.valid {
		return false
	}
	if it.tc != nil && it.open() && it.tc.NextInWindow() {
		return true
	}
	if !it.begin() {
		return false
	}
	defer it.end()
	return it.settle(it.c.Next())
}

// Prev moves to the previous key.
func (it *Iterator) Prev() bool {
	if !it.valid {
		return false
	}
	if it.tc != nil && it.open() && it.tc.PrevInWindow() {
		return true
	}
	if !it.begin() {
		return false
	}
	defer it.end()
	return it.settle(it.c.Prev())
}

// Valid reports whether the iterator is at a key: false too once the
// database closed or the iterator's transaction ended or wrote, which let
// go of the leaf the iterator was on.
func (it *Iterator) Valid() bool {
	if !it.valid {
		return false
	}
	if it.tx != nil {
		return it.usable()
	}
	if it.db.closed.Load() {
		it.err, it.valid = ErrClosed, false
		return false
	}
	return true
}

// Key is the current key. Valid until the iterator moves, its transaction
// ends or the database closes (the slice is the leaf's memory in the
// pool). Once the database closed or the transaction ended, Key returns
// nil. It reads no page memory (the cursor decoded the row when it moved
// there), so it takes no gate (see begin).
func (it *Iterator) Key() []byte {
	if it.direct && it.valid && !it.db.closed.Load() {
		return it.tc.Key()
	}
	return it.key()
}

func (it *Iterator) key() []byte {
	if !it.valid || !it.open() {
		return nil
	}
	return it.c.Key()
}

// Value is the current value. Valid as long as Key's slice. A large
// value (stored in overflow pages) is read when Value is called; if that
// read fails, Value returns nil, the iterator becomes invalid and Error
// says why.
func (it *Iterator) Value() []byte {
	if it.direct && it.valid && !it.db.closed.Load() {
		if v, ok := it.tc.InlineValue(); ok {
			return v // never nil: a slice of the leaf
		}
	}
	return it.value()
}

func (it *Iterator) value() []byte {
	if !it.valid {
		return nil
	}
	if it.tc != nil {
		// An inline value is in the decoded row: no page read, no gate.
		if !it.open() {
			return nil
		}
		if v, ok := it.tc.InlineValue(); ok {
			if v == nil {
				v = []byte{}
			}
			return v
		}
	}
	if !it.begin() {
		return nil
	}
	defer it.end()
	v := it.c.Value()
	if err := it.c.Err(); err != nil {
		it.err, it.valid = it.db.readErr(err), false
		return nil
	}
	if v == nil {
		v = []byte{}
	}
	return v
}

// Error is the first error the iterator met: ErrClosed after Close of the
// iterator, or a move after Close of the database.
func (it *Iterator) Error() error {
	if it.closed {
		return ErrClosed
	}
	return it.err
}

// Close releases the iterator. Further calls return ErrClosed.
func (it *Iterator) Close() error {
	if it.closed {
		return ErrClosed
	}
	it.closed, it.valid = true, false
	if it.tx != nil {
		it.c.Release() // the transaction's goroutine; the database is open
		return nil
	}
	if it.db.enter() {
		it.c.Release()
		it.db.mu.Lock()
		it.db.iters.remove(it)
		it.db.releaseSnapshotLocked(it.snap.txid)
		it.db.mu.Unlock()
		it.db.leave()
		it.snap.closed = true
		return nil
	}
	// The database is closing: Close lets go of the leaf the iterator
	// holds (releaseIters) once the operations in flight have left, and
	// only then drops every snapshot. The iterator's snapshot stays
	// registered until then: released now, a commit in flight could find
	// the leaf it pins unfrozen and wait to change it in place, while
	// Close waits for that commit (found by a stress test).
	it.snap.closed = true
	return nil
}

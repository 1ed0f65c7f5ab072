package strata

import (
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/btree"
)

// This file holds the two registries that let reads run without db.mu:
//
//   - The in-flight gate: every public operation that touches the pool or
//     the files runs between enter and leave. Close sets db.closed, then
//     waits for the operations that entered to leave; once closed is set,
//     enter refuses (ErrClosed). So Close never unmaps the pool or closes a
//     file under a running read, and nothing runs after it. The moves of
//     an iterator outside a transaction (one per row of a scan) use a gate
//     of their own, the iterator's busy flag (Iterator.begin), which Close
//     waits on too (DB.releaseIters): the shared counter would be a cache
//     line every row of every concurrent scan writes.
//   - The current version (db.cur): a point read pins the version it
//     reads (acquireVersion) with an atomic count instead of holding db.mu
//     shared through the read. A commit swaps in the new version and retires
//     the old one; pages the old version needs are freed only once no
//     reader holds it (see publish and releaseFrees).
//
// Lock rules: enter, leave, acquireVersion and release take no lock (the
// drain's mutex is taken only by a leave that finds Close waiting). The
// retired list (db.retired) is guarded by db.mu.
//
// Both handshakes are the same store-then-load pattern on two sequentially
// consistent atomics (Go's sync/atomic): the reader increments its count and
// then loads the flag; the closer or committer stores the flag and then loads
// the count. One of them sees the other's write: either the reader backs off,
// or the other side sees the reader and waits for (or defers to) it.

// inflight is the gate of running operations.
type inflight struct {
	n     atomic.Int64
	mu    sync.Mutex // guards nothing but the wait below
	drain *sync.Cond // on mu: signalled when n drops to 0 while closed
}

// enter admits an operation, or reports false once Close has begun.
func (db *DB) enter() bool {
	db.ops.n.Add(1)
	if db.closed.Load() {
		db.leave()
		return false
	}
	return true
}

// leave ends an operation admitted by enter.
func (db *DB) leave() {
	if db.ops.n.Add(-1) == 0 && db.closed.Load() {
		db.ops.mu.Lock()
		db.ops.drain.Broadcast()
		db.ops.mu.Unlock()
	}
}

// waitInflight waits until every admitted operation has left. Called by
// Close after it set db.closed, so no new one is admitted.
func (db *DB) waitInflight() {
	db.ops.mu.Lock()
	for db.ops.n.Load() > 0 {
		db.ops.drain.Wait()
	}
	db.ops.mu.Unlock()
}

// version is one committed state of the tree, as point reads see it.
type version struct {
	root    btree.PageID
	txid    uint64
	readers atomic.Int64 // point reads in flight on this version
	retired atomic.Bool  // a later commit replaced it
}

// acquireVersion pins the current version for a read; release unpins it.
func (db *DB) acquireVersion() *version {
	for {
		v := db.cur.Load()
		v.readers.Add(1)
		if !v.retired.Load() {
			return v
		}
		// Replaced between the load and the pin: the committer may
		// already have found no reader. Try the new version.
		v.readers.Add(-1)
	}
}

func (v *version) release() { v.readers.Add(-1) }

// installVersion makes (root, txid) the current version and retires the
// previous one, keeping it in db.retired while it has readers. Called with
// db.mu held.
func (db *DB) installVersion(root btree.PageID, txid uint64) {
	nv := &version{root: root, txid: txid}
	if old := db.cur.Swap(nv); old != nil {
		old.retired.Store(true)
		db.retired = append(db.retired, old)
	}
	db.pruneRetired()
}

// pruneRetired drops the retired versions no reader holds any more, and
// returns the oldest txid a retired version with readers still reads
// (math.MaxUint64 if none). Called with db.mu held. A retired version's
// count only falls: no reader can pin it once retired is set.
func (db *DB) pruneRetired() uint64 {
	oldest := ^uint64(0)
	kept := db.retired[:0]
	for _, v := range db.retired {
		if v.readers.Load() > 0 {
			kept = append(kept, v)
			oldest = min(oldest, v.txid)
		}
	}
	clear(db.retired[len(kept):])
	db.retired = kept
	return oldest
}

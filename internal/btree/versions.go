package btree

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/bufferpool"
)

// Page versions: how snapshots keep their view without path copies.
//
// A node that only an open snapshot (or iterator) froze — written after
// the last checkpoint begun, at or before the newest snapshot — is not
// copied on write with its path. The commit copies its bytes to a new
// page, the version, and changes the node in place on its own page, so
// its parent, and the path above, stay as they are (Tx.writable). The
// table here maps the node's page to its versions, each with the txid
// that wrote its bytes and the txid of the commit that then changed the
// node (until). A reader of an older version of the tree (a snapshot at
// txid asOf) reads, in place of a node, the version written at or before
// asOf and replaced after it, if there is one (covering): the bytes the
// node held when the snapshot was taken. Nothing changes a version; the
// caller frees it (ForgetVersions first) once no reader of a version
// before the commit that made it remains, as it frees a page that commit
// replaced.
//
// A node that a reader holds when the commit wants to change it (an
// iterator keeps its leaf pinned) is copied on write instead: the commit
// changes a node in place only if it can take its latch exclusively at
// once (bufferpool.Pool.TryGet), so no reader ever sees a node change
// under it, and it records the version right after (no I/O between),
// before it changes the node. A reader looks the table up before it
// latches a node, and does not wait for a latch held exclusively: it
// looks again a few times (pinAt), so it does not wait for the rest of
// the commit (reading an old overflow chain, splitting) unless the commit
// was held up between taking the node and recording its version. A
// reader that latched the node before the commit read bytes the commit
// had not changed; one that latched it after and missed the table finds
// the commit's txid, and then the version (Tree.versionOf).
//
// Lock rules: the table's mutex guards its maps, and is held only for a
// lookup or an update of them, never across a page read.

// versionTable maps pages to the versions of them that readers of older
// versions of the tree read.
type versionTable struct {
	n  atomic.Int64 // versions in the table: readers skip the lock at 0
	mu sync.RWMutex
	of map[PageID][]pageVersion // page → its versions, in txid order
	// page maps a version's page back to the node it is a version of.
	page map[PageID]PageID
}

// pageVersion is a node's bytes as written by transaction txid, kept on
// page copy when transaction until changed the node in place: readers of
// the versions from txid up to until (excluded) read it.
type pageVersion struct {
	txid, until uint64
	copy        PageID
}

// add records that page copy holds the bytes node page had as written by
// transaction txid, before transaction until changed it.
func (vt *versionTable) add(page PageID, txid, until uint64, copy PageID) {
	vt.mu.Lock()
	defer vt.mu.Unlock()
	if vt.of == nil {
		vt.of = make(map[PageID][]pageVersion)
		vt.page = make(map[PageID]PageID)
	}
	vs := vt.of[page]
	i := len(vs)
	for i > 0 && vs[i-1].txid > txid {
		i--
	}
	vt.of[page] = slices.Insert(vs, i, pageVersion{txid: txid, until: until, copy: copy})
	vt.page[copy] = page
	vt.n.Add(1)
}

// covering returns the version of node page that a reader at asOf reads
// in place of the node, if a transaction after asOf changed the node (or
// is changing it): the one written at or before asOf and replaced after.
// Without one, the node itself is as the reader's version has it, or a
// commit about to change it has not recorded its version yet.
func (vt *versionTable) covering(page PageID, asOf uint64) (PageID, bool) {
	if vt.n.Load() == 0 {
		return 0, false
	}
	vt.mu.RLock()
	defer vt.mu.RUnlock()
	vs := vt.of[page]
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].txid <= asOf && asOf < vs[i].until {
			return vs[i].copy, true
		}
	}
	return 0, false
}

// forget removes the versions among ids from the table.
func (vt *versionTable) forget(ids []PageID) {
	if vt.n.Load() == 0 {
		return
	}
	vt.mu.Lock()
	defer vt.mu.Unlock()
	for _, copy := range ids {
		page, ok := vt.page[copy]
		if !ok {
			continue
		}
		delete(vt.page, copy)
		vs := slices.DeleteFunc(vt.of[page], func(v pageVersion) bool { return v.copy == copy })
		if len(vs) == 0 {
			delete(vt.of, page)
		} else {
			vt.of[page] = vs
		}
		vt.n.Add(-1)
	}
}

// Live is the asOf of a reader of the current tree: it reads every node
// as it is, never a version.
const Live = ^uint64(0)

// ForgetVersions removes the versions among ids (pages Tx.Versions
// returned) from the table of versions. The caller calls it before it
// frees them: once no reader of a version before the commit that made
// them remains.
func (t *Tree) ForgetVersions(ids []PageID) { t.versions.forget(ids) }

// Versions is the number of node versions kept for readers of older
// versions of the tree.
func (t *Tree) Versions() int { return int(t.versions.n.Load()) }

// versionOf returns the page a reader at asOf reads in place of node id,
// which a transaction after asOf (txid) changed in place.
func (t *Tree) versionOf(id PageID, txid, asOf uint64) (PageID, error) {
	v, ok := t.versions.covering(id, asOf)
	if !ok {
		return 0, fmt.Errorf("btree: page %d: %w: written by transaction %d, after the version read (%d), and no copy of it kept", id, ErrCorruptNode, txid, asOf)
	}
	return v, nil
}

// errVersionTooNew is the error of a version (page id) written by
// transaction txid, after the version asOf its reader reads: a page whose
// txid is wrong.
func errVersionTooNew(id PageID, txid, asOf uint64) error {
	return fmt.Errorf("btree: page %d: %w: a version written by transaction %d, after the version read (%d)", id, ErrCorruptNode, txid, asOf)
}

// readNodeAt is readNodeFrom in the version of transaction asOf (Live: the
// current one): a node changed in place after asOf is read from its
// version instead. It returns the page it read: id, or its version.
func (t *Tree) readNodeAt(id PageID, asOf uint64, r read, fn func(n node) error) (PageID, error) {
	if asOf == Live {
		return id, t.readNodeFrom(id, r, fn)
	}
	for redirected := false; ; redirected = true {
		pg, read, err := t.pinAt(id, asOf)
		if err != nil {
			return read, err
		}
		if txid := node(pg.Data()).txid(); txid > asOf {
			pg.Release()
			if redirected || read != id {
				return read, errVersionTooNew(read, txid, asOf)
			}
			if id, err = t.versionOf(id, txid, asOf); err != nil {
				return id, err
			}
			continue
		}
		return read, readPinned(read, pg, fn)
	}
}

// pinTries is how many times a snapshot's reader that finds a node
// latched exclusively looks for its version again before it waits for
// the latch.
const pinTries = 4

// pinAt pins shared, for a reader at asOf (not Live), node id or the
// version of it that covers asOf, and returns the page it pinned. It does
// not wait for a commit that holds the node exclusively to change it: the
// commit records the version right after it takes the node (no I/O in
// between), so a reader that finds the node latched exclusively looks
// the table up again, a few times, before it waits for the latch. A node
// not in a frame it reads (Get) at once.
func (t *Tree) pinAt(id PageID, asOf uint64) (bufferpool.Page, PageID, error) {
	for try := 0; ; try++ {
		if v, ok := t.versions.covering(id, asOf); ok {
			pg, err := t.pool.Get(v, bufferpool.Shared)
			return pg, v, err
		}
		if pg, ok := t.pool.TryGet(id, bufferpool.Shared); ok {
			return pg, id, nil
		}
		if try == pinTries || !t.pool.HeldExclusively(id) {
			pg, err := t.pool.Get(id, bufferpool.Shared)
			return pg, id, err
		}
		runtime.Gosched()
	}
}

// readBranchAt is readBranch in the version of transaction asOf, as
// readNodeAt: it returns the page it read.
func (t *Tree) readBranchAt(id PageID, asOf uint64, fn func(n node) error) (PageID, error) {
	if t.peekBranch(id, true, func(n node) error {
		if n.txid() > asOf {
			return errPeekFailed // read with the latch, from the version
		}
		return fn(n)
	}) {
		return id, nil
	}
	return t.readNodeAt(id, asOf, readAny, fn)
}

// PageAt returns the page a reader of the version of transaction asOf
// reads for page id: id itself (an overflow page, or a node not changed
// since asOf), or the version of the node kept for such readers.
func (t *Tree) PageAt(id PageID, asOf uint64) (PageID, error) {
	pg, err := t.pool.Get(id, bufferpool.Shared)
	if err != nil {
		return 0, err
	}
	n := node(pg.Data())
	overflow, txid := n.kind() == kindOverflow, n.txid()
	pg.Release()
	if overflow || txid <= asOf {
		return id, nil
	}
	return t.versionOf(id, txid, asOf)
}

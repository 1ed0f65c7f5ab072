package btree

import (
	"errors"
	"fmt"

	"github.com/stratadb/strata/internal/bufferpool"
)

// Undo: how Abort puts the tree back as it was at Begin.
//
// Most writes change one leaf in place, alone: the leaf is not frozen, the
// old and new values are inline, the new cell fits (no split) and a
// delete leaves the leaf non-empty. Such a "simple" write cannot fail
// once it starts changing the page, and its inverse is another simple
// write: the key's previous cell (or its absence), which the transaction
// records in a key log instead of copying the whole page (a 16 KiB copy
// per one-row commit was 27% of a commit's CPU).
//
// Any other write (a split, a copy-on-write, an empty leaf removed, a
// value in overflow pages) switches the transaction to page undo for the
// rest of its life: before a node is first changed in place after the
// switch, its bytes are copied (Tx.before). Abort then restores those
// copies, which puts the tree back as it was at the switch (pages created
// since are unreferenced again and returned for freeing), and applies the
// key log backwards, which undoes the simple writes before the switch:
// each restores a leaf to a content it held before, so it fits. Mixing
// the two the other way round would be wrong (a page copy taken before a
// later simple write would undo it twice), hence the one-way switch.
//
// A transaction begun with DisableUndo (WAL replay, which discards the
// tree on any error) keeps neither.
//
// Lock rules: as the rest of Tx (one transaction at a time per tree; the
// caller keeps readers of the current version out while it runs; readers
// of snapshots read versions of the pages it changes, versions.go).

// undoLog is the key log: the previous cells of the keys simple writes
// changed, in order, in one byte arena reused by the next transaction.
type undoLog struct {
	buf  []byte
	recs []undoRec
}

type undoRec struct {
	off, klen, vlen int32  // key at buf[off:], then the old value
	had             bool   // the key had a value (else it was absent)
	txid            uint64 // the leaf's txid before the write
}

// reset empties the log for the next transaction. A log that one large
// transaction grew past maxBeforeImages (bytes, or records of 24 bytes)
// is dropped rather than kept for the life of the tree.
func (u *undoLog) reset() {
	u.buf, u.recs = u.buf[:0], u.recs[:0]
	if cap(u.buf) > maxBeforeImages {
		u.buf = nil
	}
	if cap(u.recs)*24 > maxBeforeImages {
		u.recs = nil
	}
}

func (u *undoLog) add(key, old []byte, had bool, txid uint64) {
	u.recs = append(u.recs, undoRec{off: int32(len(u.buf)), klen: int32(len(key)), vlen: int32(len(old)), had: had, txid: txid})
	u.buf = append(u.buf, key...)
	u.buf = append(u.buf, old...)
}

func (u *undoLog) at(i int) (key, old []byte, had bool, txid uint64) {
	r := u.recs[i]
	k := u.buf[r.off : r.off+r.klen]
	return k, u.buf[r.off+r.klen : r.off+r.klen+r.vlen], r.had, r.txid
}

// ErrCannotUndo: Abort cannot put the tree back, and calling it again
// will not help (unlike a page it could not read).
var ErrCannotUndo = errors.New("btree: cannot undo")

// errNoUndo: Abort of a transaction begun with DisableUndo.
var errNoUndo = fmt.Errorf("%w: transaction begun without undo", ErrCannotUndo)

// DisableUndo makes the transaction keep no undo: nothing is copied or
// logged, and Abort fails. For WAL replay, whose caller discards the
// tree on any error.
func (tx *Tx) DisableUndo() { tx.noUndo = true }

// switchToPages makes the transaction take page copies from now on (see
// the top of this file).
func (tx *Tx) switchToPages() { tx.pageUndo = true }

// needsCopy reports whether node id, about to be changed in place, must be
// copied first.
func (tx *Tx) needsCopy(id PageID) bool {
	if tx.noUndo || !tx.pageUndo {
		return false
	}
	if _, own := tx.created[id]; own {
		return false // made by this transaction: Abort frees it
	}
	_, copied := tx.before[id]
	return !copied
}

// frozenNode reports whether a node of that txid must not change in place
// (see Tree).
func (tx *Tx) frozenNode(txid uint64) bool { return txid <= tx.frozen && txid != tx.txid }

// putSimple makes the write (key, value), value inline, if it is simple:
// the leaf at the end of path not frozen (as the descent read it), the
// key's old value (if any) inline, the new cell fitting. It reports false,
// having changed nothing (and switched the transaction to page undo), if
// it is not.
func (tx *Tx) putSimple(path []step, key, value []byte) (bool, error) {
	leaf := path[len(path)-1]
	if tx.frozenNode(leaf.txid) {
		tx.switchToPages()
		return false, nil
	}
	pg, err := tx.t.pool.Get(leaf.id, bufferpool.Exclusive)
	if err != nil {
		return false, err
	}
	defer pg.Release()
	n := node(pg.Data())
	i, found := n.search(key)
	ok := false
	if found {
		old, overflow, _ := n.value(i)
		if overflow {
			tx.switchToPages()
			return false, nil
		}
		tx.undo.add(key, old, true, n.txid())
		ok = n.replaceLeafValue(i, value, false, len(value))
	} else {
		tx.undo.add(key, nil, false, n.txid())
		ok = n.insertLeaf(i, key, value, false, len(value))
	}
	if !ok { // a split: the page is unchanged
		tx.undo.recs = tx.undo.recs[:len(tx.undo.recs)-1]
		tx.switchToPages()
		return false, nil
	}
	n.setTxid(tx.txid)
	pg.MarkDirty()
	return true, nil
}

// deleteSimple deletes key from leaf id, where the caller found it and
// judged the delete simple (the leaf not frozen, the value inline, another
// cell left).
func (tx *Tx) deleteSimple(id PageID, key []byte) (bool, error) {
	pg, err := tx.t.pool.Get(id, bufferpool.Exclusive)
	if err != nil {
		return false, err
	}
	defer pg.Release()
	n := node(pg.Data())
	i, _ := n.search(key)
	old, _, _ := n.value(i)
	tx.undo.add(key, old, true, n.txid())
	n.deleteCell(i)
	n.setTxid(tx.txid)
	pg.MarkDirty()
	return true, nil
}

// undoKeys applies the key log backwards: each record puts its key's
// previous cell and its leaf's previous txid back, in place (see the top
// of this file). It goes on from the records an earlier call undid
// (tx.undone): a record whose pages cannot be read has changed nothing.
func (tx *Tx) undoKeys() error {
	var buf [12]step
	for ; tx.undone < len(tx.undo.recs); tx.undone++ {
		i := len(tx.undo.recs) - 1 - tx.undone
		key, old, had, txid := tx.undo.at(i)
		path, err := tx.descend(key, buf[:0])
		if err != nil {
			return err
		}
		pg, err := tx.t.pool.Get(path[len(path)-1].id, bufferpool.Exclusive)
		if err != nil {
			return err
		}
		n := node(pg.Data())
		if n.txid() != tx.txid {
			// Simple writes set the txid: this leaf is not one of theirs.
			pg.Release()
			return fmt.Errorf("%w: key %q: page %d was not changed by the transaction", ErrCannotUndo, key, path[len(path)-1].id)
		}
		j, found := n.search(key)
		ok := true
		switch {
		case had && found:
			ok = n.replaceLeafValue(j, old, false, len(old))
		case had:
			ok = n.insertLeaf(j, key, old, false, len(old))
		case found:
			n.deleteCell(j)
		}
		if !ok { // the page is unchanged
			pg.Release()
			return fmt.Errorf("%w: key %q: its old cell does not fit page %d", ErrCannotUndo, key, path[len(path)-1].id)
		}
		// The txid too: a snapshot of the last commit must find the leaf
		// frozen (the next transaction may reuse this one's txid).
		n.setTxid(txid)
		pg.MarkDirty()
		pg.Release()
	}
	return nil
}

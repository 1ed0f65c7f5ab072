package strata

// WAL replay at Open: the commits after the checkpoint, redone in order, a
// group of records per tree transaction.
//
// Lock rules: replayWAL runs inside Open, before the background worker and
// the applier start and before Open returns: nothing else uses the tree,
// and it takes no lock of its own.

import "github.com/stratadb/strata/internal/btree"

// replayGroup is the most WAL records applied in one tree transaction.
const replayGroup = 512

// replayWAL redoes the WAL records after the checkpoint and returns how
// many it applied. Consecutive records go into one tree transaction (up to
// replayGroup of them): nothing reads the tree until Open returns, so a
// group publishes one version instead of one per record. (A page of the
// checkpoint's tree is copied the first time a record changes it and
// changed in place after that, as in commits.) The group holds one
// record's bytes at a time, so recovery memory is the pool's and the
// record's (`TestRecoveryMemoryBound`).
func (db *DB) replayWAL() (int, error) {
	replayed, inGroup := 0, 0
	var tx *btree.Tx
	var lastLSN uint64
	err := db.log.Replay(db.lsn+1, func(lsn uint64, payload []byte) error {
		if tx == nil {
			tx = db.tree.Begin(db.root, db.txid+1, db.frozen, db.frozen)
			tx.DisableUndo() // an error fails Open: nothing to put back
		}
		if err := applyOps(tx, payload); err != nil {
			return replayErr(lsn, err)
		}
		replayed++
		inGroup++
		lastLSN = lsn
		if inGroup < replayGroup {
			return nil
		}
		t := tx
		tx, inGroup = nil, 0
		return db.publish(t, lsn)
	})
	if err == nil && tx != nil {
		err = db.publish(tx, lastLSN)
	}
	return replayed, err
}

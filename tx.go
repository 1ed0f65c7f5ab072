package strata

import (
	"errors"
	"fmt"

	"github.com/stratadb/strata/internal/btree"
)

// Tx is a transaction in Update (read-write) or View (read-only).
type Tx struct {
	db       *DB
	bt       *btree.Tx // Update
	root     btree.PageID
	batch    Batch
	writable bool
	done     bool
	writes   uint64 // Set and Delete calls, so iterators notice them
	// failed is the error of a write the batch took but the tree did not
	// (fully) apply: the two disagree, so Update must not commit.
	failed error
}

var errTxDone = errors.New("strata: transaction has finished")

// ErrReadOnly is returned by writes in a View transaction.
var ErrReadOnly = errors.New("strata: read-only transaction")

// ErrTxChanged is the error of an iterator of an Update transaction that
// wrote after the iterator was made: make a new iterator to see the write.
var ErrTxChanged = errors.New("strata: transaction changed under its iterator")

// Update runs fn in a read-write transaction: it sees its own writes, and
// commits them atomically if fn returns nil (discarding them otherwise).
//
// A write the transaction refuses before changing anything (an empty or
// too large key or value, a transaction over ErrBatchTooLarge) returns its
// error to fn and leaves the transaction as it was: if fn goes on and
// returns nil, its other writes commit. A write that failed part-way (an
// I/O error or corruption met while changing the tree) ends the
// transaction: every later write returns that error, and Update discards
// the transaction and returns it even if fn ignored it.
//
// If fn panics, the transaction is discarded and the panic goes on up to
// Update's caller; the database stays usable.
//
// Transactions are serializable: one read-write transaction runs at a
// time, as in bbolt; readers never wait for it. fn must not call the DB's
// own write methods (Set, Delete, Batch.Commit, Update, Checkpoint): they
// wait for the transaction that is running them, and never return.
func (db *DB) Update(fn func(tx *Tx) error) error {
	if !db.enter() {
		return ErrClosed
	}
	defer db.leave()
	committed, err := db.update(fn)
	if err != nil || !committed {
		return err
	}
	db.maybeCheckpoint()
	if db.opts.Sync == SyncAlways {
		// Outside writeMu, so that concurrent committers share the fsync.
		if err := db.log.Sync(); err != nil {
			return fmt.Errorf("strata: sync WAL: %w", err)
		}
	}
	return nil
}

// update runs fn and commits its writes under writeMu (taken and released
// here, also when fn panics). It reports whether anything was committed.
func (db *DB) update(fn func(tx *Tx) error) (committed bool, err error) {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	if db.failed != nil {
		return false, db.failed
	}
	db.mu.RLock()
	tx := &Tx{db: db, writable: true, batch: Batch{db: db}}
	tx.bt = db.tree.Begin(db.root, db.txid+1)
	db.mu.RUnlock()
	handedOver := false // to commitLocked, which aborts on its own failures
	defer func() {
		tx.done = true
		if !handedOver {
			db.abort(tx.bt)
		}
	}()
	if err := fn(tx); err != nil {
		return false, err
	}
	if tx.failed != nil {
		return false, tx.failed
	}
	if tx.batch.n == 0 {
		return false, nil
	}
	handedOver = true
	if err := db.commitLocked(tx.batch.ops, tx.bt); err != nil {
		return false, err
	}
	db.st.txs.Add(1)
	db.st.countWrites(&tx.batch)
	return true, nil
}

// View runs fn in a read-only transaction over a snapshot. Close waits
// for a running View.
func (db *DB) View(fn func(tx *Tx) error) error {
	if !db.enter() {
		return ErrClosed
	}
	defer db.leave()
	s, err := db.NewSnapshot()
	if err != nil {
		return err
	}
	defer s.Close()
	tx := &Tx{db: db, root: s.root}
	err = fn(tx)
	tx.done = true
	return err
}

// Get returns a copy of key's value as the transaction sees it.
func (tx *Tx) Get(key []byte) ([]byte, error) {
	if tx.done {
		return nil, errTxDone
	}
	if len(key) == 0 {
		return nil, ErrEmptyKey
	}
	if !tx.writable {
		return tx.db.getAt(tx.root, key)
	}
	v, ok, err := tx.bt.Get(key, nil)
	if err != nil {
		return nil, tx.db.readErr(err)
	}
	if !ok {
		return nil, ErrNotFound
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// NewIter returns an iterator over the transaction's view: in Update, the
// database as of the transaction's start plus its own writes so far. A
// write in the transaction after NewIter ends the iterator (ErrTxChanged),
// as does the end of the transaction; close it before fn returns.
func (tx *Tx) NewIter(opts *IterOptions) (*Iterator, error) {
	if tx.done {
		return nil, errTxDone
	}
	root := tx.root
	if tx.writable {
		// The cursor reads pages: write the transaction's nodes to theirs.
		if err := tx.bt.Materialize(); err != nil {
			return nil, tx.db.readErr(err)
		}
		root = tx.bt.Root()
	}
	it := tx.db.newIter(root, opts, nil)
	it.tx, it.txWrites = tx, tx.writes
	return it, nil
}

// Set sets key to value within the transaction.
func (tx *Tx) Set(key, value []byte) error {
	if err := tx.writeCheck(); err != nil {
		return err
	}
	if err := tx.batch.Set(key, value); err != nil {
		return err // refused before any change: open iterators stay valid
	}
	tx.writes++
	if err := tx.bt.Put(key, value); err != nil {
		tx.failed = tx.db.readErr(err)
		return tx.failed
	}
	return nil
}

// Delete removes key within the transaction.
func (tx *Tx) Delete(key []byte) error {
	if err := tx.writeCheck(); err != nil {
		return err
	}
	if err := tx.batch.Delete(key); err != nil {
		return err
	}
	tx.writes++
	if _, err := tx.bt.Delete(key); err != nil {
		tx.failed = tx.db.readErr(err)
		return tx.failed
	}
	return nil
}

func (tx *Tx) writeCheck() error {
	if tx.done {
		return errTxDone
	}
	if !tx.writable {
		return ErrReadOnly
	}
	return tx.failed
}

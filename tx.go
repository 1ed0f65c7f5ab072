package strata

import (
	"errors"

	"github.com/stratadb/strata/internal/btree"
)

// Tx is a transaction in Update (read-write) or View (read-only).
//
// An Update transaction keeps its writes in its batch, indexed by key (the
// overlay, overlay.go), and changes the tree only when it commits: reads in
// the transaction look at the overlay first, then at the tree, which no
// other writer changes while it runs.
type Tx struct {
	db       *DB
	root     btree.PageID // View: the snapshot's root
	txid     uint64       // View: the snapshot's txid
	batch    Batch        // Update: the writes so far
	over     overlay      // Update: batch indexed by key
	writable bool
	done     bool
	writes   uint64      // Set and Delete calls, so iterators notice them
	iters    []*Iterator // made by NewIter: ended with the transaction
}

// ErrTxDone is returned by a transaction's methods, and by its iterators,
// once Update or View has returned.
var ErrTxDone = errors.New("strata: transaction has finished")

// ErrReadOnly is returned by writes in a View transaction.
var ErrReadOnly = errors.New("strata: read-only transaction")

// ErrTxChanged is the error of an iterator of an Update transaction that
// wrote after the iterator was made: make a new iterator to see the write.
var ErrTxChanged = errors.New("strata: transaction changed under its iterator")

// Update runs fn in a read-write transaction: it sees its own writes, and
// commits them atomically if fn returns nil (discarding them otherwise).
//
// A write the transaction refuses (an empty or too large key or value, a
// transaction over ErrBatchTooLarge) returns its error to fn and leaves the
// transaction as it was: if fn goes on and returns nil, its other writes
// commit. The writes change the database only when Update commits them; an
// error then (an I/O error, corruption met in the tree) discards them all
// and Update returns it.
//
// If fn panics, the transaction is discarded and the panic goes on up to
// Update's caller; the database stays usable.
//
// Transactions are serializable: one read-write transaction runs at a
// time, as in bbolt; readers do not wait for it (the reads of snapshots,
// iterators and View do not wait for commits either, but in a rare race,
// docs/ARCHITECTURE.md, "A mutable tree between checkpoints"; taking a
// snapshot, and a point read, wait for the moment a commit changes the
// tree). fn must not call the DB's
// own write methods (Set, Delete, Batch.Commit, Update, Checkpoint), nor
// Close: they wait for the transaction that is running them, and never
// return.
func (db *DB) Update(fn func(tx *Tx) error) error {
	if !db.enter() {
		return ErrClosed
	}
	defer db.leave()
	lsn, err := db.update(fn)
	if err != nil || lsn == 0 {
		return err
	}
	db.maybeCheckpoint()
	return db.waitDurable(lsn, nil)
}

// update runs fn and commits its writes under writeMu (taken and released
// here, also when fn panics). It returns the commit's WAL record, 0 if
// nothing was committed.
func (db *DB) update(fn func(tx *Tx) error) (lsn uint64, err error) {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	if db.failed != nil {
		return 0, db.failed
	}
	// The transaction reads the tree: the deferred commits go in first.
	if err := db.applyDeferredLocked(-1, true); err != nil {
		return 0, err
	}
	tx := &Tx{db: db, writable: true, batch: Batch{db: db}}
	defer tx.end()
	err = fn(tx)
	tx.end() // its iterators let go of their leaves before the commit changes pages
	if err != nil {
		return 0, err
	}
	if tx.batch.n == 0 {
		return 0, nil
	}
	// Still under writeMu, but not treeMu: point reads go on meanwhile.
	db.prefetch(&tx.batch, false)
	lsn, err = db.commitLocked(tx.batch.ops(), nil)
	if err != nil {
		return 0, err
	}
	db.st.txs.Add(1)
	db.st.countWrites(&tx.batch)
	return lsn, nil
}

// View runs fn in a read-only transaction over a snapshot. Close waits
// for a running View, so fn must not call Close (it would never return).
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
	tx := &Tx{db: db, root: s.root, txid: s.txid}
	defer tx.end()
	return fn(tx)
}

// end finishes the transaction: its iterators stop, and let go of the
// leaves they hold. Idempotent.
func (tx *Tx) end() {
	tx.done = true
	for _, it := range tx.iters {
		it.c.Release()
	}
	tx.iters = nil
}

// Get returns a copy of key's value as the transaction sees it.
func (tx *Tx) Get(key []byte) ([]byte, error) {
	if tx.done {
		return nil, ErrTxDone
	}
	if len(key) == 0 {
		return nil, ErrEmptyKey
	}
	if !tx.writable {
		return tx.db.getAt(tx.root, tx.txid, key)
	}
	if written, deleted, v := tx.over.lookup(key, &tx.batch); written {
		if deleted {
			return nil, ErrNotFound
		}
		return append([]byte{}, v...), nil
	}
	return tx.db.getAt(tx.db.root, btree.Live, key) // writeMu is held: the tree stays as it is
}

// NewIter returns an iterator over the transaction's view: in Update, the
// database as of the transaction's start plus its own writes so far. A
// write in the transaction after NewIter ends the iterator (ErrTxChanged),
// as does the end of the transaction; close it before fn returns.
func (tx *Tx) NewIter(opts *IterOptions) (*Iterator, error) {
	if tx.done {
		return nil, ErrTxDone
	}
	var it *Iterator
	if tx.writable {
		it = tx.db.newIter(tx.db.root, btree.Live, opts)
		it.c, it.tc = newMergeCursor(it.tc, &tx.over, &tx.batch), nil
	} else {
		it = tx.db.newIter(tx.root, tx.txid, opts)
	}
	it.tx, it.txWrites, it.direct = tx, tx.writes, false
	tx.iters = append(tx.iters, it)
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
	chunk, end := tx.batch.last()
	tx.over.record(key, false, chunk, end-len(value), len(value))
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
	tx.over.record(key, true, 0, 0, 0)
	return nil
}

func (tx *Tx) writeCheck() error {
	if tx.done {
		return ErrTxDone
	}
	if !tx.writable {
		return ErrReadOnly
	}
	return nil
}

package strata

import (
	"errors"

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
// A Set or Delete that failed ends the transaction's writes: Update then
// discards them and returns that error, even if fn ignored it.
// Transactions are serializable: one read-write transaction runs at a
// time, as in bbolt; readers never wait for it.
func (db *DB) Update(fn func(tx *Tx) error) error {
	if db.closed.Load() {
		return ErrClosed
	}
	db.writeMu.Lock()
	if db.failed != nil {
		db.writeMu.Unlock()
		return db.failed
	}
	db.mu.RLock()
	tx := &Tx{db: db, writable: true, batch: Batch{db: db}}
	tx.bt = db.tree.Begin(db.root, db.txid+1)
	db.mu.RUnlock()
	err := fn(tx)
	tx.done = true
	if err == nil && tx.failed != nil {
		err = tx.failed
	}
	if err != nil || tx.batch.n == 0 {
		db.abort(tx.bt)
		db.writeMu.Unlock()
		return err
	}
	lsn, err := db.commitLocked(tx.batch.ops, tx.bt)
	db.writeMu.Unlock()
	if err != nil {
		return err
	}
	db.st.txs.Add(1)
	db.maybeCheckpoint()
	return db.waitDurable(lsn, nil)
}

// View runs fn in a read-only transaction over a snapshot.
func (db *DB) View(fn func(tx *Tx) error) error {
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

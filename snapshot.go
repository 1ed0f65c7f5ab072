package strata

import (
	"github.com/stratadb/strata/internal/btree"
)

// Lock rules: the registry of open snapshots (db.snaps: version → count)
// is guarded by db.mu. A snapshot is registered under treeMu held shared,
// so never in the middle of a commit that changes pages in place; from
// then on commits keep a version of each page of its version before they
// change it (or copy the page), and the snapshot's reads find the
// versions (internal/btree/versions.go).

// Snapshot is a consistent, read-only view of the database at the moment
// it was taken, unaffected by later writes. Close it when done: it keeps
// the pages of its version from being reused.
type Snapshot struct {
	db     *DB
	root   btree.PageID
	txid   uint64
	closed bool
}

// NewSnapshot takes a snapshot of the current state.
func (db *DB) NewSnapshot() (*Snapshot, error) {
	if !db.enter() {
		return nil, ErrClosed
	}
	defer db.leave()
	s, err := db.takeSnapshot(nil)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// takeSnapshot registers the current version as a snapshot's (NewSnapshot,
// NewIter). It takes treeMu shared, so not in the middle of a commit that
// changes pages in place: from the registration on, commits keep a
// version of the snapshot's pages before they change them. If it is not nil, the snapshot is iterator
// it's, registered with it (registerIter). Called within the gate.
func (db *DB) takeSnapshot(it *Iterator) (Snapshot, error) {
	// The tree alone is the snapshot's: the deferred commits go in first
	// (deferred.go).
	if err := db.applyDeferred(); err != nil {
		return Snapshot{}, err
	}
	db.treeMu.RLock()
	defer db.treeMu.RUnlock()
	if db.broken != nil {
		return Snapshot{}, db.broken
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	db.snaps[db.txid]++
	snap := Snapshot{db: db, root: db.root, txid: db.txid}
	if it != nil {
		db.registerIter(it, snap)
	}
	return snap, nil
}

// Get returns a copy of key's value in the snapshot, or ErrNotFound.
func (s *Snapshot) Get(key []byte) ([]byte, error) {
	if s.closed {
		return nil, ErrClosed
	}
	if len(key) == 0 {
		return nil, ErrEmptyKey
	}
	if !s.db.enter() {
		return nil, ErrClosed
	}
	defer s.db.leave()
	return s.db.getAt(s.root, s.txid, key)
}

// NewIter returns an iterator over the snapshot. The iterator holds the
// snapshot's version itself, so it stays valid if the snapshot is closed
// first; close it when done.
func (s *Snapshot) NewIter(opts *IterOptions) (*Iterator, error) {
	if s.closed || !s.db.enter() {
		return nil, ErrClosed
	}
	defer s.db.leave()
	it := s.db.allocIter(opts)
	s.db.mu.Lock()
	s.db.snaps[s.txid]++
	s.db.registerIter(it, Snapshot{db: s.db, root: s.root, txid: s.txid})
	s.db.mu.Unlock()
	return it, nil
}

// Close releases the snapshot. Further calls return ErrClosed.
func (s *Snapshot) Close() error {
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	s.db.releaseSnapshot(s.txid)
	return nil
}

func (db *DB) releaseSnapshot(txid uint64) {
	db.mu.Lock()
	db.releaseSnapshotLocked(txid)
	db.mu.Unlock()
}

// releaseSnapshotLocked drops one snapshot of version txid. Called with
// db.mu held.
func (db *DB) releaseSnapshotLocked(txid uint64) {
	if db.snaps[txid]--; db.snaps[txid] <= 0 {
		delete(db.snaps, txid)
	}
}

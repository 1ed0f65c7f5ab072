package strata

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync/atomic"

	"github.com/stratadb/strata/internal/btree"
)

// Reading a batch's pages before its commit takes the writer lock.
//
// A commit changes the tree holding writeMu, and treeMu exclusively: a
// page it needs that is not in memory is read from the store with both
// held, so every other commit, and every point read, waits for that read.
// With a table much larger than the cache nearly every write of a random
// key misses its leaf, and commits then ran one disk read at a time (a
// batch of 4 random writes: three or four reads in a row, each with all
// writers waiting).
//
// So before it takes the locks, a commit looks up the path of each of
// its keys (up to prefetchKeys of them) in the current version, reading
// only what is in memory (btree.Tree.LookupCached), and reads the pages
// that are not from the store itself, one after another. It then looks
// again, for pages below them (a branch that was not cached), up to
// prefetchRounds times. Its writes then find their pages cached, unless
// evicted meanwhile: the prefetch is a hint, and the commit reads whatever
// is missing, as before. (Reading a batch's pages in parallel, a goroutine
// each, was measured no faster on the benchmark's disk, whose queue the
// other committers and the page cleaner keep busy: docs/BENCHMARKS.md,
// "Commits and point reads that read before they lock".)
//
// When everything is cached, looking costs a descent per key; so commits
// look only while looks find pages missing: one that finds a page missing
// lets the next prefetchCredit commits look too, and while no credit is
// left, one commit in prefetchProbe (at random) looks. A database opens
// with credit: its cache is cold. A commit that does not look reads one
// shared word and writes none.
//
// Lock rules: each look holds treeMu shared and a pin on the version it
// reads (acquireVersion), and releases treeMu before any read from the
// store. The reads hold only the pin: no page the version reaches is freed
// while it is held (pages replaced after it wait for its readers), so a
// page id found under treeMu is not freed, nor its id reused, before it is
// read (a commit may change the page in place meanwhile: the read only
// brings it into memory). Commits call prefetch without a lock, Update
// transactions holding only writeMu (their writes wait for them anyway);
// never with treeMu.
//
// The looks count nothing in the pool's statistics (Tree.LookupCached
// with CountNone; a page held as an image is read, not promoted, by the
// look). The reads go through bufferpool.Pool.Prefetch: each counts as
// the commit's use of the page (a miss, or a compressed hit), and that
// use does not count again.

const (
	prefetchKeys   = 64  // keys of a batch looked up
	prefetchRounds = 4   // looks per commit: a page, then the pages below it
	prefetchCredit = 256 // commits that look after one found a page missing
	prefetchProbe  = 16  // while no credit is left, one commit in this many looks
)

// prefetchState is the database's part: the commits that will look
// (written by the commits that look, without a lock).
type prefetchState struct {
	credit atomic.Int64
}

// errStopOps ends a decodeOps walk early.
var errStopOps = errors.New("enough keys")

// prefetch reads the pages b's writes will need that are not in memory
// (pages held as images are promoted), looking again below them up to
// prefetchRounds times. With untilDisk (a commit that may be deferred,
// deferred.go) it reads nothing from the store: it stops at the first
// look that finds a page on disk and reports it (onDisk), the commit then
// being deferred; pages in memory as images are promoted as before (a
// decompression is not worth the queue's costs: cached updates whose
// images made them deferred ran 0.91× as fast).
func (db *DB) prefetch(b *Batch, untilDisk bool) (onDisk bool) {
	if !db.shouldLook() {
		return false
	}
	keys := db.batchKeys(b)
	all := keys
	defer db.dropKeys(b, all)
	for round := 0; round < prefetchRounds && len(keys) > 0; round++ {
		v, missing, rest := db.lookPaths(keys)
		if v == nil {
			return false
		}
		if len(missing) > 0 {
			db.pf.credit.Store(prefetchCredit)
		}
		if untilDisk && slices.ContainsFunc(missing, func(id btree.PageID) bool { return !db.pool.InMemory(id) }) {
			v.release()
			return true
		}
		read := db.readMissing(missing)
		v.release()
		db.st.prefetched.Add(int64(read))
		if read < len(missing) {
			// The commit meets the error itself, if its writes need the
			// page (deferred: in the applier's retries).
			return untilDisk
		}
		if len(missing) == 0 {
			return false
		}
		keys = rest
	}
	return false
}

// readMissing reads pages into the pool one after another (the caller
// holds a pin on the version they were found in), and returns how many it
// read before an error.
func (db *DB) readMissing(ids []btree.PageID) int {
	for i, id := range ids {
		if db.pool.Prefetch(id) != nil {
			return i
		}
	}
	return len(ids)
}

// shouldLook says whether this commit looks at its paths (see the top of
// this file).
func (db *DB) shouldLook() bool {
	if db.pf.credit.Load() > 0 {
		db.pf.credit.Add(-1)
		return true
	}
	return rand.Uint32()%prefetchProbe == 0
}

// batchKeys returns up to prefetchKeys of b's keys, in b's scratch slice.
func (db *DB) batchKeys(b *Batch) [][]byte {
	keys := b.prefetchKeys[:0]
	for _, chunk := range b.ops() {
		_ = decodeOps(chunk, func(_ byte, key, _ []byte) error {
			if len(keys) == prefetchKeys {
				return errStopOps
			}
			keys = append(keys, key)
			return nil
		})
	}
	return keys
}

// dropKeys gives batchKeys' slice back to b, without pointers into chunks
// a Reset may drop.
func (db *DB) dropKeys(b *Batch, keys [][]byte) {
	clear(keys)
	b.prefetchKeys = keys[:0]
}

// lookPaths looks up keys' paths in the current version, reading nothing,
// and returns the pages missing from memory, the keys whose paths missed
// one (keys, reused), and the pin on the version looked at (nil if the
// tree is broken): the caller reads the pages holding it, and releases it.
func (db *DB) lookPaths(keys [][]byte) (v *version, missing []btree.PageID, rest [][]byte) {
	db.treeMu.RLock()
	if db.broken != nil {
		db.treeMu.RUnlock()
		return nil, nil, nil
	}
	v = db.acquireVersion()
	rest = keys[:0]
	for _, k := range keys {
		id, err := db.tree.MissingPage(v.root, k)
		if err != nil || id == 0 {
			continue // the commit meets the error itself
		}
		rest = append(rest, k)
		if !containsPage(missing, id) {
			missing = append(missing, id)
		}
	}
	db.treeMu.RUnlock()
	return v, missing, rest
}

func containsPage(ids []btree.PageID, id btree.PageID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

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

// prefetch reads the pages b's writes will need that are not in memory.
func (db *DB) prefetch(b *Batch) {
	if !db.shouldLook() {
		return
	}
	keys := db.batchKeys(b)
	all := keys
	defer db.dropKeys(b, all)
	read := 0
	for round := 0; round < prefetchRounds && len(keys) > 0; round++ {
		n, rest := db.prefetchRound(keys)
		if n == 0 {
			break
		}
		read += n
		keys = rest
	}
	if read > 0 {
		db.pf.credit.Store(prefetchCredit)
		db.st.prefetched.Add(int64(read))
	}
}

// lookMissing reports whether a look at b's keys' paths finds a page
// that is not in memory (deferred.go): one to read from the store. Pages
// held only as images are in memory: it promotes them here, outside the
// locks, as prefetch does, and they do not make the commit deferred (a
// decompression is not worth the queue's costs: cached updates whose
// images made them deferred ran 0.91× as fast). It looks as often as
// prefetch does.
func (db *DB) lookMissing(b *Batch) bool {
	if !db.shouldLook() {
		return false
	}
	keys := db.batchKeys(b)
	all := keys
	defer db.dropKeys(b, all)
	for round := 0; round < prefetchRounds && len(keys) > 0; round++ {
		v, missing, rest := db.lookPaths(keys)
		if v == nil || len(missing) == 0 {
			if v != nil {
				v.release()
			}
			return false
		}
		db.pf.credit.Store(prefetchCredit)
		onDisk := slices.ContainsFunc(missing, func(id btree.PageID) bool { return !db.pool.InMemory(id) })
		if !onDisk {
			// Images (or pages being loaded): promote them, and look
			// below them in the next round.
			for _, id := range missing {
				if db.pool.Prefetch(id) != nil {
					onDisk = true // the commit meets the error itself; defer it to the applier's retries
					break
				}
			}
			db.st.prefetched.Add(int64(len(missing)))
		}
		v.release()
		if onDisk {
			return true
		}
		keys = rest
	}
	return false
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

// prefetchRound looks up keys' paths in the current version, reads the
// pages missing from memory, and returns how many it read and the keys
// whose paths missed a page (keys, reused): the ones to look at again.
func (db *DB) prefetchRound(keys [][]byte) (int, [][]byte) {
	v, missing, rest := db.lookPaths(keys)
	if v == nil {
		return 0, nil
	}
	defer v.release()
	for i, id := range missing {
		if err := db.pool.Prefetch(id); err != nil {
			// The commit meets the error itself, if its writes need
			// the page: no more reads for it here.
			return i, nil
		}
	}
	return len(missing), rest
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
		_, _, id, err := db.tree.LookupCached(v.root, k, ignoreValue, btree.CountNone)
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

func ignoreValue([]byte) {}

func containsPage(ids []btree.PageID, id btree.PageID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

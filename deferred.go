package strata

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/btree"
	"github.com/stratadb/strata/internal/vfs"
)

// Deferred commits: a commit whose pages are not in memory is logged and
// made visible at once, and applied to the tree later by the applier.
//
// With a table much larger than the cache nearly every write of a random
// key misses its leaf. A commit read its missing pages before taking the
// writer lock (prefetch.go), one after another, and its caller waited for
// them: at 8× the memory limit, three leaf reads of about 90 µs each were
// most of a sysbench update's time, while the disk served 2–4 times as
// many reads at a higher queue depth (docs/BENCHMARKS.md, sixteenth
// session). Deferring the commits and reading their pages many at once
// pays only where a goroutine waiting for a read holds no P (Go's right
// to run code): with pread(2) the applier's reads in flight held both
// CPUs' Ps and the committers and page cleaner waited for them (no faster
// than before); through Linux AIO (vfs.AsyncReads) 1.66× faster. So
// commits are deferred only where reads are asynchronous (asyncReads).
//
// A commit that finds, looking at its keys' paths in memory only, a
// page missing (or that finds deferred commits queued; commitQueued says
// when it applies some of them first) does not change the tree: under
// writeMu it appends its WAL record, as any commit, and adds
// its writes to the queue, whose index maps each key to its newest queued
// write. Point reads look in the index first. The applier, a goroutine,
// takes the queued commits oldest first, a group at a time, reads the
// pages they need outside every lock, several reads at once, and applies
// the group to the tree as one transaction under writeMu, published with
// the LSN of its last commit; then it drops them from the queue and from
// the index (the entries no newer queued write replaced).
//
// Invariants:
//   - The tree holds a prefix of the commits in LSN order, the queue the
//     rest: a commit goes to the queue whenever the queue is not empty
//     (under writeMu, which every commit holds), and the applier applies
//     in queue order. So db.lsn, the LSN of the tree's version, is what a
//     checkpoint records, and recovery replays the queued commits from
//     the WAL like any other.
//   - A point read that does not find its key in the index reads the
//     tree, in a version at least as new as the one published when the
//     index lost the key: the applier removes a key from the index only
//     after publishing the version that holds its write. A read that
//     looks in the index before it takes its version is thus never older
//     than the index it looked in.
//   - Snapshots, iterators, View and Update see the tree alone, holding
//     every commit that returned before them: snapshots (NewSnapshot,
//     NewIter, View) wait until the applier has applied the commits
//     queued when they began (applyDeferred; holding no lock, so an
//     Update running meanwhile, which applies the queue before its
//     function, releases them); Update, Close and a batch larger than the
//     queue apply it themselves under writeMu, reading each group's pages
//     first, several at once, holding writeMu only. Inside an Update the
//     queue stays empty (writeMu is held).
//
// The queue holds about deferLimit bytes at most, on the Go heap beside
// the cache's budget: each batch's encoded writes, and per write its key
// again in the index and writeOverhead, per batch batchOverhead. A
// committer waits, before it takes writeMu, until the queue has room;
// committers that found room at once may each add one batch beyond it.
// A batch whose room (queueRoom) exceeds the limit is applied directly,
// after the queue, without waiting for room.
//
// When the applier cannot apply a group (an I/O error reading a page, a
// failed publish), it tries again deferRetries times, reading the pages
// again (not ErrCorrupt); then the database refuses writes, and new
// snapshots and iterators, until reopened (db.failed), and Close reports
// it: the queued commits were acknowledged and are in the WAL (the next
// Open applies them), and point reads still find them in the index
// meanwhile. An error met by a commit applying the queue itself (an
// Update, a large batch, a cached commit applying a group of cached
// ones) fails that call only.
//
// Lock rules: deferQueue.mu guards the queue and the index; it is taken
// after writeMu and treeMu, never before them, and held only for map and
// slice work. Adding to the queue and applying it hold writeMu; lookups
// hold only mu (shared).

// deferLimit bounds the memory the queue holds (its batches' encoded
// writes, and for each write its key again in the index plus
// writeOverhead, for each batch batchOverhead), as a share of the cache
// size (deferShare), within [deferMin, deferMax].
const (
	writeOverhead = 64 // an index entry besides its key: map slot, deferredWrite
	batchOverhead = 96 // a deferredBatch and its chunk headers
	deferShare    = 64
	deferMin      = 256 << 10
	deferMax      = 4 << 20
	// deferGroup is the most commits the applier applies as one
	// transaction: it holds writeMu for their changes, which every other
	// commit waits for.
	deferGroup = 16
	// deferKeys is the most keys of a group whose paths the applier looks
	// at and reads before the apply (containsPage is quadratic, under
	// treeMu shared).
	deferKeys = 256
	// deferRetries: an error applying queued commits is tried again this
	// many times, deferBackoff and then ten times as long between tries,
	// before the database refuses writes (a transient read error should
	// not make the commits it already acknowledged wait for a reopen).
	deferRetries = 3
	deferBackoff = 10 * time.Millisecond
	// deferReads is the most page reads the applier has in flight, for
	// the next deferDepth groups.
	deferReads = 32
	deferDepth = 4
)

// deferredBatch is a commit queued: a copy of its encoded writes, and its
// WAL record.
type deferredBatch struct {
	ops  [][]byte
	lsn  uint64
	seq  uint64 // its place in the queue, from 1
	size int64
	// missing: its committer found a page missing (else it was queued
	// only to stay behind the others). Cached commits queue behind a
	// queue that holds such a batch (missingQueued).
	missing bool
}

// deferredWrite is the newest queued write of a key.
type deferredWrite struct {
	seq   uint64 // of its batch
	del   bool
	value []byte // aliases the batch's copy
}

type deferQueue struct {
	limit int64
	// queued is len(batches), for readers that check without mu.
	queued atomic.Int64
	mu     sync.RWMutex
	room   *sync.Cond // on mu: broadcast when commits are applied, or the applier fails
	// batches are the queued commits, oldest first; index their newest
	// write per key.
	batches []*deferredBatch
	index   map[string]deferredWrite
	seq     uint64 // the last batch queued
	bytes   int64
	// missing counts the queued batches marked missing.
	missing int
	kick    chan struct{} // wakes the applier
	// reads bounds the applier's page reads in flight (readPages).
	reads chan struct{}
	// readers hands reads to idle reader goroutines (pageReader).
	readers chan pageRead
	// roomWaiters counts the committers waiting for room (waitRoom): they
	// wait for the applier, and so for its reads.
	roomWaiters atomic.Int64
	// failed is the applier's error, once it failed (also in db.failed).
	failed error
	// Statistics.
	deferred, applied, groups, waits atomic.Int64
}

func (q *deferQueue) init(cacheSize int64) {
	q.limit = min(max(cacheSize/deferShare, deferMin), deferMax)
	q.room = sync.NewCond(&q.mu)
	q.index = make(map[string]deferredWrite)
	q.kick = make(chan struct{}, 1)
	q.reads = make(chan struct{}, deferReads)
	q.readers = make(chan pageRead)
}

// lookup returns key's newest queued write, if any. The value aliases the
// queue's copy: callers copy it.
func (q *deferQueue) lookup(key []byte) (w deferredWrite, ok bool) {
	if q.queued.Load() == 0 {
		return w, false
	}
	q.mu.RLock()
	w, ok = q.index[string(key)]
	q.mu.RUnlock()
	return w, ok
}

// missingQueued is how many queued commits found a page missing.
func (q *deferQueue) missingQueued() int {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return q.missing
}

// waitRoom waits until the queue has room for size more bytes, or is
// empty, or the applier failed. Called without writeMu (the applier
// needs it to make room).
func (q *deferQueue) waitRoom(size int64) {
	if q.queued.Load() == 0 {
		return
	}
	q.mu.Lock()
	waited := false
	for q.bytes > 0 && q.bytes+size > q.limit && q.failed == nil {
		if !waited {
			waited = true
			q.roomWaiters.Add(1)
		}
		q.room.Wait()
	}
	q.mu.Unlock()
	if waited {
		q.roomWaiters.Add(-1)
		q.waits.Add(1)
	}
}

// add queues a commit's writes (copied) logged as WAL record lsn. Called
// with writeMu held.
func (q *deferQueue) add(ops [][]byte, lsn uint64, missing bool) error {
	b := &deferredBatch{lsn: lsn, size: batchOverhead, missing: missing}
	type write struct {
		key string
		w   deferredWrite
	}
	var writes []write
	for _, chunk := range ops {
		c := append([]byte(nil), chunk...)
		b.ops = append(b.ops, c)
		b.size += int64(len(c))
		err := decodeOps(c, func(op byte, key, value []byte) error {
			writes = append(writes, write{string(key), deferredWrite{del: op == opDelete, value: value}})
			b.size += int64(len(key)) + writeOverhead
			return nil
		})
		if err != nil {
			// The batch was encoded by Batch: a decode error is a bug,
			// and its record is already in the WAL.
			return fmt.Errorf("queue deferred commit: %w", err)
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.seq++
	b.seq = q.seq
	for _, w := range writes {
		w.w.seq = b.seq
		q.index[w.key] = w.w
	}
	q.batches = append(q.batches, b)
	q.bytes += b.size
	if missing {
		q.missing++
	}
	q.queued.Store(int64(len(q.batches)))
	q.deferred.Add(1)
	select {
	case q.kick <- struct{}{}:
	default:
	}
	return nil
}

// front returns up to n of the oldest queued commits (still queued).
func (q *deferQueue) front(n int) []*deferredBatch { return q.after(0, n) }

// after returns up to n queued commits newer than commit seq, oldest
// first.
func (q *deferQueue) after(seq uint64, n int) []*deferredBatch {
	q.mu.RLock()
	defer q.mu.RUnlock()
	i, _ := slices.BinarySearchFunc(q.batches, seq+1, func(b *deferredBatch, s uint64) int { return cmp.Compare(b.seq, s) })
	return append([]*deferredBatch(nil), q.batches[i:min(i+n, len(q.batches))]...)
}

// upTo is how many queued commits are commit seq or older.
func (q *deferQueue) upTo(seq uint64) int {
	q.mu.RLock()
	defer q.mu.RUnlock()
	i, _ := slices.BinarySearchFunc(q.batches, seq+1, func(b *deferredBatch, s uint64) int { return cmp.Compare(b.seq, s) })
	return i
}

// done drops the n oldest queued commits, applied to the tree in a
// version already published, and their writes from the index where no
// newer queued write replaced them. Called with writeMu held.
func (q *deferQueue) done(n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, b := range q.batches[:n] {
		for _, chunk := range b.ops {
			_ = decodeOps(chunk, func(_ byte, key, _ []byte) error {
				if w, ok := q.index[string(key)]; ok && w.seq == b.seq {
					delete(q.index, string(key))
				}
				return nil
			})
		}
		q.bytes -= b.size
		if b.missing {
			q.missing--
		}
	}
	clear(q.batches[:n])
	q.batches = q.batches[n:]
	if len(q.batches) == 0 {
		q.batches = nil
		q.index = make(map[string]deferredWrite) // empty now; a map does not shrink
	}
	q.queued.Store(int64(len(q.batches)))
	q.applied.Add(int64(n))
	q.groups.Add(1)
	q.room.Broadcast()
}

// fail records the applier's error and wakes the committers waiting for
// room (they then meet db.failed).
func (q *deferQueue) fail(err error) {
	q.mu.Lock()
	q.failed = err
	q.room.Broadcast()
	q.mu.Unlock()
}

// deferCommit reads the pages a commit of b needs that are in memory as
// images (prefetch), and reports whether the commit should be deferred
// because one is on disk, where it may be: reads asynchronous, and b's
// room in the queue within its limit (otherwise prefetch reads them all,
// outside every lock, and the commit applies the queue and goes in
// directly). commitQueued decides the rest under writeMu. Called
// without locks.
func (db *DB) deferCommit(b *Batch) bool {
	may := !db.opts.DisableDeferredCommits && queueRoom(b) <= db.dq.limit
	if may && deferTest != nil {
		return deferTest()
	}
	return db.prefetch(b, may && db.asyncReads())
}

// queueRoom is what batch b takes in the deferred queue: its keys count
// twice, in the batch and in the index.
func queueRoom(b *Batch) int64 {
	return 2*int64(b.size) + batchOverhead + int64(b.n)*writeOverhead
}

// commitQueued commits ops while commits are queued, or deferIt (its
// pages are not in memory); room is what the batch would take in the
// queue. Called with writeMu held.
//
//   - Too large for the queue (room over its limit), or deferral turned
//     off: after applying the queue, directly.
//   - deferIt, or commits that found pages missing are queued: queued
//     behind them. A committer never reads the queue's missing pages
//     holding writeMu: the applier reads them outside every lock, while
//     the commits behind queue. (Applying a short queue here, reading its
//     pages, made every other committer wait for those reads: 11–12 ms
//     during checkpoints on a cached oltp_write_only, docs/BENCHMARKS.md,
//     twenty-first session.)
//   - Only commits whose pages were in memory are queued: it applies the
//     oldest group of them (deferGroup), and commits directly if that
//     emptied the queue, else queues behind the rest. So the queue empties
//     once the cache has warmed up and cached commits stop paying its
//     costs (measured on cached updates: every commit stayed queued
//     behind the first cold ones, 0.65–1.0× the throughput at 1.5× the
//     CPU, and the queue outgrew its limit), while no commit applies more
//     than one group: after a long read, hundreds of commits may be
//     queued.
func (db *DB) commitQueued(ops [][]byte, room int64, deferIt bool) (uint64, error) {
	if room > db.dq.limit || db.opts.DisableDeferredCommits {
		if err := db.applyDeferredLocked(-1, true); err != nil {
			return 0, err
		}
		return db.commitLocked(ops, nil)
	}
	if deferIt || db.dq.missingQueued() > 0 {
		return db.commitDeferredLocked(ops, deferIt)
	}
	if err := db.applyDeferredLocked(deferGroup, false); err != nil {
		return 0, err
	}
	if db.dq.queued.Load() == 0 {
		return db.commitLocked(ops, nil)
	}
	return db.commitDeferredLocked(ops, false)
}

// asyncReads reports whether the store's reads hold no P while the device
// works (direct I/O through Linux AIO, vfs.AsyncReads): only then does
// deferring commits pay. With blocking reads the applier's reads in
// flight held the Go scheduler's Ps, and the committers and the page
// cleaner waited for them: no faster than reading before each commit,
// and the commits' latency more uneven (docs/BENCHMARKS.md).
func (db *DB) asyncReads() bool { return db.store.DirectIO() && vfs.AsyncReads() }

// deferTest, set by tests only, decides for each commit that may be
// deferred whether its pages are missing (without looking; the MemFS has
// no asynchronous reads, with which alone commits are deferred).
var deferTest func() bool

// applierHold, set by tests only (before Open), makes the applier wait
// for it to be closed before each apply.
var applierHold chan struct{}

// commitDeferredLocked logs b's writes and queues them, marked missing if
// its look found a page missing (see the top of this file). Called with
// writeMu held; returns the WAL record's LSN.
func (db *DB) commitDeferredLocked(ops [][]byte, missing bool) (uint64, error) {
	lsn, err := db.log.AppendChunks(ops)
	if err != nil {
		return 0, fmt.Errorf("strata: write WAL: %w", err)
	}
	if err := db.dq.add(ops, lsn, missing); err != nil {
		db.failed = &failure{"strata: commit failed, reopen to recover", err}
		return 0, db.failed
	}
	return lsn, nil
}

// applyDeferred waits until every commit queued now is applied (Snapshot,
// NewIter, View): the version taken after it holds every commit that
// returned before. The applier applies them, whose reads are under way;
// applying them here would read their pages again, one after another,
// holding writeMu. Called without locks.
func (db *DB) applyDeferred() error {
	if db.dq.queued.Load() == 0 {
		return nil
	}
	return db.dq.waitApplied()
}

// waitApplied waits until the commits queued when it is called are
// applied, or the applier failed.
func (q *deferQueue) waitApplied() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	seq := q.seq
	for len(q.batches) > 0 && q.batches[0].seq <= seq {
		if q.failed != nil {
			return q.failed
		}
		q.room.Wait()
	}
	return nil
}

// applyDeferredLocked applies the queued commits, up to n of them (all if
// n < 0), oldest first, deferGroup at a time. Called with writeMu held. A
// failure leaves the database refusing writes (db.failed).
func (db *DB) applyDeferredLocked(n int, read bool) error {
	if db.failed != nil {
		if db.dq.queued.Load() > 0 {
			return db.failed
		}
		return nil
	}
	for n != 0 {
		group := db.dq.front(deferGroup)
		if len(group) == 0 {
			return nil
		}
		if n > 0 {
			group = group[:min(n, len(group))]
			n -= len(group)
		}
		if read {
			// Holding writeMu only: point reads go on.
			db.readGroupPages(group, false)
		}
		if err := db.applyGroupLocked(group); err != nil {
			return db.readErr(fmt.Errorf("apply deferred commits: %w", err))
		}
		db.dq.done(len(group))
	}
	return nil
}

// failDeferred makes the database refuse writes after queued commits
// could not be applied (err, from applyDeferredLocked). Called with
// writeMu held.
func (db *DB) failDeferred(err error) error {
	if db.failed == nil {
		if corruptPage(err) {
			// Reopening replays them, and meets the same page: the
			// database does not open until it is restored (a known
			// limit: a deferred commit is acknowledged before its pages
			// are read; docs/ARCHITECTURE.md, "Deferred commits").
			if !errors.Is(err, ErrCorrupt) {
				err = fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			db.failed = &failure{"strata: deferred commits could not be applied: a page they change is corrupt", err}
		} else {
			db.failed = &failure{"strata: deferred commits could not be applied, reopen to recover them from the WAL", err}
		}
	}
	db.dq.fail(db.failed)
	return db.failed
}

// applyGroupLocked applies queued commits to the tree as one transaction
// and publishes it with the last one's LSN. Called with writeMu held.
func (db *DB) applyGroupLocked(group []*deferredBatch) error {
	db.treeMu.Lock()
	defer db.treeMu.Unlock()
	db.treeEpoch++
	tx := db.beginLocked()
	for _, b := range group {
		for _, chunk := range b.ops {
			if err := applyOps(tx, chunk); err != nil {
				db.abort(tx)
				return err
			}
		}
	}
	return db.publish(tx, group[len(group)-1].lsn)
}

// applier applies the queue in the background, deferGroup commits at a
// time, oldest first. It keeps the pages of the next deferDepth groups
// being read (readGroupPages, each group by a goroutine of its own, the
// reads of all of them at most deferReads at once) while it applies the
// oldest group whose reads are done: the disk serves many reads at once
// (docs/BENCHMARKS.md), and a group's slowest read does not hold the
// reads of the next. The reads are a hint: if a reader applied the queue
// meanwhile (applyDeferred), the oldest group is another, and the apply
// reads what it misses.
func (db *DB) applier() {
	defer db.done.Done()
	type readJob struct {
		last uint64 // the newest commit it read for
		done chan struct{}
	}
	var jobs []readJob
	var readTo uint64 // the newest commit a job was started for
	wait := func() {
		for _, j := range jobs {
			<-j.done // no read outlives the applier (Close closes the pool next)
		}
		jobs = nil
	}
	defer wait()
	for {
		select {
		case <-db.stop:
			return
		case <-db.dq.kick:
		}
		for db.dq.queued.Load() > 0 {
			select {
			case <-db.stop:
				return
			default:
			}
			for len(jobs) < deferDepth {
				next := db.dq.after(readTo, deferGroup)
				if len(next) == 0 {
					break
				}
				j := readJob{last: next[len(next)-1].seq, done: make(chan struct{})}
				go func() {
					defer close(j.done)
					db.readGroupPages(next, true)
				}()
				jobs = append(jobs, j)
				readTo = j.last
			}
			if len(jobs) == 0 {
				continue // a reader applied the queue meanwhile
			}
			j := jobs[0]
			jobs = jobs[1:]
			<-j.done
			if h := applierHold; h != nil {
				select {
				case <-h:
				case <-db.stop:
					return
				}
			}
			if !db.applyRead(j.last) {
				return
			}
			db.maybeCheckpoint()
		}
		wait() // reads for commits a reader applied
	}
}

// applyRead applies the queued commits up to commit last, whose pages the
// applier has read; an error is tried again deferRetries times, reading
// the pages again, after deferBackoff, ten times as long each time, then
// the database refuses writes (failDeferred). It reports false when the
// applier should stop (it failed, or the database closes).
func (db *DB) applyRead(last uint64) bool {
	read := false
	backoff := deferBackoff
	for try := 0; ; try++ {
		db.writeMu.Lock()
		n := db.dq.upTo(last) // fewer if a reader applied some meanwhile
		var err error
		if n > 0 {
			err = db.applyDeferredLocked(n, read)
		}
		if err != nil && (try == deferRetries || db.failed != nil || errors.Is(err, ErrCorrupt)) {
			db.failDeferred(err)
			db.writeMu.Unlock()
			db.opts.Logger.Error("strata: deferred commits could not be applied", "err", err)
			return false
		}
		db.writeMu.Unlock()
		if err == nil {
			return true
		}
		db.opts.Logger.Warn("strata: deferred commits not applied, trying again", "err", err, "after", backoff)
		select {
		case <-db.stop:
			return false // Close applies the queue, or fails with the error
		case <-time.After(backoff):
		}
		backoff *= 10
		read = true
	}
}

// readGroupPages reads the pages the writes of group need that are not in
// memory, up to deferReads at once, looking again below the pages read
// (prefetchRounds looks), the first deferKeys keys of the group only.
// Errors are left to the apply, which meets them.
func (db *DB) readGroupPages(group []*deferredBatch, overlapped bool) {
	var keys [][]byte
	for _, b := range group {
		if !b.missing {
			// Queued only to stay behind the others, its pages in memory
			// then. (Looking at them too, in case they were evicted
			// since, cost more CPU than it saved: 228–235 against
			// 197–212 µs per commit with data 1× the memory limit,
			// docs/BENCHMARKS.md, twenty-first session.)
			continue
		}
		for _, chunk := range b.ops {
			_ = decodeOps(chunk, func(_ byte, key, _ []byte) error {
				if len(keys) == deferKeys {
					return errStopOps // the apply reads the rest
				}
				keys = append(keys, key)
				return nil
			})
		}
	}
	for round := 0; round < prefetchRounds && len(keys) > 0; round++ {
		v, missing, rest := db.lookPaths(keys)
		if v == nil {
			return
		}
		db.readPages(missing, overlapped) // under v's pin: no page it reaches is freed
		v.release()
		if len(missing) == 0 {
			return
		}
		keys = rest
	}
}

// readPages reads ids into the pool, the applier's reads at most
// deferReads at once (deferQueue.reads), each by a reader goroutine
// (pageReader). overlapped: no commit waits for these reads (the
// applier's, ahead of its apply), which the pool then prices by their CPU
// (bufferpool.Pool.PrefetchOverlapped); except a read made while a
// committer waits for room in the queue, which waits for the applier and
// so for its reads (where the device, not the CPU, bounds the writes).
func (db *DB) readPages(ids []btree.PageID, overlapped bool) {
	var wg sync.WaitGroup
	wg.Add(len(ids))
	for _, id := range ids {
		db.dq.reads <- struct{}{}
		req := pageRead{id: id, wg: &wg, overlapped: overlapped}
		select {
		case db.dq.readers <- req: // an idle reader takes it
		default:
			go db.pageReader(req)
		}
	}
	wg.Wait()
	db.st.prefetched.Add(int64(len(ids)))
}

// pageRead is a page for a reader goroutine to read into the pool.
type pageRead struct {
	id         btree.PageID
	wg         *sync.WaitGroup // Done when it is read
	overlapped bool            // see readPages
}

// pageReader reads req's page, then the pages it is given while it is
// given one within readerIdle, and returns. Readers outlive a read so that
// a read does not start a goroutine: each new goroutine's stack grew, by
// copying, to what a read that evicts and compresses a dirty frame needs
// (runtime.copystack was 7% of the CPU of writes with data 1× the memory
// limit, a goroutine per read). A reader takes a request only while a
// readPages caller waits for it, so none reads after Close.
func (db *DB) pageReader(req pageRead) {
	idle := time.NewTimer(readerIdle)
	defer idle.Stop()
	for {
		if req.overlapped && db.dq.roomWaiters.Load() == 0 { // the apply meets any error itself
			_ = db.pool.PrefetchOverlapped(req.id)
		} else {
			_ = db.pool.Prefetch(req.id)
		}
		<-db.dq.reads
		req.wg.Done()
		idle.Reset(readerIdle)
		select {
		case req = <-db.dq.readers:
		case <-idle.C:
			return
		case <-db.stop:
			return
		}
	}
}

// readerIdle is how long a page reader waits for its next read.
const readerIdle = time.Second

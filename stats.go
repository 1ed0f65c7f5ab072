package strata

import (
	"time"

	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/flashcache"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/wal"
)

// Stats are the database's counters and the lower layers' statistics.
type Stats struct {
	// Gets counts point reads (DB.Get and Has). Sets and Deletes count
	// committed writes, however they were made (Set, Delete, batches,
	// Update transactions); a write that failed or was discarded is not
	// counted. Batches counts committed Batch.Commit calls, Transactions
	// committed Update transactions that wrote something, Iterators the
	// iterators opened, Checkpoints the checkpoints completed.
	Gets, Sets, Deletes, Batches, Transactions, Iterators, Checkpoints int64
	// TxID is the last committed transaction; Snapshots the open ones.
	TxID      uint64
	Snapshots int
	// PendingFreePages are pages of old versions waiting for snapshots to
	// close or for the next checkpoint.
	PendingFreePages int
	// DeferredFrees counts page frees that failed (a page pinned too
	// long, an I/O error) and were queued for the next checkpoint;
	// OrphansFreed is the number of pages no version reached that Open
	// freed (pages of commits lost in a crash, or frees that never
	// completed). After a clean Close it is 0 at the next Open, which
	// does not look for them (docs/ARCHITECTURE.md, "Open after a clean
	// Close").
	DeferredFrees, OrphansFreed int64
	// CheckpointTime is the time spent in completed checkpoints;
	// CheckpointFreezeTime the part of it during which commits waited
	// (the freeze, under the writer lock).
	CheckpointTime, CheckpointFreezeTime time.Duration
	// SpaceWaits counts commits that checkpointed (waiting for a running
	// checkpoint first) because the old copies not yet freed had reached
	// twice the Options.CheckpointReplaced limit; SpaceWaitTime is the
	// time they took (docs/ARCHITECTURE.md, "Space between checkpoints").
	SpaceWaits    int64
	SpaceWaitTime time.Duration
	// ReplacedDurable counts the pages of the last checkpoint's tree
	// that commits replaced: copied the first time a commit changed them
	// after a checkpoint froze them, or removed from the tree.
	// ReplacedFresh counts pages written since the last checkpoint that
	// commits replaced: copied because an open snapshot or iterator froze
	// them and a reader held them (a commit changes the others in place,
	// leaving a version, SnapshotVersions, for the snapshots), or removed.
	// Per commit, the first measures the copy-on-write that checkpoints
	// cost, the second and SnapshotVersions what snapshots do
	// (docs/ARCHITECTURE.md, "A mutable tree between checkpoints").
	ReplacedDurable, ReplacedFresh int64
	// SnapshotVersions counts the pages commits copied aside for open
	// snapshots and iterators: a commit that changes a page of a
	// snapshot's version (not of a checkpoint's) copies its old bytes to
	// a version page the snapshot reads instead, and changes it in place,
	// so that its parents do not change (a copy-on-write would copy the
	// path to the root). Each version is freed with the last snapshot
	// before the commit that made it.
	SnapshotVersions int64
	// PrefetchedPages counts the pages commits found not in memory
	// before taking the writer lock, and read then (or found read by
	// someone else by then): pages their writes needed
	// (docs/ARCHITECTURE.md, "Commits read before they lock"); and the
	// pages the deferred commits' applier read for them (tried, whether or
	// not the read succeeded).
	PrefetchedPages int64
	// DeferredCommits counts the commits logged and queued before their
	// pages were read, DeferredApplied those applied to the tree since (by
	// the applier, or by an Update, a batch larger than the queue or Close,
	// which apply the queue first), in DeferredGroups transactions;
	// DeferredQueued is how many wait now, DeferredWaits the commits that
	// waited for room in the queue (docs/ARCHITECTURE.md, "Deferred
	// commits"). While commits are queued, TxID (the tree's version) lags
	// behind them.
	DeferredCommits, DeferredApplied, DeferredGroups int64
	DeferredQueued, DeferredWaits                    int64
	// DictionaryMemory is the part of Options.CacheSize charged to the
	// page store's compression dictionary (its encoders and decoders,
	// codec.DictMemory) instead of the buffer pool: 0 without one, if it
	// was adopted after this Open, or if charging it would have taken the
	// pool below its minimum size.
	DictionaryMemory int64
	Store            pagestore.Stats
	Pool             bufferpool.Stats
	WAL              wal.Stats
	// FlashCache is the flash cache's (Options.FlashCache; zero without
	// one): hits, misses, admissions and drops, bytes written, evictions,
	// stale rejects, errors, rebuild time.
	FlashCache flashcache.Stats
}

// Stats returns a snapshot of the statistics.
func (db *DB) Stats() Stats {
	st := Stats{
		Gets:         db.st.gets.Load(),
		Sets:         db.st.sets.Load(),
		Deletes:      db.st.deletes.Load(),
		Batches:      db.st.batches.Load(),
		Transactions: db.st.txs.Load(),
		Iterators:    db.st.iters.Load(),
		Checkpoints:  db.st.checkpoints.Load(),

		CheckpointTime:       time.Duration(db.st.checkpointNanos.Load()),
		CheckpointFreezeTime: time.Duration(db.st.freezeNanos.Load()),
		SpaceWaits:           db.st.spaceWaits.Load(),
		SpaceWaitTime:        time.Duration(db.st.spaceWaitNanos.Load()),
		DeferredFrees:        db.st.deferredFrees.Load(),
		ReplacedDurable:      db.st.replacedDurable.Load(),
		ReplacedFresh:        db.st.replacedFresh.Load(),
		SnapshotVersions:     db.st.snapshotVersions.Load(),
		OrphansFreed:         db.st.orphansFreed.Load(),
		PrefetchedPages:      db.st.prefetched.Load(),
		DeferredCommits:      db.dq.deferred.Load(),
		DeferredApplied:      db.dq.applied.Load(),
		DeferredGroups:       db.dq.groups.Load(),
		DeferredQueued:       db.dq.queued.Load(),
		DeferredWaits:        db.dq.waits.Load(),
		DictionaryMemory:     db.dictCharged,
	}
	db.mu.RLock()
	st.TxID = db.txid
	for _, n := range db.snaps {
		st.Snapshots += n
	}
	for _, p := range db.pending {
		st.PendingFreePages += len(p.ids)
	}
	for _, p := range db.pendingFresh {
		st.PendingFreePages += len(p.ids)
	}
	for _, p := range db.pendingVersions {
		st.PendingFreePages += len(p.ids)
	}
	db.mu.RUnlock()
	if db.enter() {
		st.Store = db.store.Stats()
		st.Pool = db.pool.Stats()
		st.WAL = db.log.Stats()
		st.FlashCache = db.flashStats()
		db.leave()
	}
	return st
}

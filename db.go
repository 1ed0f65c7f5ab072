// Package strata is an embedded key-value store whose pages are compressed
// on disk and whose cache knows it.
//
// A DB is a copy-on-write B+tree over a two-tier buffer pool (uncompressed
// pages and compressed pages in one memory budget, the split tuned online)
// over a log-structured store of compressed pages, with a write-ahead log
// for durability. See docs/ARCHITECTURE.md.
//
//	db, err := strata.Open("data", nil)
//	...
//	defer db.Close()
//	b := db.NewBatch()
//	b.Set([]byte("k1"), []byte("v1"))
//	b.Set([]byte("k2"), []byte("v2"))
//	err = b.Commit(strata.Sync)
//	v, err := db.Get([]byte("k1"))
//	it, _ := db.NewIter(nil)
//	for it.First(); it.Valid(); it.Next() { ... }
//	it.Close()
package strata

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/btree"
	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/flashcache"
	"github.com/stratadb/strata/internal/handoff"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
	"github.com/stratadb/strata/internal/wal"
)

// Errors returned by the database. Test with errors.Is.
var (
	ErrNotFound      = errors.New("strata: not found")
	ErrClosed        = errors.New("strata: closed")
	ErrCorrupt       = errors.New("strata: corrupt data")
	ErrEmptyKey      = errors.New("strata: empty key")
	ErrKeyTooLarge   = errors.New("strata: key too large")
	ErrValueTooLarge = errors.New("strata: value too large")
	// ErrBatchTooLarge: a batch (or an Update transaction) would exceed
	// one WAL record, 64 MiB of encoded writes.
	ErrBatchTooLarge = errors.New("strata: batch too large")
	ErrLocked        = errors.New("strata: database in use by another process or handle")
	ErrNotDatabase   = errors.New("strata: not a Strata database")
	ErrPageSize      = errors.New("strata: page size mismatch")
	// ErrCacheFull: a read needed a frame of a cache partition whose
	// frames were all pinned (open iterators keep their leaf pinned) or
	// dirty and could not be written back, for 10 s. Close iterators, or
	// give the cache more memory.
	ErrCacheFull = bufferpool.ErrNoFrame
	// ErrNotFlashCache: FlashCache.Path is not empty and holds no flash
	// cache, and FlashCache.Format is not set.
	ErrNotFlashCache = flashcache.ErrNotFlashCache
)

// DB is an open database. It is safe for concurrent use.
type DB struct {
	dir   string
	opts  Options
	store *pagestore.Store
	pool  *bufferpool.Pool
	flash *flashcache.Cache // nil without Options.FlashCache (flash.go)
	// dictCharged is the part of CacheSize given to the page store's
	// dictionary instead of the pool (open).
	dictCharged int64
	// flashState is the state the flash cache closes in: the final
	// checkpoint's, set by Close once it is written (zero: unknown).
	flashState flashcache.DBState
	tree       *btree.Tree
	log        *wal.Log

	// writeMu serializes writers (one at a time, as bbolt) and a
	// checkpoint's freeze (package handoff says why it is not a
	// sync.Mutex).
	writeMu handoff.Mutex
	// ckptMu keeps one checkpoint at a time; taken before writeMu.
	ckptMu sync.Mutex
	// ckptEpoch is odd while a checkpoint runs: checkpointLocked adds one
	// as it begins and one as it ends (under ckptMu). A commit whose
	// epochs at start and end differ, or are odd, overlapped a checkpoint
	// (benchmarks read it through hooks.CheckpointEpoch).
	ckptEpoch atomic.Uint64
	// treeMu keeps point reads out of the tree while a commit changes its
	// pages in place: a commit holds it exclusively from its first change
	// to the new version's publication, so readers never see part of a
	// commit; Get and NewSnapshot hold it shared. Snapshots and
	// transactions do not take it: they read pages no commit changes in
	// place as they read them (frozen below: a commit leaves a version of
	// such a page before it changes it, internal/btree/versions.go; or
	// writeMu held).
	treeMu sync.RWMutex
	// treeEpoch counts the times a commit held treeMu exclusively: a
	// point read that finds it unchanged after reading a page knows the
	// tree's pages are as it left them, and goes on from that page
	// instead of from the root (get). Written under treeMu exclusively,
	// read under treeMu shared.
	treeEpoch uint64
	// broken is set (under treeMu) when a failed commit could not be
	// undone: the tree holds part of it, so reads refuse until reopen.
	broken error
	// frozen is the txid of the last checkpoint begun: pages written at or
	// before it belong to a checkpoint's tree, and a commit copies them
	// instead of changing them in place. Written under writeMu and mu,
	// read under either.
	frozen uint64
	// ops admits public operations and lets Close wait for them
	// (inflight.go).
	ops inflight
	// cur is the current version, pinned by point reads without a lock
	// (inflight.go); retired are replaced versions still being read.
	cur atomic.Pointer[version]
	// mu guards the current version's fields below, the snapshot
	// registry, retired and the pending frees. It is held only briefly:
	// no read holds it while reading pages.
	mu      sync.RWMutex
	retired []*version
	// iters are the iterators of the database and its snapshots not yet
	// closed, a list through Iterator.newer and older: Close releases the
	// leaves they hold.
	iters   iterList
	root    btree.PageID
	txid    uint64
	lsn     uint64         // last WAL record applied
	snaps   map[uint64]int // txid → open snapshots of that version
	pending []pendingFree
	// pendingFresh are replaced pages no durable tree uses, in txid
	// order: free once no reader needs them. pendingVersions are the
	// versions commits kept for snapshots (internal/btree/versions.go),
	// freed the same way, each taken out of the tree's table of versions
	// first.
	pendingFresh, pendingVersions []pendingFree
	// pendingDiscard are replaced pages of the durable tree, in txid
	// order: on disk until a checkpoint frees them (pending), but dropped
	// from the pool once no reader needs them (pool.Discard), so that
	// the old copies do not take memory from the live pages.
	pendingDiscard []pendingFree
	// discardLater are replaced pages of the durable tree that were dirty
	// (or in use) when dropped: the running checkpoint writes them back,
	// and drops them once it has (releaseFrees).
	discardLater []btree.PageID
	// fresh are the pages written since the last checkpoint: no durable
	// tree uses them, so once replaced they can be freed as soon as no
	// snapshot needs them — before the page cleaner spends a compression
	// writing them.
	fresh    map[btree.PageID]bool
	ckptTxid uint64 // txid of the last durable checkpoint
	closed   atomic.Bool
	failed   error // sticky: a commit half-applied (I/O error)
	// freePage frees a page in the pool and the store (pool.FreePage;
	// tests make it fail).
	freePage func(btree.PageID) error
	// walAtCkpt is the WAL's byte count (since Open) at the last checkpoint.
	walAtCkpt atomic.Int64
	// replacedSinceFreeze counts the pages of the durable tree that
	// commits have replaced since the last checkpoint's freeze: each is a
	// second copy on disk until the next checkpoint frees the old one.
	// replacedLimit is how many such copies start a checkpoint (see
	// maybeCheckpoint); set at Open and after each checkpoint.
	replacedSinceFreeze atomic.Int64
	replacedLimit       atomic.Int64
	// pendingPages counts the pages in pending and those releaseFrees
	// took from it and is still freeing (changed under mu, or after the
	// frees; read without it by maybeCheckpoint).
	pendingPages atomic.Int64
	// walkedAtOpen: Open looked for unreachable pages (the meta page was
	// not written by a clean Close, or WAL records followed it).
	walkedAtOpen bool

	ckptKick chan struct{}
	stop     chan struct{}
	done     sync.WaitGroup

	st opStats
	pf prefetchState
	// dq queues the commits deferred while their pages are read
	// (deferred.go).
	dq deferQueue
}

// pendingFree is the pages a transaction replaced: free once no snapshot
// older than it exists and a checkpoint after it is durable (the previous
// checkpoint's tree may still use them).
type pendingFree struct {
	txid uint64
	ids  []btree.PageID
}

type opStats struct {
	gets, sets, deletes, batches, txs, iters, checkpoints atomic.Int64
	deferredFrees, orphansFreed                           atomic.Int64
	checkpointNanos, freezeNanos                          atomic.Int64
	spaceWaits, spaceWaitNanos                            atomic.Int64
	prefetched                                            atomic.Int64
	replacedDurable, replacedFresh, snapshotVersions      atomic.Int64
}

// operations counts the operations done so far: point reads, writes
// committed and iterators opened (the pool's Options.Progress).
func (s *opStats) operations() int64 {
	return s.gets.Load() + s.sets.Load() + s.deletes.Load() + s.iters.Load()
}

// countWrites counts a committed batch's writes.
func (s *opStats) countWrites(b *Batch) {
	s.sets.Add(int64(b.sets))
	s.deletes.Add(int64(b.deletes))
}

// Open opens the database in dir, creating it if dir does not exist or is
// empty, and recovers it after a crash.
func Open(dir string, o *Options) (*DB, error) {
	opts, c, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	fs := opts.fs
	names, err := fs.List(dir)
	// A creation that crashed before the store's first checkpoint leaves
	// only its lock file, the store's map log (created empty before the
	// first checkpoint, and written only after it), and perhaps the
	// checkpoint's temporary file: that directory is still new. A
	// non-empty map log without a CHECKPOINT is not a creation's.
	names = slices.DeleteFunc(names, func(n string) bool {
		return n == "LOCK" || n == "CHECKPOINT.tmp" || flashcache.IsMarker(n) ||
			n == "MAPLOG" && isEmptyFile(fs, filepath.Join(dir, n))
	})
	exists := err == nil && len(names) > 0
	if exists && !slices.Contains(names, "CHECKPOINT") {
		return nil, fmt.Errorf("%w: %s holds files but no CHECKPOINT", ErrNotDatabase, dir)
	}
	// Check every option before anything touches the directory. An
	// existing database keeps its page size, known once it is open; the
	// smallest page size is the weakest test of the pool's own minimum
	// then, and the largest the weakest of the flash cache's memory,
	// which grows as pages shrink (its index has an entry per quarter
	// page: a 64 KiB-page database with a large flash cache was refused
	// here, charged at 4 KiB pages). Open checks both again at the
	// database's page size.
	ps := cmp.Or(opts.PageSize, pagestore.DefaultPageSize)
	po := opts.poolOptionsFor(ps)
	if opts.PageSize == 0 && exists {
		ps, po = pagestore.MinPageSize, opts.poolOptions()
		if opts.FlashCache.Path != "" {
			po.CacheSize -= opts.flashOptions(pagestore.MaxPageSize, "").MemoryBytes()
		}
	}
	if err := po.Validate(ps); err != nil {
		return nil, fmt.Errorf("strata: %w", err)
	}
	store, err := pagestore.Open(dir, pagestore.Options{FS: fs, PageSize: opts.PageSize, Codec: c, DisableDirectIO: opts.DisableDirectIO, DisableReadPolling: opts.DisableReadPolling, DisableDictionary: opts.DisableDictionary, DictionarySpaceOnly: opts.dictSpaceOnly, Logger: opts.Logger})
	if err != nil {
		return nil, wrapOpenErr(dir, err)
	}
	db := &DB{dir: dir, opts: opts, store: store, snaps: make(map[uint64]int), fresh: make(map[btree.PageID]bool),
		ckptKick: make(chan struct{}, 1), stop: make(chan struct{})}
	db.pf.credit.Store(prefetchCredit) // the cache is cold
	db.dq.init(opts.CacheSize)
	db.ops.drain = sync.NewCond(&db.ops.mu)
	if err := db.open(); err != nil {
		if db.log != nil {
			db.log.Close()
		}
		if db.pool != nil {
			db.pool.Close()
		}
		if db.flash != nil {
			db.flash.Close(false, flashcache.DBState{})
		}
		store.Close()
		return nil, err
	}
	db.done.Add(2)
	go db.background()
	go db.applier()
	return db, nil
}

// isEmptyFile reports whether name is a file of zero bytes.
func isEmptyFile(fs vfs.FS, name string) bool {
	fi, err := fs.Stat(name)
	return err == nil && !fi.IsDir() && fi.Size() == 0
}

func wrapOpenErr(dir string, err error) error {
	switch {
	case errors.Is(err, vfs.ErrLocked):
		return fmt.Errorf("%w: %s: %v", ErrLocked, dir, err)
	case errors.Is(err, pagestore.ErrPageSize):
		return fmt.Errorf("%w: %v", ErrPageSize, err)
	case errors.Is(err, pagestore.ErrCorrupt):
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return fmt.Errorf("strata: open %s: %w", dir, err)
}

func (db *DB) open() error {
	// The pool's options at the store's page size are checked before the
	// flash cache opens: a refusal after it would leave the flash cache
	// marked open, and its next Open cold.
	po := db.opts.poolOptionsFor(db.store.PageSize())
	if err := po.Validate(db.store.PageSize()); err != nil {
		return fmt.Errorf("strata: %w", err)
	}
	if err := db.openFlash(); err != nil {
		return err
	}
	po.Progress = db.st.operations
	// The dictionary's codec state is charged to the cache, as the flash
	// cache's index is (docs/ARCHITECTURE.md, "A dictionary trained on
	// the first pages": at most a quarter of the cache, never below the
	// pool's minimum; a dictionary adopted later in this run is charged
	// from the next Open on).
	poolCodec := cmp.Or(po.Codec, bufferpool.DefaultCodec(db.store.Codec()))
	if charge := min(db.store.DictionaryMemory(poolCodec), po.CacheSize/4); charge > 0 {
		reduced := po
		reduced.CacheSize -= charge
		if reduced.Validate(db.store.PageSize()) == nil {
			po, db.dictCharged = reduced, charge
		}
	}
	pool, err := bufferpool.New(db.poolStore(), po)
	if err != nil {
		return fmt.Errorf("strata: %w", err)
	}
	db.pool = pool
	db.freePage = pool.FreePage
	db.tree = btree.New(pool, float64(db.opts.FillFactor)/100)
	var m meta
	if db.store.Stats().LivePages == 0 {
		// A new database: page 0 is the meta page.
		pg, err := pool.NewPage()
		if err != nil {
			return fmt.Errorf("strata: create meta page: %w", err)
		}
		if pg.ID() != 0 {
			pg.Release()
			return fmt.Errorf("%w: %s has no meta page but allocates page %d", ErrCorrupt, db.dir, pg.ID())
		}
		m = meta{pageSize: uint32(db.store.PageSize())}
		m.encode(pg.Data())
		pg.MarkDirty()
		pg.Release()
		if err := pool.FlushAll(); err != nil {
			return fmt.Errorf("strata: write meta page: %w", err)
		}
	} else {
		pg, err := pool.Get(0, bufferpool.Shared)
		if err != nil {
			return wrapOpenErr(db.dir, err)
		}
		m, err = decodeMeta(pg.Data())
		pg.Release()
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrNotDatabase, db.dir, err)
		}
	}
	db.root, db.txid, db.lsn, db.ckptTxid = btree.PageID(m.root), m.txid, m.lsn, m.txid
	db.frozen = m.txid
	db.mu.Lock()
	db.installVersion(db.root, db.txid)
	db.mu.Unlock()
	// MinNextLSN: a log whose files were removed after the checkpoint
	// must not number new commits at or below it, or recovery would take
	// them for records the checkpoint has.
	// SkipRecoveryRewrite: Open checkpoints what it replays and rotates
	// the log before any commit appends (db.checkpoint), so the replayed
	// records need not be written again to be durable (+0.3 s per 64 MiB
	// replayed; TestReopenAfterFailedWALSync).
	wopts := wal.Options{FS: db.opts.fs, Logger: db.opts.Logger, MinNextLSN: db.lsn + 1, SkipRecoveryRewrite: true}
	switch db.opts.Sync {
	case SyncAlways:
		wopts.SyncMode = wal.SyncAlways
	case SyncPeriodic:
		wopts.SyncMode = wal.SyncPeriodic
	case SyncNever:
		wopts.SyncMode = wal.SyncNever
	}
	if db.log, err = wal.Open(filepath.Join(db.dir, "wal"), wopts); err != nil {
		if errors.Is(err, wal.ErrCorrupt) {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return fmt.Errorf("strata: open WAL: %w", err)
	}
	if first := db.log.FirstLSN(); first > db.lsn+1 {
		return fmt.Errorf("%w: WAL starts at record %d, the checkpoint needs %d", ErrCorrupt, first, db.lsn+1)
	}
	// Redo the commits after the checkpoint, in order (replay.go).
	replayStart := time.Now()
	replayed, err := db.replayWAL()
	if err != nil {
		if errors.Is(err, wal.ErrCorrupt) {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return err
	}
	if replayed > 0 {
		db.opts.Logger.Info("strata: replayed WAL", "records", replayed, "took", time.Since(replayStart).Round(time.Millisecond))
	}
	// Make the recovered state a checkpoint, then free every page the
	// tree does not reach: pages of commits lost in the crash, and pages
	// replaced after the last checkpoint. After a clean Close there are
	// none (the meta page says so, and no WAL record follows it): the walk,
	// which reads every page of the tree, is skipped. The checkpoint's meta
	// page clears the clean flag, durably (FlushPages syncs the store)
	// before Open returns, so before any commit of this session can write
	// a page: a crash from here on finds the flag clear, and walks.
	clean := m.clean && replayed == 0
	ckptStart := time.Now()
	if err := db.checkpoint(); err != nil {
		return err
	}
	if replayed > 0 {
		db.opts.Logger.Info("strata: checkpointed the replayed commits", "took", time.Since(ckptStart).Round(time.Millisecond))
	}
	if clean {
		return nil
	}
	db.walkedAtOpen = true
	walkStart := time.Now()
	if err := db.collectOrphans(); err != nil {
		return err
	}
	db.opts.Logger.Info("strata: walked the tree for unreachable pages", "freed", db.st.orphansFreed.Load(), "took", time.Since(walkStart).Round(time.Millisecond))
	db.replacedLimit.Store(db.replacedPagesLimit())
	return nil
}

// replayErr classifies an error met while applying WAL record lsn: a
// record that does not decode, or holds a write the tree refuses (the
// commit checked it), is corruption; anything else (an I/O error, a
// corrupt page) keeps its own error chain.
func replayErr(lsn uint64, err error) error {
	if errors.Is(err, errBadBatch) || errors.Is(err, btree.ErrEmptyKey) ||
		errors.Is(err, btree.ErrKeyTooLarge) || errors.Is(err, btree.ErrValueTooLarge) {
		return fmt.Errorf("%w: WAL record %d: %w", ErrCorrupt, lsn, err)
	}
	if corruptPage(err) {
		return fmt.Errorf("%w: replay WAL record %d: %w", ErrCorrupt, lsn, err)
	}
	return fmt.Errorf("strata: replay WAL record %d: %w", lsn, err)
}

// applyOps applies an encoded batch to a tree transaction.
func applyOps(tx *btree.Tx, ops []byte) error {
	return decodeOps(ops, func(op byte, key, value []byte) error {
		if op == opSet {
			return tx.Put(key, value)
		}
		_, err := tx.Delete(key)
		return err
	})
}

// collectOrphans frees the store's pages that neither page 0 nor the tree
// reaches. Called at Open, after the recovery checkpoint.
func (db *DB) collectOrphans() error {
	live := map[btree.PageID]bool{0: true}
	if err := db.tree.Walk(db.root, func(id btree.PageID) { live[id] = true }); err != nil {
		return db.readErr(fmt.Errorf("walk tree: %w", err))
	}
	freed := 0
	err := db.store.ForEachPage(func(id pagestore.PageID) error {
		if live[id] {
			return nil
		}
		freed++
		return db.pool.FreePage(id)
	})
	db.st.orphansFreed.Store(int64(freed))
	if err != nil {
		return err
	}
	return nil
}

func (db *DB) checkKV(key, value []byte, set bool) error {
	if len(key) == 0 {
		return ErrEmptyKey
	}
	if len(key) > db.tree.MaxKeySize() {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrKeyTooLarge, len(key), db.tree.MaxKeySize())
	}
	if set && len(value) > db.tree.MaxValueSize() {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrValueTooLarge, len(value), db.tree.MaxValueSize())
	}
	return nil
}

// MaxKeySize is the limit on keys: a quarter of a page, less a little.
// MaxValueSize is the limit on values, 16 MiB; values longer than a
// quarter page are stored in overflow pages (docs/FORMAT.md).
func (db *DB) MaxKeySize() int   { return db.tree.MaxKeySize() }
func (db *DB) MaxValueSize() int { return db.tree.MaxValueSize() }

// Get returns a copy of key's value, or ErrNotFound. It holds no lock
// while it reads (a commit or a new snapshot never waits for it, however
// long its value).
func (db *DB) Get(key []byte) ([]byte, error) {
	value, err := db.AppendValue(nil, key)
	switch {
	case err != nil:
		return nil, err
	case value == nil:
		return []byte{}, nil
	}
	return value, nil
}

// AppendValue appends key's value to dst and returns the extended slice,
// or dst unchanged and ErrNotFound (or another error). It is Get without
// the allocation of the copy when dst has room for the value: a reader
// that reuses its buffer allocates nothing per read, where Get's copies
// were the collector's work in cached point reads (852 bytes a read of a
// JSON event, docs/BENCHMARKS.md, twenty-third session). dst's spare
// capacity must not hold key: the read may write there before it is done
// with the key.
func (db *DB) AppendValue(dst, key []byte) ([]byte, error) {
	if len(key) == 0 {
		return dst, ErrEmptyKey
	}
	if !db.enter() {
		return dst, ErrClosed
	}
	defer db.leave()
	db.st.gets.Add(1)
	var value []byte
	var found bool
	var err error
	if w, ok := db.dq.lookup(key); ok {
		// A deferred commit's write (deferred.go), newer than the tree's.
		value, found = append(dst, w.value...), !w.del
	} else {
		value, found, err = db.get(key, dst)
	}
	switch {
	case err != nil:
		return dst, err
	case !found:
		return dst, ErrNotFound
	}
	return value, nil
}

// get looks key up in the current version. It holds the tree latch for
// the descent, and a pin on the version for pages read without the latch:
// an overflow chain (never changed in place; a replaced chain is freed
// only once no read of an older version is in flight), and a page of the
// path that is not in memory. The descent reads only pages in memory
// (Tree.LookupCached); when one is not, get lets the latch go, reads the
// page, and looks again in the then current version (counting in the
// pool's statistics only the pages below the one it read), so that
// commits need not wait for its read (prefetch.go
// says the same of commits). After readRounds such reads it descends with
// the latch held, reading what it needs: pages evicted as fast as they
// are read cannot starve it. The value is appended to dst. Errors are the
// ones Get returns.
func (db *DB) get(key, dst []byte) (value []byte, found bool, err error) {
	value = dst
	var seen btree.PageID // the page read last: counted down to it
	var epoch uint64      // treeEpoch when seen was found missing
	for round := 0; ; round++ {
		db.treeMu.RLock()
		if db.broken != nil {
			err := db.broken
			db.treeMu.RUnlock()
			return nil, false, err
		}
		v := db.acquireVersion()
		var ref btree.OverflowRef
		var missing btree.PageID
		if round < readRounds {
			// No commit since seen was found on the key's path: the
			// path down to it is unchanged, so the look goes on from it.
			from := v.root
			if seen != 0 && db.treeEpoch == epoch {
				from = seen
			}
			epoch = db.treeEpoch
			value, ref, found, missing, err = db.tree.LookupCached(from, key, value[:len(dst)], seen)
		} else {
			value, ref, found, err = db.tree.Lookup(v.root, key, value[:len(dst)])
		}
		db.treeMu.RUnlock()
		if missing != 0 {
			err = db.warmPage(missing)
			v.release()
			if err != nil {
				return nil, false, db.readErr(err)
			}
			if getReadHook != nil {
				getReadHook(key, missing)
			}
			seen = missing
			continue
		}
		if err == nil && found {
			value, err = db.tree.ReadOverflow(value, ref)
		}
		v.release()
		if err != nil {
			return nil, false, db.readErr(err)
		}
		return value, found, nil
	}
}

// getReadHook, when set (by tests only), runs in get after page id was
// read without the tree latch, before the look again: where a commit that
// races with the read lands.
var getReadHook func(key []byte, id btree.PageID)

// warmPage reads page id into the pool and lets it go (get).
func (db *DB) warmPage(id btree.PageID) error {
	pg, err := db.pool.Get(id, bufferpool.Shared)
	if err != nil {
		return err
	}
	pg.Release()
	return nil
}

// readRounds bounds the pages a point read reads without the tree latch
// (get): a path is at most this deep in practice.
const readRounds = 8

func (db *DB) getAt(root btree.PageID, asOf uint64, key []byte) ([]byte, error) {
	if root == 0 {
		return nil, ErrNotFound
	}
	v, ok, err := db.tree.GetAt(root, asOf, key, nil)
	if err != nil {
		return nil, db.readErr(err)
	}
	if !ok {
		return nil, ErrNotFound
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// failure is the error a database that refuses writes returns (db.failed):
// msg, then err, whose own "strata: " prefix is dropped from the message
// (it names the package once), err still what errors.Is and As see.
type failure struct {
	msg string
	err error
}

func (f *failure) Error() string { return f.msg + ": " + strings.TrimPrefix(f.err.Error(), "strata: ") }
func (f *failure) Unwrap() error { return f.err }

// corruptPage reports whether err comes from bad bytes in a page: the
// store's checksum or a node that does not parse.
func corruptPage(err error) bool {
	return errors.Is(err, pagestore.ErrCorrupt) || errors.Is(err, btree.ErrCorruptNode)
}

func (db *DB) readErr(err error) error {
	if corruptPage(err) {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return fmt.Errorf("strata: %w", err)
}

// Has reports whether key is present.
func (db *DB) Has(key []byte) (bool, error) {
	_, err := db.Get(key)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Set sets key to value (durable as the database's SyncMode says).
func (db *DB) Set(key, value []byte) error {
	b := Batch{db: db}
	if err := b.Set(key, value); err != nil {
		return err
	}
	return db.commit(&b, nil)
}

// Delete removes key; deleting an absent key is not an error.
func (db *DB) Delete(key []byte) error {
	b := Batch{db: db}
	if err := b.Delete(key); err != nil {
		return err
	}
	return db.commit(&b, nil)
}

// commit logs and applies a batch as one transaction. The WAL record is
// queued under writeMu, before the new version becomes visible, so that LSN
// order is commit order; the wait for its fsync (if opts ask for one)
// happens after writeMu is released, so concurrent committers share fsyncs.
func (db *DB) commit(b *Batch, opts *WriteOptions) error {
	if !db.enter() {
		return ErrClosed
	}
	defer db.leave()
	deferIt := db.deferCommit(b)
	room := queueRoom(b)
	if (deferIt || db.dq.queued.Load() > 0) && room <= db.dq.limit {
		// It may be queued (commitQueued): each committer adds one batch
		// at most beyond the room it found. A batch the queue cannot hold
		// beside anything does not wait for room (only an empty queue
		// would do, which committers that fit keep from happening): it
		// applies the queue and commits directly.
		db.dq.waitRoom(room)
	}
	db.writeMu.Lock()
	if db.failed != nil {
		db.writeMu.Unlock()
		return db.failed
	}
	var lsn uint64
	var err error
	if db.dq.queued.Load() == 0 && !deferIt {
		lsn, err = db.commitLocked(b.ops(), nil)
	} else {
		lsn, err = db.commitQueued(b.ops(), room, deferIt)
	}
	db.writeMu.Unlock()
	if err != nil {
		return err
	}
	db.st.countWrites(b)
	if err := db.waitDurable(lsn, opts); err != nil {
		return err
	}
	db.maybeCheckpoint()
	return nil
}

// waitDurable waits for the commit of WAL record lsn to be durable if opts
// ask for it: Sync always, NoSync never, nil if the database's mode is
// SyncAlways. Called without writeMu.
func (db *DB) waitDurable(lsn uint64, opts *WriteOptions) error {
	if opts == nil && db.opts.Sync != SyncAlways || opts != nil && !opts.Sync {
		return nil
	}
	if err := db.log.WaitDurable(lsn); err != nil {
		return fmt.Errorf("strata: sync WAL: %w", err)
	}
	return nil
}

// maybeCheckpoint asks the background worker for a checkpoint once the WAL
// has grown by CheckpointWAL bytes since the last one, or once commits have
// replaced replacedLimit pages of the durable tree since the last freeze
// (Options.CheckpointReplaced).
//
// The second trigger bounds the space of copy-on-write between checkpoints:
// a page of the durable tree is copied the first time a commit changes it,
// and the old copy stays on disk until the next checkpoint. Under random
// updates over a large table, a checkpoint interval set by the WAL alone
// (64 MiB of WAL is tens of seconds of small commits) copies nearly every
// leaf, so the store held two versions of the whole tree (measured: live
// pages 94 -> 189 MiB within 20 s of updates on a 1 M-row table, 24 MiB
// cache).
//
// Commits that replace pages faster than checkpoints free them wait: once
// the old copies waiting for a checkpoint reach twice the limit (a running
// checkpoint frees only those replaced before its freeze) and half a limit
// of them were replaced since the last freeze, the committer waits for the
// running checkpoint and checkpoints itself. The old copies on disk thus
// stay under two and a half limits (plus what concurrent commits replace
// during the wait). The half limit keeps commits from checkpointing one
// after another while a snapshot keeps old copies from being freed.
//
// Neither happens while a snapshot (or iterator) of the frozen version or
// an older one is open: it keeps every page replaced after it, so a checkpoint would
// free nothing, and each one makes the next commits copy the pages again.
func (db *DB) maybeCheckpoint() {
	due, wait := db.checkpointDue()
	if wait {
		db.checkpointForSpace()
		return
	}
	if due {
		select {
		case db.ckptKick <- struct{}{}:
		default:
		}
	}
}

// checkpointDue says whether a background checkpoint is due, and whether
// the committer must checkpoint itself (maybeCheckpoint).
func (db *DB) checkpointDue() (due, wait bool) {
	walDue := db.log.Stats().Bytes-db.walAtCkpt.Load() >= db.opts.CheckpointWAL
	replaced, limit, pending := db.replacedSinceFreeze.Load(), db.replacedLimit.Load(), db.pendingPages.Load()
	if replaced < limit/2 || pending < limit || db.readerPinsReplaced() {
		return walDue, false
	}
	return walDue || replaced >= limit, pending >= 2*limit
}

// readerPinsReplaced says whether a snapshot or iterator of the frozen
// version or an older one is open: it keeps every page replaced since.
func (db *DB) readerPinsReplaced() bool {
	db.mu.RLock()
	defer db.mu.RUnlock()
	for t := range db.snaps {
		if t <= db.frozen {
			return true
		}
	}
	return false
}

// checkpointForSpace waits for the running checkpoint and, if the old
// copies are still over twice the limit (no other committer has
// checkpointed meanwhile), checkpoints. The caller's commit has succeeded;
// a failed checkpoint is logged, and the next one retries.
func (db *DB) checkpointForSpace() {
	start := time.Now()
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	limit := db.replacedLimit.Load()
	if db.pendingPages.Load() >= 2*limit && db.replacedSinceFreeze.Load() >= limit/2 {
		if err := db.checkpointLocked(); err != nil && !errors.Is(err, ErrClosed) {
			db.opts.Logger.Warn("strata: checkpoint for space failed", "err", err)
		}
	}
	db.st.spaceWaits.Add(1)
	db.st.spaceWaitNanos.Add(int64(time.Since(start)))
}

// commitLocked applies ops (unless tx holds them already), queues their
// WAL record and publishes the new version, holding treeMu from the first
// change to the publication. It returns the record's LSN, for the caller to
// wait on after releasing writeMu.
func (db *DB) commitLocked(ops [][]byte, tx *btree.Tx) (uint64, error) {
	db.treeMu.Lock()
	defer db.treeMu.Unlock()
	db.treeEpoch++
	if tx == nil {
		tx = db.beginLocked()
		for _, chunk := range ops {
			if err := applyOps(tx, chunk); err != nil {
				db.abort(tx)
				return 0, db.readErr(err) // ErrCorrupt for a corrupt page, as for a read
			}
		}
	}
	lsn, err := db.log.AppendChunks(ops)
	if err != nil {
		db.abort(tx)
		return 0, fmt.Errorf("strata: write WAL: %w", err)
	}
	if err := db.publish(tx, lsn); err != nil {
		// The WAL has the commit but the tree does not: reopening
		// replays it. Until then, refuse writes.
		db.failed = &failure{"strata: commit failed, reopen to recover", err}
		return 0, db.failed
	}
	return lsn, nil
}

// beginLocked begins a transaction on the current version. Called with
// writeMu and treeMu held exclusively.
func (db *DB) beginLocked() *btree.Tx {
	db.mu.RLock()
	root, txid := db.root, db.txid+1
	// A snapshot's version is frozen too: its pages that change keep a
	// version of their bytes for it (internal/btree/versions.go).
	durable, snapshot := db.frozen, db.newestSnapshotLocked()
	db.mu.RUnlock()
	return db.tree.Begin(root, txid, durable, snapshot)
}

// publish commits tx's pages, makes its root the current version (the
// commit of WAL record lsn), and frees or queues the pages it replaced.
// Used by commits and by WAL replay.
func (db *DB) publish(tx *btree.Tx, lsn uint64) error {
	newRoot, freed, err := tx.Commit()
	if err != nil {
		return err
	}
	db.mu.Lock()
	txid := db.txid + 1
	db.root, db.txid, db.lsn = newRoot, txid, lsn
	db.installVersion(newRoot, txid)
	for _, id := range tx.Created() {
		db.fresh[id] = true
	}
	for _, id := range tx.Scrap() {
		db.fresh[id] = true // among freed, below: freed with the fresh pages
	}
	// Replaced pages that no durable tree uses (fresh) can go as soon as
	// no snapshot and no point read in flight reads a version before this
	// one; the others wait for a checkpoint too.
	var fresh, durable []btree.PageID
	for _, id := range freed {
		if db.fresh[id] {
			delete(db.fresh, id)
			fresh = append(fresh, id)
		} else {
			durable = append(durable, id)
		}
	}
	db.st.replacedDurable.Add(int64(len(durable)))
	db.st.replacedFresh.Add(int64(len(fresh)))
	// The versions of nodes it changed in place for open snapshots
	// (internal/btree/versions.go) go as the fresh pages do.
	if versions := tx.Versions(); len(versions) > 0 {
		db.st.snapshotVersions.Add(int64(len(versions)))
		db.pendingVersions = append(db.pendingVersions, pendingFree{txid: txid, ids: versions})
	}
	if len(durable) > 0 {
		db.pending = append(db.pending, pendingFree{txid: txid, ids: durable})
		db.pendingPages.Add(int64(len(durable)))
		db.replacedSinceFreeze.Add(int64(len(durable)))
		db.pendingDiscard = append(db.pendingDiscard, pendingFree{txid: txid, ids: durable})
	}
	if len(fresh) > 0 {
		db.pendingFresh = append(db.pendingFresh, pendingFree{txid: txid, ids: fresh})
	}
	oldest := db.oldestReadLocked()
	versions := takeReady(&db.pendingVersions, oldest)
	now := takeReady(&db.pendingFresh, oldest)
	drop := takeReady(&db.pendingDiscard, oldest)
	db.mu.Unlock()
	db.freeVersions(versions, txid, false)
	db.freePages(now, txid, false)
	db.discardPages(drop, true)
	return nil
}

// freeVersions frees versions no reader looks for any more, out of the
// tree's table of versions first (no entry then outlives the pages freed
// with them), as freePages frees pages.
func (db *DB) freeVersions(ids []btree.PageID, txid uint64, yield bool) {
	if len(ids) > 0 {
		db.tree.ForgetVersions(ids)
		db.freePages(ids, txid, yield)
	}
}

// discardPerCommit is the most replaced pages a commit drops from the pool
// itself (holding writeMu and treeMu, which every other commit waits for);
// a longer list (a snapshot held them) is left to the next checkpoint,
// whose loop yields.
const discardPerCommit = 64

// discardPages drops replaced pages of the durable tree from the pool
// (pool.Discard: the clean and idle ones, without waiting); they stay in
// the store for the durable tree until a checkpoint frees them. Measured
// on cached oltp_write_only before this: the old copies held about half
// the frames, and the live pages they pushed out were read again, with
// commits deferred on them (docs/BENCHMARKS.md, twenty-first session).
//
// From a commit (fromCommit), a list longer than discardPerCommit, and
// the pages still dirty (replaced while a checkpoint writes them back:
// most of them, with uniform updates) or in use, go to discardLater, for
// the checkpoint to drop once it has written them back (releaseFrees).
// From a checkpoint, it yields the processor after each page (as
// freePages), and a page still in use stays in memory until evicted.
// Called without db.mu.
func (db *DB) discardPages(ids []btree.PageID, fromCommit bool) {
	if fromCommit && len(ids) > discardPerCommit {
		db.mu.Lock()
		db.discardLater = append(db.discardLater, ids...)
		db.mu.Unlock()
		return
	}
	var kept []btree.PageID
	for _, id := range ids {
		if db.pool.Discard(id) && fromCommit {
			kept = append(kept, id)
		}
		if !fromCommit {
			runtime.Gosched()
		}
	}
	if len(kept) > 0 {
		db.mu.Lock()
		db.discardLater = append(db.discardLater, kept...)
		db.mu.Unlock()
	}
}

// oldestReadLocked is the txid of the oldest version that a snapshot, an
// iterator or a point read in flight reads (the next txid if none). Pages
// replaced by transaction t are needed by versions before t only. Called
// with db.mu held.
func (db *DB) oldestReadLocked() uint64 {
	oldest := min(db.txid+1, db.pruneRetired())
	for t := range db.snaps {
		oldest = min(oldest, t)
	}
	return oldest
}

// takeReady removes from list, in txid order, and returns the pages no
// version from oldest on needs. Called with db.mu held.
func takeReady(list *[]pendingFree, oldest uint64) []btree.PageID {
	var ready []btree.PageID
	n := 0
	for ; n < len(*list) && (*list)[n].txid <= oldest; n++ {
		ready = append(ready, (*list)[n].ids...)
	}
	if n > 0 {
		*list = slices.Delete(*list, 0, n)
	}
	return ready
}

// freePages frees pages no version needs any more. A page that cannot be
// freed now (pinned for longer than FreePage waits, or an I/O error) goes
// back to the pending list for the next checkpoint: a failure to free is
// a delay, never a failed commit. A checkpoint frees thousands of pages at
// once, each under its partition's mutex and some with a madvise(2): from
// a checkpoint (yield), holding none of the tree's locks, it yields the
// processor after each (runtime.Gosched), so that commits waiting for a
// processor or that mutex do not wait for the whole loop (bufferpool's
// writeback.go says why). A commit frees its pages holding writeMu and
// treeMu, which everyone else waits for: it does not yield.
func (db *DB) freePages(ids []btree.PageID, txid uint64, yield bool) {
	var retry []btree.PageID
	for _, id := range ids {
		if err := db.freePage(id); err != nil {
			db.opts.Logger.Warn("strata: free page deferred", "page", id, "err", err)
			retry = append(retry, id)
		}
		if yield {
			runtime.Gosched()
		}
	}
	db.st.deferredFrees.Add(int64(len(retry)))
	if len(retry) > 0 {
		db.mu.Lock()
		db.pending = append(db.pending, pendingFree{txid: txid, ids: retry})
		db.pendingPages.Add(int64(len(retry)))
		db.mu.Unlock()
	}
}

// abortRetries: a page that a failed commit's undo cannot read is tried
// again this many times, abortBackoff and then ten times as long between
// tries (111 ms in all, with writeMu and treeMu held), before the
// database refuses writes until reopen.
const (
	abortRetries = 3
	abortBackoff = time.Millisecond
)

// abort discards a transaction: the pages it changed in place get their
// old contents back, and its new pages are freed. No version ever used
// them, so one that cannot be freed now waits in the pending list for the
// next checkpoint, like any other deferred free. A page that cannot be
// read back is tried again abortRetries times, abortBackoff and then ten
// times as long between tries (the transaction resumes where it stopped),
// so a transient read error does not cost the database; a corrupt page,
// a tree not as the transaction left it, or a Close under way is not tried
// again. If a page still cannot be put back, the tree is no longer the
// last commit's: reads, writes and checkpoints are refused until reopen
// (recovery rebuilds it from the checkpoint and the WAL). Called with
// writeMu and treeMu held exclusively: reads, commits and a checkpoint's
// freeze wait for the tries.
func (db *DB) abort(tx *btree.Tx) {
	db.mu.RLock()
	txid := db.txid
	db.mu.RUnlock()
	ids, err := tx.Abort()
	backoff := abortBackoff
	for try := 1; err != nil && try <= abortRetries && !db.closed.Load() && !errors.Is(err, btree.ErrCannotUndo) && !corruptPage(err); try++ {
		db.opts.Logger.Warn("strata: undoing a failed commit, trying again", "err", err, "after", backoff)
		time.Sleep(backoff)
		backoff *= 10
		ids, err = tx.Abort()
	}
	if err != nil {
		if corruptPage(err) {
			err = fmt.Errorf("%w: %w", ErrCorrupt, err) // what every later read returns
		}
		db.failed = &failure{"strata: discarding a failed commit, reopen to recover", err}
		db.broken = db.failed
	}
	db.freePages(ids, txid, false)
	if versions := tx.Versions(); len(versions) > 0 {
		// A snapshot's reader may have found one while the transaction
		// ran: they go as a commit's would.
		db.mu.Lock()
		db.pendingVersions = append(db.pendingVersions, pendingFree{txid: txid + 1, ids: versions})
		db.mu.Unlock()
	}
}

// newestSnapshotLocked is the txid of the newest open snapshot (0 if
// none). Called with db.mu held.
func (db *DB) newestSnapshotLocked() uint64 {
	newest := uint64(0)
	for t := range db.snaps {
		newest = max(newest, t)
	}
	return newest
}

// Sync makes every commit so far durable.
func (db *DB) Sync() error {
	if !db.enter() {
		return ErrClosed
	}
	defer db.leave()
	return db.log.Sync()
}

// Checkpoint writes the tree's pages and a new meta page to the page store
// and truncates the WAL: recovery then starts from here. It runs in the
// background whenever the WAL exceeds Options.CheckpointWAL. Commits go on
// while it writes: it stops them only to freeze the tree.
func (db *DB) Checkpoint() error {
	if !db.enter() {
		return ErrClosed
	}
	defer db.leave()
	return db.checkpoint()
}

// checkpoint freezes the current version (a moment under writeMu), then
// writes it without holding writeMu: commits meanwhile copy the frozen
// pages instead of changing them (Tx.Begin's frozen), so what it writes is
// the frozen version's. ckptMu keeps one checkpoint at a time.
//
// The frozen version's pages that may be dirty are exactly those created
// since the previous freeze (db.fresh then): older pages were written by
// an earlier checkpoint and have not changed since, being frozen. A failed
// checkpoint gives them back to db.fresh, for the next one.
func (db *DB) checkpoint() error {
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	return db.checkpointLocked()
}

// checkpointLocked is checkpoint's body. Called with ckptMu held.
func (db *DB) checkpointLocked() error {
	db.ckptEpoch.Add(1)
	defer db.ckptEpoch.Add(1)
	start := time.Now()
	db.writeMu.Lock()
	// The freeze is the time under writeMu, when commits wait; not the
	// wait for it, behind a commit or an Update that runs meanwhile.
	frozeAt := time.Now()
	if db.failed != nil {
		err := db.failed
		db.writeMu.Unlock()
		return err
	}
	db.mu.Lock()
	m := meta{pageSize: uint32(db.store.PageSize()), root: uint64(db.root), txid: db.txid, lsn: db.lsn}
	db.frozen = db.txid
	flush := db.fresh
	db.fresh = make(map[btree.PageID]bool)
	db.replacedSinceFreeze.Store(0)
	db.mu.Unlock()
	walBytes := db.log.Stats().Bytes
	db.writeMu.Unlock()
	freeze := time.Since(frozeAt)

	metaWritten := false
	if err := db.writeCheckpoint(m, flush, &metaWritten); err != nil {
		if !metaWritten {
			// No meta page points to these pages: they are still only
			// the current tree's, as fresh as before the freeze.
			db.mu.Lock()
			for id := range flush {
				db.fresh[id] = true
			}
			db.mu.Unlock()
		}
		return fmt.Errorf("strata: checkpoint: %w", err)
	}
	db.mu.Lock()
	db.ckptTxid = m.txid
	db.mu.Unlock()
	db.walAtCkpt.Store(walBytes)
	db.st.checkpoints.Add(1)
	db.st.checkpointNanos.Add(int64(time.Since(start)))
	db.st.freezeNanos.Add(int64(freeze)) // of completed checkpoints, as CheckpointTime
	err := db.releaseFrees()
	db.replacedLimit.Store(db.replacedPagesLimit())
	return err
}

// writeCheckpoint makes the frozen version m durable: the pages of flush
// (those of its tree that may be dirty), then — write-ahead — the WAL up to
// m's record, then the meta page; then it drops the WAL files m covers.
func (db *DB) writeCheckpoint(m meta, flush map[btree.PageID]bool, metaWritten *bool) error {
	ids := make([]btree.PageID, 0, len(flush))
	for id := range flush {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	// The tree's pages first, then the meta page that points to them: the
	// page store keeps writes in order, so after a crash a new meta page
	// implies its tree.
	if err := db.pool.FlushPages(ids); err != nil {
		return err
	}
	// Write-ahead for the meta page too: the WAL records it covers must be
	// durable before it is. Otherwise a crash could leave a checkpoint
	// ahead of the WAL, whose next LSNs would then repeat numbers the
	// checkpoint covers, and replay would skip those commits. (A WAL
	// already behind the meta page, left by a crash before this rule, has
	// nothing to wait for: hence the min.)
	if err := db.log.WaitDurable(min(m.lsn, db.log.NextLSN()-1)); err != nil {
		return err
	}
	// From the meta page's write on, recovery may start from this tree
	// even if the checkpoint then fails: its pages must not become fresh
	// again (freeable at once when replaced).
	*metaWritten = true
	pg, err := db.pool.Get(0, bufferpool.Exclusive)
	if err != nil {
		return err
	}
	m.encode(pg.Data())
	pg.MarkDirty()
	pg.Release()
	if err := db.pool.FlushPages([]btree.PageID{0}); err != nil {
		return err
	}
	if err := db.log.Rotate(); err != nil {
		return err
	}
	return db.log.TruncateBefore(m.lsn + 1)
}

// replacedPagesLimit is how many replaced pages of the durable tree start a
// checkpoint: Options.CheckpointReplaced of the store's pages, but never
// fewer than the cache holds, so that a database that fits in its cache is
// checkpointed by its WAL alone (every checkpoint writes the dirty pages,
// and a small database's pages are all dirty after a few commits).
// Negative CheckpointReplaced: no limit.
func (db *DB) replacedPagesLimit() int64 {
	if db.opts.CheckpointReplaced < 0 {
		return math.MaxInt64 / 4 // never reached, and twice it does not overflow
	}
	// The tree's pages: the store's less the old copies not yet freed.
	pages := db.store.Stats().LivePages - db.pendingPages.Load()
	return max(int64(float64(pages)*db.opts.CheckpointReplaced), db.opts.CacheSize/int64(db.store.PageSize()))
}

// releaseFrees frees the pages of replaced versions that no snapshot and
// no durable checkpoint can reach any more. The pending pages it frees
// stay counted in pendingPages until they are freed: freePages yields
// after each page, so commits run meanwhile, and those that replace pages
// faster than a checkpoint frees them must see the old copies still on
// disk (checkpointDue) and wait for the running checkpoint. Counted as
// gone from the start, they let commits overshoot the space bound by what
// the frees' yields gave them time to replace (TestReplacedPagesStartCheckpoint:
// up to 1.9× the table, 12 runs in 40 over its 1.75×).
func (db *DB) releaseFrees() error {
	db.mu.Lock()
	oldest := db.oldestReadLocked()
	versions := takeReady(&db.pendingVersions, oldest)
	ready := takeReady(&db.pendingFresh, oldest)
	drop := append(db.discardLater, takeReady(&db.pendingDiscard, oldest)...)
	db.discardLater = nil
	keep := db.pending[:0]
	var fromPending int64
	for _, p := range db.pending {
		// Pages replaced by transaction p.txid belong to versions before
		// it: free when every snapshot is at p.txid or later, and the
		// durable tree is too.
		if p.txid <= oldest && p.txid <= db.ckptTxid {
			ready = append(ready, p.ids...)
			fromPending += int64(len(p.ids))
		} else {
			keep = append(keep, p)
		}
	}
	db.pending = keep
	txid := db.txid
	db.mu.Unlock()
	db.discardPages(drop, false) // written back now, or in use
	db.freeVersions(versions, txid, true)
	db.freePages(ready, txid, true)
	db.pendingPages.Add(-fromPending)
	return nil
}

func (db *DB) background() {
	defer db.done.Done()
	for {
		select {
		case <-db.stop:
			return
		case <-db.ckptKick:
			// A kick queued before the last checkpoint's freeze may be
			// stale: check again.
			if due, _ := db.checkpointDue(); !due {
				continue
			}
			if err := db.Checkpoint(); err != nil && !errors.Is(err, ErrClosed) {
				db.opts.Logger.Warn("strata: background checkpoint failed", "err", err)
			}
		}
	}
}

// Close waits for the operations in flight (reads, commits, transactions,
// iterator moves) to finish, checkpoints and closes the database. Later
// calls of any method, also on snapshots and iterators still open, return
// ErrClosed, except their Close, which only lets them go. Close does not
// wait for snapshots and iterators merely open: the pages they kept are
// freed by Close's checkpoint.
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return ErrClosed
	}
	db.waitInflight()
	close(db.stop)
	db.done.Wait()
	// Nothing else runs now but moves of iterators outside transactions,
	// which have their own gate (Iterator.begin): wait for those in
	// flight. Iterators left open hold a leaf each: let go of them before
	// the pool closes (they answer ErrClosed from now on). An iterator
	// registered after this list cannot have moved: its first move sees
	// db.closed.
	db.releaseIters()
	// Snapshots left open are dead from here on (they answer ErrClosed):
	// the pages they kept go with the final checkpoint, so that the store
	// holds only the tree's pages and Close can mark it clean.
	db.mu.Lock()
	clear(db.snaps)
	db.mu.Unlock()
	// The deferred commits the applier left go into the final checkpoint
	// (if this fails, they stay in the WAL for the next Open).
	var err error
	if db.failed == nil {
		db.writeMu.Lock()
		if err = db.applyDeferredLocked(-1, true); err != nil {
			err = db.failDeferred(err) // no checkpoint: the WAL has them
		}
		db.writeMu.Unlock()
	} else if db.dq.queued.Load() > 0 {
		err = db.failed // commits acknowledged but not in the tree: the next Open applies them
	}
	if db.failed == nil {
		err = db.checkpoint()
		if err == nil {
			// Nothing runs now: the meta page just written has these.
			db.flashState = flashState(db.txid, uint64(db.root))
			err = db.markClean()
		}
	}
	for _, c := range []func() error{db.log.Close, db.closePool, db.store.Close} {
		if cerr := c(); err == nil && cerr != nil {
			err = cerr
		}
	}
	return err
}

// markClean rewrites the meta page of Close's final checkpoint with the
// clean flag (meta.go) if the store holds no page the tree does not reach:
// the checkpoint freed every replaced page (no free failed; snapshots and
// iterators left open were let go before it) and no page was created since
// its freeze. The frees were appended to the store's log before this meta
// page, and the store recovers a prefix of its log: a durable clean flag
// implies them. Otherwise the flag stays clear and the next Open walks the
// tree. Called by Close, alone, after its checkpoint.
func (db *DB) markClean() error {
	db.mu.RLock()
	m := meta{pageSize: uint32(db.store.PageSize()), root: uint64(db.root), txid: db.txid, lsn: db.lsn, clean: true}
	clean := len(db.pending) == 0 && len(db.pendingFresh) == 0 && len(db.pendingVersions) == 0 && len(db.fresh) == 0 && db.ckptTxid == db.txid
	db.mu.RUnlock()
	if !clean {
		return nil
	}
	pg, err := db.pool.Get(0, bufferpool.Exclusive)
	if err != nil {
		return fmt.Errorf("strata: mark the meta page clean: %w", err)
	}
	m.encode(pg.Data())
	pg.MarkDirty()
	pg.Release()
	if err := db.pool.FlushPages([]btree.PageID{0}); err != nil {
		return fmt.Errorf("strata: mark the meta page clean: %w", err)
	}
	return nil
}

// releaseIters waits for the iterator moves in flight and releases the
// leaves the open iterators hold. Called by Close after db.closed is set.
func (db *DB) releaseIters() {
	db.mu.Lock()
	var iters []*Iterator
	for it := db.iters.newest; it != nil; it = it.older {
		iters = append(iters, it)
	}
	db.iters = iterList{}
	db.mu.Unlock()
	for _, it := range iters {
		for it.busy.Load() {
			time.Sleep(10 * time.Microsecond)
		}
		// Only the pin: the iterator's ungated reads (Key, an inline
		// Value, a move inside the window: see Iterator.begin) may still
		// read the cursor's other fields.
		it.tc.Unpin()
	}
}

// Dir is the database's directory.
func (db *DB) Dir() string { return db.dir }

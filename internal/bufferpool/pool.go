package bufferpool

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/buflist"
	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
)

// PageID identifies a page; the same ids as the page store's.
type PageID = pagestore.PageID

// Store is what the pool needs from the page store below it. A second-level
// cache (a flash cache) can implement it by wrapping the page store, which
// is where the pool's miss path will consult one.
type Store interface {
	PageSize() int
	// Codec is the store's codec; the pool's own compressions (demotions
	// and write-back) use Options.Codec, by default derived from it
	// (DefaultCodec).
	Codec() codec.Codec
	// ReadImage returns a page's stored image without decompressing it.
	ReadImage(id PageID, dst []byte) (pagestore.Image, error)
	WritePage(id PageID, page []byte) (codec.ID, int, error)
	Free(id PageID) error
	Allocate() (PageID, error)
	// Release returns an id from Allocate that was never written.
	Release(id PageID)
	Sync() error
}

// Errors returned by the pool.
var (
	ErrClosed = errors.New("bufferpool: closed")
	// ErrNoFrame: no frame of the page's partition can be freed, so no
	// page can be brought in: every frame is pinned (callers hold too many
	// pages at once for the cache size), or dirty and the store cannot
	// write it back (the error then wraps the store's), for 10 s.
	ErrNoFrame = errors.New("strata: cache full: no frame can be freed")
	// ErrPinned: FreePage of a page that is in use.
	ErrPinned = errors.New("bufferpool: page is pinned")
	// ErrNotCached: GetCached of a page that is not in memory.
	ErrNotCached = errors.New("bufferpool: page not in memory")
)

// FrameWaitLimit is how long a read waits for a frame to be freed before
// it fails with ErrNoFrame. A variable for tests.
var FrameWaitLimit = 10 * time.Second

// Mode is how a page is latched while pinned.
type Mode uint8

const (
	// Shared allows concurrent readers.
	Shared Mode = iota
	// Exclusive allows one writer; required for MarkDirty.
	Exclusive
)

// Pool is a two-tier, partitioned buffer pool over a page store.
type Pool struct {
	store    Store
	opts     Options
	pageSize int
	parts    []*partition
	shift    uint // partition = hash(id >> runShift) >> shift
	runShift uint // log2 of the ids a run of a partition holds: partRun's or 0

	fixed atomic.Bool // R is fixed, not tuned
	// compressing: evicted frames without an image are compressed into
	// the compressed tier (the controller's gate; demotions of frames with
	// an image compress nothing and do not depend on it).
	compressing atomic.Bool
	share       atomic.Uint64 // R applied now, as math.Float64bits
	target      atomic.Uint64 // R the controller wants
	ctl         controller
	timing      timing
	codec       codec.Codec  // compresses demotions and write-backs
	coding      demoteCoding // how demotions that compress code (demote_coding.go)
	sink        EvictionSink // the store, if it takes evicted clean pages (evict_hook.go)

	closed    atomic.Bool
	stop      chan struct{}
	done      sync.WaitGroup
	cleanKick chan struct{}
	scratch   *buflist.List // *[]byte of 2×pageSize: compression and image assembly
}

// getScratch returns a scratch buffer of at least 2×pageSize bytes, for
// putScratch to return.
func (p *Pool) getScratch() *[]byte { return p.scratch.Get() }

// putScratch returns bp to the scratch pool after a use whose result was
// used (nil if none): a result that outgrew the buffer replaces it, while a
// nil or smaller one (a failed compression, a codec that returned its own
// buffer) never does, so every pooled buffer keeps its 2×pageSize.
func (p *Pool) putScratch(bp *[]byte, used []byte) {
	if cap(used) > cap(*bp) {
		*bp = used[:0]
	}
	p.scratch.Put(bp)
}

// New creates a pool over store.
func New(store Store, opts Options) (*Pool, error) {
	opts = opts.withDefaults()
	ps := store.PageSize()
	if err := opts.validate(ps); err != nil {
		return nil, err
	}
	p := &Pool{
		store:     store,
		opts:      opts,
		pageSize:  ps,
		stop:      make(chan struct{}),
		cleanKick: make(chan struct{}, 1),
	}
	p.shift = uint(64 - bitsLen(opts.Partitions-1))
	p.sink, _ = store.(EvictionSink)
	p.fixed.Store(opts.FixedShare)
	p.compressing.Store(true)
	p.codec = opts.Codec
	if p.codec == nil {
		p.codec = DefaultCodec(store.Codec())
	}
	p.setShare(opts.CompressedShare)
	p.target.Store(p.share.Load())
	p.ctl.init(opts)
	p.scratch = buflist.New(func() *[]byte { b := make([]byte, 2*ps+64); return &b })
	partBudget := opts.CacheSize / int64(opts.Partitions)
	if partBudget/int64(ps) >= partRunFrames {
		p.runShift = uint(bits.TrailingZeros(partRun))
	}
	for i := 0; i < opts.Partitions; i++ {
		part, err := newPartition(p, int(partBudget))
		if err != nil {
			p.unmap()
			return nil, err
		}
		p.parts = append(p.parts, part)
		// The budget must hold the fixed metadata, a first chunk of
		// descriptors and a handful of frames, or no page could load.
		part.growDescs()
		if part.avail-part.resident() < 8*ps {
			p.unmap()
			return nil, fmt.Errorf("bufferpool: cache size %d too small: each of %d partitions keeps %d bytes of metadata and needs room for 8 pages of %d bytes",
				opts.CacheSize, opts.Partitions, part.metaBytes(), ps)
		}
	}
	p.done.Add(2)
	go p.cleaner()
	go p.controlLoop()
	return p, nil
}

func bitsLen(n int) int {
	l := 0
	for n > 0 {
		l++
		n >>= 1
	}
	return l
}

// partRun is how many consecutive page ids share a partition (partFor)
// where partitions hold at least partRunFrames frames each: a partition
// writes its dirty pages back together, so pages with neighbouring ids (a
// sequential load's neighbouring leaves) that share one land next to each
// other in the store, where a scan's read-ahead reads them with one read
// (pagestore.Store.ReadImages). Smaller partitions take pages one id at a
// time: there a hot set of a few runs of consecutive ids (the newest
// leaves of an index with increasing keys) would crowd a few partitions'
// frames while the others' stayed idle.
const (
	partRun       = 16
	partRunFrames = 64 * partRun
)

func (p *Pool) partFor(id PageID) *partition {
	if len(p.parts) == 1 {
		return p.parts[0]
	}
	return p.parts[(uint64(id>>p.runShift)*0x9E3779B97F4A7C15)>>p.shift]
}

// PageSize is the size of every page.
func (p *Pool) PageSize() int { return p.pageSize }

// CacheSize is the pool's memory budget in bytes.
func (p *Pool) CacheSize() int64 { return p.opts.CacheSize }

// Page is a page held in a frame, latched in its mode (and pinned, when it
// was not found there at once): it stays in its frame until released. It
// must be released exactly once.
type Page struct {
	part  *partition
	d     int32
	frame int32
	mode  Mode
	id    PageID
	// pinned: the page holds a pin on its descriptor besides its latch.
	// A hit without the partition lock (tryHit) holds only the latch.
	pinned bool
}

// ID is the page's id.
func (pg Page) ID() PageID { return pg.id }

// Data is the page's bytes, valid until Release. With a Shared pin they must
// not be modified.
func (pg Page) Data() []byte { return pg.part.frameData(pg.frame) }

// MarkDirty records that the page was modified; it needs the page held
// Exclusive.
// The page cleaners write it back to the store later.
func (pg Page) MarkDirty() {
	if pg.mode != Exclusive {
		panic("bufferpool: MarkDirty on a page pinned Shared")
	}
	pg.part.markDirty(pg.d)
}

// Release unlatches the page (and unpins it, if it was pinned).
func (pg Page) Release() { pg.part.release(pg) }

// MarkInner says the page is an inner node of the caller's index, on the
// path of many lookups: the frame replacement keeps it while it is used
// (innerWindow). The mark lasts while the page stays cached.
func (pg Page) MarkInner() {
	d := pg.part.desc(pg.d)
	if !d.inner.Load() {
		d.usedAt.Store(pg.part.frameEvictions.Load())
		if d.inner.CompareAndSwap(false, true) {
			pg.part.innerPages.Add(1)
		}
	}
}

// Get holds page id in a frame, latched in mode, reading it from the
// compressed tier or the store if it is not in a frame; the page stays
// there until Release.
func (p *Pool) Get(id PageID, mode Mode) (Page, error) {
	if p.closed.Load() {
		return Page{}, ErrClosed
	}
	if id > pagestore.MaxPageID {
		return Page{}, fmt.Errorf("bufferpool: page %d: %w", id, pagestore.ErrNotFound)
	}
	return p.partFor(id).get(id, mode, accessRead)
}

// TryGet holds page id latched in mode if it is in a frame and the latch
// is free to take at once; ok is false otherwise (not in a frame, latched,
// being loaded or demoted), and TryGet has not waited. It counts nothing
// in the statistics. The tree changes a page a snapshot reads in place
// only if it can take it exclusively this way: no reader holds it then.
func (p *Pool) TryGet(id PageID, mode Mode) (pg Page, ok bool) {
	if p.closed.Load() || id > pagestore.MaxPageID {
		return Page{}, false
	}
	return p.partFor(id).tryHit(id, mode, false)
}

// HeldExclusively reports whether page id is in a frame whose latch
// someone holds exclusively at the moment (a writer changing the page, or
// the pool moving it out of its frame), without the partition mutex.
func (p *Pool) HeldExclusively(id PageID) bool {
	if p.closed.Load() || id > pagestore.MaxPageID {
		return false
	}
	pt := p.partFor(id)
	di, found := pt.table.lookup(id)
	if !found {
		return false
	}
	d := pt.desc(di)
	f := d.frame.Load()
	if d.state.Load() != stFrame || f < 0 {
		return false
	}
	_, free := pt.latches[f].version()
	return !free
}

// Prefetch reads page id into memory, as Get would, for a use that
// follows soon (a Get of it by the caller): the read counts in the
// statistics as that use (a miss, or a compressed hit), and the use's hit
// does not count again. A page already in a frame is left as it is,
// uncounted. It holds nothing when it returns.
func (p *Pool) Prefetch(id PageID) error {
	return p.prefetch(id, accessWarm)
}

func (p *Pool) prefetch(id PageID, acc access) error {
	if p.closed.Load() {
		return ErrClosed
	}
	if id > pagestore.MaxPageID {
		return fmt.Errorf("bufferpool: page %d: %w", id, pagestore.ErrNotFound)
	}
	pg, err := p.partFor(id).get(id, Shared, acc)
	if err != nil {
		return err
	}
	pg.Release()
	return nil
}

// PrefetchOverlapped is Prefetch for a use that does not wait for the read
// (the deferred commits' applier reads the pages of the commits it applies
// next while it applies others). Where the store's reads wait for the
// device holding no CPU (Overlapper), such a miss costs the workload the
// CPU it takes, not its latency, and the controller prices it so:
// pricing the applier's misses at the device's latency (about 1.2 ms
// against 40 µs of CPU) kept R at 0.9 for writes with data 1× the memory,
// at 0.46× the throughput of R 0.5 (docs/BENCHMARKS.md, twenty-second
// session).
func (p *Pool) PrefetchOverlapped(id PageID) error {
	return p.prefetch(id, accessOverlapped)
}

// Overlapper is a Store whose reads wait for the device holding no CPU
// (the page store's direct reads through Linux AIO): ReadOverhead is the
// mean CPU time a read costs outside that wait, ok false where reads do
// not so wait.
type Overlapper interface {
	ReadOverhead() (d time.Duration, ok bool)
}

// overlappedMiss is what a miss of PrefetchOverlapped costs that took
// whole, of which read in the store read: whole with the read's CPU time
// in place of the read, if the store says what that is.
func (p *Pool) overlappedMiss(whole, read time.Duration) time.Duration {
	o, ok := p.store.(Overlapper)
	if !ok {
		return whole
	}
	cpu, ok := o.ReadOverhead()
	if !ok || cpu >= read {
		return whole
	}
	return whole - read + cpu
}

// InMemory reports whether page id is in memory, in a frame or as an
// image, or being loaded by another goroutine: a use of it reads nothing
// from the store itself (unless it is evicted first; it may wait for the
// load under way). It counts nothing.
func (p *Pool) InMemory(id PageID) bool {
	if p.closed.Load() || id > pagestore.MaxPageID {
		return false
	}
	pt := p.partFor(id)
	pt.mu.RLock()
	defer pt.mu.RUnlock()
	di, ok := pt.table.lookup(id)
	return ok && pt.desc(di).state.Load() != stFree
}

// GetCached is Get for a page in memory only: in a frame, or as an image,
// which it promotes as Get does. A page that Get would read from the store,
// or would wait for while another goroutine loads it, or whose promotion
// would wait for the page cleaner to free a frame, it returns
// ErrNotCached for, so that a caller holding a lock can let it go before
// it calls Get. Without count it is a look that counts nothing in the
// statistics (a caller looking again at pages it counted already, or
// ahead of a use that will count): a frame hit is not counted, and an
// image is not promoted (that would count) but reported ErrNotCached.
func (p *Pool) GetCached(id PageID, mode Mode, count bool) (Page, error) {
	if p.closed.Load() {
		return Page{}, ErrClosed
	}
	if id > pagestore.MaxPageID {
		return Page{}, fmt.Errorf("bufferpool: page %d: %w", id, pagestore.ErrNotFound)
	}
	acc := accessLook
	if count {
		acc = accessCached
	}
	return p.partFor(id).get(id, mode, acc)
}

// NewPage allocates a page id in the store and pins a zeroed frame for it,
// exclusively and dirty.
func (p *Pool) NewPage() (Page, error) {
	if p.closed.Load() {
		return Page{}, ErrClosed
	}
	id, err := p.store.Allocate()
	if err != nil {
		return Page{}, fmt.Errorf("bufferpool: allocate page: %w", err)
	}
	pg, err := p.partFor(id).newPage(id)
	if err != nil && !errors.Is(err, errCached) {
		// Never written: give the id back rather than lose it until a
		// restart.
		p.store.Release(id)
	}
	return pg, err
}

// Allocate reserves a page id in the store without creating the page; Create
// makes it later. Callers that need ids before contents (a copy-on-write
// tree wiring parents to children) use the pair instead of NewPage.
func (p *Pool) Allocate() (PageID, error) {
	if p.closed.Load() {
		return 0, ErrClosed
	}
	return p.store.Allocate()
}

// Create pins a zeroed frame for page id, which must not exist yet,
// exclusively and dirty.
func (p *Pool) Create(id PageID) (Page, error) {
	if p.closed.Load() {
		return Page{}, ErrClosed
	}
	if id > pagestore.MaxPageID {
		return Page{}, fmt.Errorf("bufferpool: new page %d: above the largest page id %d", id, pagestore.MaxPageID)
	}
	return p.partFor(id).newPage(id)
}

// FreePage drops page id from the pool and frees it in the store. The page
// must not be pinned.
func (p *Pool) FreePage(id PageID) error {
	if p.closed.Load() {
		return ErrClosed
	}
	if err := p.partFor(id).drop(id); err != nil {
		return err
	}
	if err := p.store.Free(id); err != nil {
		if !errors.Is(err, pagestore.ErrNotFound) {
			return fmt.Errorf("bufferpool: free page %d: %w", id, err)
		}
		// Allocated but never written: give the id back.
		p.store.Release(id)
	}
	// A read-ahead that read the page before the store freed
	// it may have kept its image after the drop above (the store still
	// had the record then): it goes too. None can come after: the store
	// no longer has the record (installImage's IsCurrent).
	p.partFor(id).dropReadAhead(id)
	return nil
}

// Discard drops page id from memory, frame and image, if it is clean and
// idle now; the store keeps the page. It never waits: a page pinned,
// latched, in transit or dirty (its write-back is still due) stays, and
// Discard reports that it did (kept), so that the caller may try again
// once the page is written back. It is for a page that a newer version
// replaced and that no reader will ask for again, though it stays on disk
// until a checkpoint frees it (copy-on-write between checkpoints): its
// frame would otherwise hold memory the live pages need until the CLOCK
// reaches it, and its eviction would keep or make an image of it. A page
// discarded and read again is a miss, never wrong data.
func (p *Pool) Discard(id PageID) (kept bool) {
	if p.closed.Load() {
		return false
	}
	return p.partFor(id).discard(id)
}

// FlushAll writes every dirty page to the store and syncs it.
func (p *Pool) FlushAll() error {
	if p.closed.Load() {
		return ErrClosed
	}
	return p.flushAll()
}

// FlushPages writes back those of ids that are dirty in a frame, and syncs
// the store. Unlike FlushAll it writes only the pages asked for, so it
// ends while other goroutines go on dirtying pages (a checkpoint flushes
// its frozen tree this way while commits continue). Pages not in the pool,
// clean, or held only as an image are skipped: a dirty page is never
// demoted before it is written back.
func (p *Pool) FlushPages(ids []PageID) error {
	if p.closed.Load() {
		return ErrClosed
	}
	for _, id := range ids {
		if err := p.partFor(id).flushPage(id); err != nil {
			return err
		}
	}
	if err := p.store.Sync(); err != nil {
		return fmt.Errorf("bufferpool: sync store: %w", err)
	}
	return nil
}

func (p *Pool) flushAll() error {
	// Every partition is tried: one that cannot write its pages does not
	// keep the others' dirty pages from the store.
	var first error
	for _, part := range p.parts {
		if err := part.flush(true, -1); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return first
	}
	if err := p.store.Sync(); err != nil {
		return fmt.Errorf("bufferpool: sync store: %w", err)
	}
	return nil
}

// Close flushes all dirty pages, stops the background work and releases
// the pool's memory. Pages must not be pinned.
func (p *Pool) Close() error {
	if p.closed.Swap(true) {
		return ErrClosed
	}
	close(p.stop)
	p.done.Wait()
	err := p.flushAll()
	if uerr := p.unmap(); err == nil {
		err = uerr
	}
	return err
}

func (p *Pool) unmap() error {
	var err error
	for _, part := range p.parts {
		if e := part.unmap(); err == nil {
			err = e
		}
	}
	return err
}

// kickCleaner wakes the page cleaner without blocking.
func (p *Pool) kickCleaner() {
	select {
	case p.cleanKick <- struct{}{}:
	default:
	}
}

// cleaner is the background page cleaner: it writes dirty frames back to
// the store ahead of need, so that readers looking for a frame to reuse
// find clean ones (and do not have to wait: a "free buffer wait").
func (p *Pool) cleaner() {
	defer p.done.Done()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var backoff time.Duration // after a failed write, until the next attempt
	var retryAt time.Time
	warned := false // since the last write error was cleared
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		case <-p.cleanKick:
		}
		// Back off only while a write error stands: once a write (a
		// checkpoint's, say) has succeeded, a waiting reader's kick is
		// served at once.
		if backoff > 0 && p.writeFailed() && time.Now().Before(retryAt) {
			continue
		}
		failed := false
		for _, part := range p.parts {
			if err := part.cleanIfNeeded(); err != nil {
				failed = true
				if !warned {
					warned = true
					p.opts.Logger.Warn("bufferpool: page cleaner failed; retrying with back-off", "err", err)
				}
			}
		}
		switch {
		case failed:
			backoff = nextCleanerBackoff(backoff)
		case !p.writeFailed():
			backoff, warned = 0, false
		}
		retryAt = time.Now().Add(backoff)
	}
}

// writeFailed reports whether some partition's last write-back failed and
// no write has succeeded since (partition.writeErr).
func (p *Pool) writeFailed() bool {
	for _, part := range p.parts {
		if part.writeErr.Load() != nil {
			return true
		}
	}
	return false
}

// nextCleanerBackoff is the cleaner's wait before its next attempt after
// a pass that failed to write: doubling from 10 ms up to a second (the
// cleaner clears it once no write error stands). A store that cannot
// write (a failed device, a crashed test file system) is retried at most
// once a second instead of every tick: each attempt compresses the page it
// then fails to write, which kept the CPU busy for as long as the pool
// lived. Writes a caller asks for (FlushPages, FlushAll) are not delayed,
// and a reader that needs a frame gets the write error at once
// (allocFrame).
func nextCleanerBackoff(prev time.Duration) time.Duration {
	return min(max(2*prev, 10*time.Millisecond), time.Second)
}

// dictionaryStore is a store that compresses with a dictionary when it has
// one (pagestore.Store.WithDictionary). Write-back passes the pool's codec
// to the store, which substitutes its dictionary's; demotions ask for it
// here, so that an image made in memory is the one the store would write.
type dictionaryStore interface {
	WithDictionary(c codec.Codec) codec.Codec
}

// demotionCodec is the codec a demotion compresses with.
func (p *Pool) demotionCodec() codec.Codec {
	if ds, ok := p.store.(dictionaryStore); ok {
		return ds.WithDictionary(p.codec)
	}
	return p.codec
}

// DefaultCodec is the codec the pool compresses with when Options.Codec is
// nil: the store's, except that zstd at its default level or below is
// used at level 1, which on the pages of real trees compresses as well
// (2.13× against 2.07× on sysbench leaves, 4.45× against 4.50× on JSON
// events) at 1.2-2.3× the speed (docs/BUFFERPOOL.md, "Codec").
func DefaultCodec(store codec.Codec) codec.Codec {
	if store.ID() == codec.Zstd && store.Level() <= 3 {
		if c, err := codec.New(codec.Zstd, 1); err == nil {
			return c
		}
	}
	return store
}

package bufferpool

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
)

// Write-back: the page cleaner and FlushAll write dirty frames to the store.
// A page written back keeps the image it was written as (redundant, while
// it stays unmodified) when frames are under pressure, so its demotion
// later compresses nothing.
//
// Lock rules: flush takes mu only to choose pages (pinning them) and to
// keep an image; it writes each page holding its frame latch shared (so
// the page can neither be evicted, being pinned, nor changed), without mu.
// It takes mu while holding a latch, which the package's order allows.
// cleanIfNeeded takes mu shared for a moment.
//
// Each page written back costs a compression (tens of µs), and the cleaner
// and a checkpoint write thousands in a row; the Go scheduler lets a
// goroutine run up to 10 ms before it preempts it for another runnable
// one. So with the CPUs busy writing back, a commit woken for its lock
// waited for a processor behind them: paced cached updates (15,000
// transactions a second, 2 CPUs) saw commits up to 100–120 ms late, p99
// 23–31 ms. flush and flushPage therefore yield the processor
// (runtime.Gosched), holding no lock, latch or pin, and the
// same commits then measured p99 3.3–3.6 ms (docs/BENCHMARKS.md,
// seventeenth session). flush yields after each batch of up to 16 pages,
// when it holds no pin; flushPage after its page.

// imageWriter is a store that can write a page with a given codec and
// return the stored image (pagestore.Store.WritePageImage). With one, the
// pool compresses write-backs with its own codec and keeps their images.
type imageWriter interface {
	WritePageImage(id PageID, page []byte, c codec.Codec, dst []byte) (pagestore.Image, error)
}

// cleanIfNeeded writes dirty frames back when a reader is waiting for a
// clean frame, when more than the dirty limit of frames are dirty and
// the budget has little room left (new pages will soon need evictions,
// which need clean frames), or while a write error stands. While the data
// fits with room to spare, nothing is written back between checkpoints: a
// page changed by many commits is compressed and written once per
// checkpoint, not once per cleaning.
func (pt *partition) cleanIfNeeded() error {
	pt.mu.RLock()
	frames := max(pt.framesUsed, 16)
	room := pt.roomFor(max(16, frames/8))
	pt.mu.RUnlock()
	limit := int64(pt.pool.opts.DirtyLimit * float64(frames))
	dirty := pt.dirty.Load()
	if dirty == 0 && pt.writeErr.Load() != nil {
		// The pages whose writes failed are gone (freed, or written by
		// FlushPages): the error no longer describes the partition, and
		// left standing it would fail a later allocation at once.
		pt.writeErr.Store(nil)
	}
	// A standing write error is retried (at the cleaner's back-off pace)
	// even with nobody waiting: allocFrame fails at once while it stands,
	// without waiting, so no reader would ever ask.
	if pt.waiting.Load() == 0 && pt.writeErr.Load() == nil && (room || dirty <= limit) {
		return nil
	}
	return pt.flush(false, max(16, frames/8))
}

// flush writes up to limit (all if limit < 0) dirty frames to the store,
// starting at the cleaner's own hand and moving on, a few frames at a time
// so that its pins are short. With wait (FlushAll) it waits for writers
// holding a page, and goes on until no dirty frame is left; without
// (background cleaning) it skips pages in use, and hot inner pages unless
// a reader waits for a clean frame or a write error stands (hotDirty).
// The caller must not hold a page of the pool when wait is set.
func (pt *partition) flush(wait bool, limit int) error {
	type target struct{ f, d int32 }
	const batch = 16
	written := 0
	var err error
	for passes := 0; err == nil && (limit < 0 || written < limit); {
		var todo []target
		// Without a reader waiting for a clean frame, background cleaning
		// leaves hot inner pages dirty (hotDirty): they are not near
		// eviction. While a write error stands it writes them too: no
		// reader waits then (allocFrame fails at once), and a retry that
		// wrote nothing would leave the error standing.
		skipHot := !wait && pt.waiting.Load() == 0 && pt.writeErr.Load() == nil
		pt.mu.Lock()
		n := len(pt.frameDesc)
		scanned := 0
		for ; scanned < n && len(todo) < batch; scanned++ {
			f := int32(pt.cleanHand)
			pt.cleanHand = (pt.cleanHand + 1) % n
			di := pt.frameDesc[f]
			if di < 0 {
				continue
			}
			d := pt.desc(di)
			if d.state.Load() != stFrame || !d.dirty.Load() || (!wait && d.pins.Load() > 0) {
				continue
			}
			if skipHot && pt.hotDirty(d) {
				pt.st.hotSkips.Add(1)
				continue
			}
			d.pins.Add(1)
			d.flushers.Add(1)
			todo = append(todo, target{f, di})
		}
		// In page id order: the store appends them in this order, and
		// neighbouring ids (a sequential load's neighbouring leaves) then
		// lie together for a scan's read-ahead.
		slices.SortFunc(todo, func(a, b target) int { return cmp.Compare(pt.desc(a.d).pageID(), pt.desc(b.d).pageID()) })
		pt.mu.Unlock()
		for _, t := range todo {
			d := pt.desc(t.d)
			if err == nil {
				if wait {
					pt.latches[t.f].RLock()
				} else if !pt.latches[t.f].TryRLock() {
					d.flushers.Add(-1)
					pt.unpin(t.d)
					continue
				}
				// Pinned, the page cannot be evicted; latched shared, it
				// cannot be modified: what we write is what the frame holds.
				if d.dirty.Load() {
					if werr := pt.writeBack(t.d, t.f, wait); werr != nil {
						err = fmt.Errorf("bufferpool: write back page %d: %w", d.pageID(), werr)
					} else {
						written++
					}
				}
				pt.latches[t.f].RUnlock()
			}
			d.flushers.Add(-1)
			pt.unpin(t.d)
		}
		// Between batches, holding no pin (a pinned page cannot be
		// evicted, and a free of a page being flushed waits for it): see
		// the top of this file.
		runtime.Gosched()
		if len(todo) < batch {
			// A whole revolution found fewer than a batch.
			passes++
			if !wait || pt.dirty.Load() == 0 || passes > 1000 {
				break
			}
		}
	}
	if err != nil {
		pt.writeErr.Store(&err)
	} else if written > 0 {
		pt.writeErr.Store(nil)
	}
	pt.mu.Lock()
	close(pt.cleaned)
	pt.cleaned = make(chan struct{})
	pt.mu.Unlock()
	return err
}

// hotDirty reports whether dirty page d is hot: an inner page the
// eviction hand protects (innerProtected), on the path of every lookup
// below it. The background cleaner writes such a page only for a reader
// waiting for a clean frame: it is not going to be evicted, and it will
// likely be changed again first, so writing it now costs a compression
// and a store write that its next change makes garbage. With data 8× the
// memory and random updates, the parents of the leaves that commits copy
// were changed again within milliseconds of each write: the pool wrote
// 5.1 pages a transaction for 3 leaves changed. Leaves are written as
// before, used lately or not: a leaf a sequential insert has filled is
// used lately and never changed again, and leaving such leaves to the
// checkpoint made inserts 13% slower (docs/BENCHMARKS.md). Checkpoints
// (FlushAll) write every dirty page. Called with mu held.
func (pt *partition) hotDirty(d *desc) bool {
	return pt.innerProtected(d)
}

// flushPage writes page id back if it is in a frame and dirty, waiting for
// a writer holding it (as FlushAll does). A page in transit (loading, or
// being demoted: only clean frames are) is waited for and looked at again.
// Takes mu to look the page up and pin it, and the frame latch shared
// (without mu) to write it.
func (pt *partition) flushPage(id PageID) error {
	for {
		pt.mu.RLock()
		di, ok := pt.table.lookup(id)
		if !ok {
			pt.mu.RUnlock()
			return nil
		}
		d := pt.desc(di)
		switch d.state.Load() {
		case stFrame:
		case stLoading, stDemoting:
			pt.waitLoadDone()
			continue
		default:
			pt.mu.RUnlock()
			return nil // an image, or free: nothing dirty in a frame
		}
		if !d.dirty.Load() {
			pt.mu.RUnlock()
			return nil
		}
		d.pins.Add(1)
		d.flushers.Add(1)
		f := d.frame.Load()
		pt.mu.RUnlock()
		pt.latches[f].RLock()
		var err error
		if d.dirty.Load() {
			if werr := pt.writeBack(di, f, true); werr != nil {
				err = fmt.Errorf("bufferpool: write back page %d: %w", id, werr)
			}
		}
		pt.latches[f].RUnlock()
		d.flushers.Add(-1)
		pt.unpin(di)
		runtime.Gosched() // see the top of this file
		if err == nil {
			pt.writeErr.Store(nil) // a write succeeded (see Pool.writeFailed)
		}
		return err
	}
}

// writeBack writes dirty page di from frame f (pinned, latched shared) to
// the store and marks it clean, keeping the image it was written as. It
// counts the write as FlushAll's (flushAll) or the cleaner's.
func (pt *partition) writeBack(di, f int32, flushAll bool) error {
	d := pt.desc(di)
	iw, ok := pt.pool.store.(imageWriter)
	if !ok {
		if _, _, err := pt.pool.store.WritePage(d.pageID(), pt.frameData(f)); err != nil {
			return err
		}
		pt.markClean(d, flushAll)
		return nil
	}
	bp := pt.pool.getScratch()
	img, err := iw.WritePageImage(d.pageID(), pt.frameData(f), pt.pool.codec, (*bp)[:0])
	defer pt.pool.putScratch(bp, img.Data)
	if err != nil {
		return err
	}
	pt.markClean(d, flushAll)
	pt.mu.Lock()
	if d.state.Load() == stFrame && !d.dirty.Load() {
		pt.keepImage(di, img.Data, img.Codec)
	}
	pt.mu.Unlock()
	return nil
}

func (pt *partition) markClean(d *desc, flushAll bool) {
	if d.dirty.Swap(false) {
		pt.dirty.Add(-1)
	}
	if flushAll {
		pt.st.checkpointWrites.Add(1)
	} else {
		pt.st.flushes.Add(1)
	}
}

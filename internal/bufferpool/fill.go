package bufferpool

import (
	"time"

	"github.com/stratadb/strata/internal/pagestore"
)

// The images' fill: while pages miss and the compressed tier has room (the
// budget is not full, or the images hold less than their share R), a
// background goroutine reads pages that are in neither tier from the
// store, in page id order, with extent reads (pagestore.Store.ReadImages:
// several records a read), and keeps them as images, as read-ahead does.
//
// Without it the compressed tier fills one miss at a time: after an open,
// and each time the controller raises R, a page comes back into memory
// only when it is asked for, so with data that fits in memory compressed
// the last pages of a uniform workload keep missing long after the rest
// are in (the coupon collector's tail; measured: events at 2× the memory
// still missed 1% of reads 15 s after the open, docs/BENCHMARKS.md). The
// fill reads them in large, mostly sequential reads instead: a 64 KiB read
// costs about what a 4 KiB one does on the benchmark's disk.
//
// It never evicts to make room: an image is kept only where memory is free
// or the images are below their share (memory the frames hold beyond
// theirs, which they give back as images need it anyway). Pages it keeps
// enter the image CLOCK cold, marked as read ahead, so their hits are not
// controller inputs and those evicted unused are counted. It runs only
// while accesses miss (a pool whose data is cached does nothing), reads at
// most fillBatches × fillBatch page ids a tick, and after a pass over all
// ids that kept less than one page in a hundred it rests for fillRest.
//
// Lock rules: fillStep runs in its own goroutine and holds no lock across
// a store read; it reads each partition's memory under the partition's
// shared lock, and keeps pages through installImage (the partition's
// mutex, then the store's).

const (
	fillBatch   = 128 // page ids a store read is asked for (ReadImages)
	fillBatches = 8   // reads a tick, at most
	fillRest    = 10 * time.Second
)

// idLimiter is a store that says how far its page ids go
// (pagestore.Store.PageIDLimit).
type idLimiter interface {
	PageIDLimit() PageID
}

// filler is the fill's state, owned by its goroutine.
type filler struct {
	next       PageID // the next page id to look at
	passKept   int    // pages kept since the pass began
	passPages  int    // pages looked at since the pass began
	restUntil  time.Time
	seenMisses int64 // the partitions' misses at the last tick (fillLoop)
	ids        []PageID
}

// fillLoop runs the fill every controller interval until Close.
func (p *Pool) fillLoop() {
	defer p.done.Done()
	tick := time.NewTicker(p.opts.ControllerInterval)
	defer tick.Stop()
	var f filler
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
			var misses int64
			for _, pt := range p.parts {
				misses += pt.st.misses.Load()
			}
			if misses > f.seenMisses {
				p.fillStep(&f, time.Now())
			}
			f.seenMisses = misses
		}
	}
}

// fillStep makes one tick's reads, if some partition's images have room,
// and returns the pages it kept.
func (p *Pool) fillStep(f *filler, now time.Time) int {
	er, ok := p.store.(extentReader)
	lim, ok2 := p.store.(idLimiter)
	if !ok || !ok2 || p.closed.Load() || now.Before(f.restUntil) || !p.imagesHaveRoom() {
		return 0
	}
	limit := lim.PageIDLimit()
	kept := 0
	for range fillBatches {
		if f.next >= limit {
			if f.passPages > 0 && f.passKept*100 < f.passPages {
				f.restUntil = now.Add(fillRest)
			}
			f.next, f.passKept, f.passPages = 0, 0, 0
			if now.Before(f.restUntil) {
				break
			}
		}
		f.ids = f.ids[:0]
		end := min(limit, f.next+fillBatch)
		for id := f.next; id < end; id++ {
			if _, cached := p.partFor(id).table.lookup(id); !cached {
				f.ids = append(f.ids, id)
			}
		}
		f.passPages += int(end - f.next)
		f.next = end
		if len(f.ids) == 0 {
			continue
		}
		n := 0
		reads, _ := er.ReadImages(f.ids, func(id PageID, img pagestore.Image, at pagestore.Stamp) {
			if p.partFor(id).installImage(er, id, img, at, false) {
				n++
			}
		})
		if reads > 0 {
			p.parts[0].st.fillReads.Add(int64(reads))
		}
		kept += n
		f.passKept += n
		if !p.imagesHaveRoom() {
			break
		}
	}
	return kept
}

// imagesHaveRoom reports whether some partition's images could take a
// page without evicting anything (fillRoom).
func (p *Pool) imagesHaveRoom() bool {
	for _, pt := range p.parts {
		pt.mu.RLock()
		room := pt.fillRoom()
		pt.mu.RUnlock()
		if room {
			return true
		}
	}
	return false
}

// fillRoom reports whether an image of a page fits without evicting
// anything: memory is free, or the images are below their share (the
// frames then give memory back). Called with mu held (shared is enough).
func (pt *partition) fillRoom() bool {
	if pt.imagesOff() {
		return false
	}
	return pt.resident()+osPageSize <= pt.avail || pt.imageBytes()+osPageSize <= pt.imageShare
}

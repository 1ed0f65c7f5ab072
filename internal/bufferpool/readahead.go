package bufferpool

import (
	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
)

// Read-ahead: pages a caller will use soon (a range scan's next leaves,
// named by their parent) read from the store together, and kept as images
// in the compressed tier until they are used.
//
// The store merges records that lie close together in a segment into one
// read (pagestore.Store.ReadImages), so a scan whose leaves were written
// together pays one disk read for several of them where it paid one each.
// The pages enter the compressed tier as they are stored: no compression,
// and their memory is the images' (a page read ahead but never used is
// evicted like any image, cold). The use that follows promotes the image:
// a compressed hit, counted also in ReadAheadHits, and kept out of the
// controller's inputs (ghost hits, the depth histogram, hits on
// compressed demotions): read-ahead hits would come whatever R is.
//
// A page is read ahead only if it is in neither tier. Between the look and
// the installation, another goroutine may read the page, change it, write
// it back and evict it; so the image is installed only if the page is
// still not cached and the record read is still the page's newest in the
// store (Store.IsCurrent).
//
// Lock rules: ReadAhead looks pages up without a lock (as tryHit does) and
// reads the store holding no lock; installReadAhead takes the partition
// mutex, and under it the store's lock shared (IsCurrent): the order is
// partition mutex, then store, never the reverse.

// extentReader is a store that reads several pages' records at once
// (pagestore.Store). Read-ahead needs one; over another store (a flash
// cache wrapping the page store) it does nothing.
type extentReader interface {
	ReadImages(ids []PageID, fn func(id PageID, img pagestore.Image, at pagestore.Stamp)) (int, error)
	IsCurrent(id PageID, at pagestore.Stamp) bool
}

// ReadAhead reads the pages of ids that are in neither tier from the
// store, with as few reads as their places allow, and keeps them as
// images for uses that follow soon. It returns how many pages it brought
// in. Errors are not returned: a page not read ahead is read by its use,
// which reports them. ids is not kept. It does nothing where images
// cannot be kept: R too small for any, or a store that compresses nothing
// (pages stored uncompressed, or that did not compress, are read by their
// use as before). The caller must keep ids from being freed meanwhile
// (as a cursor does, holding a version that reaches them); FreePage also
// drops an image read ahead while it ran.
func (p *Pool) ReadAhead(ids []PageID) int {
	er, ok := p.store.(extentReader)
	if !ok || p.closed.Load() || !p.imagesPossible() {
		return 0
	}
	var wantBuf [32]PageID
	want := wantBuf[:0]
	for _, id := range ids {
		if id > pagestore.MaxPageID {
			continue
		}
		if _, cached := p.partFor(id).table.lookup(id); !cached {
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return 0
	}
	installed := 0
	reads, _ := er.ReadImages(want, func(id PageID, img pagestore.Image, at pagestore.Stamp) {
		if p.partFor(id).installReadAhead(er, id, img, at) {
			installed++
		}
	})
	if reads > 0 {
		p.parts[0].st.raReads.Add(int64(reads))
	}
	return installed
}

// imagesPossible reports whether the pool may keep images at all: R gives
// the images room for some (as partition.imagesOff) and the store
// compresses.
func (p *Pool) imagesPossible() bool {
	if p.store.Codec().ID() == codec.None {
		return false
	}
	share := p.Share() * float64(p.opts.CacheSize) / float64(len(p.parts))
	return share >= float64(2*p.pageSize)
}

// installReadAhead keeps img, page id's stored image read at stamp at, as
// the page's image (read ahead: see desc.readAhead), unless the page is
// cached or has changed in the store since, or the images have no room
// (made as for any image: images are evicted if they are over their
// share). It reports whether it kept the image.
func (pt *partition) installReadAhead(er extentReader, id PageID, img pagestore.Image, at pagestore.Stamp) bool {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if _, cached := pt.table.lookup(id); cached || pt.imagesOff() || img.Codec == codec.None || len(img.Data) == 0 || len(img.Data) >= pt.ps {
		return false
	}
	if !er.IsCurrent(id, at) {
		return false
	}
	if pt.images+pt.redundant >= pt.maxImages && !pt.evictImage() {
		return false
	}
	if len(pt.freeDescs) == 0 {
		// The new descriptors' metadata is paid for as a frame's would
		// be (allocFrame): free frames first, then room made as for an
		// image.
		pt.growDescs()
		pt.shedToBudget()
		for pt.resident() > pt.avail && pt.roomForImage() {
		}
	}
	di, d := pt.allocDesc(id)
	d.state.Store(stImage)
	if !pt.attachImage(di, img.Data, img.Codec, false) {
		pt.retire(di)
		return false
	}
	d.readAhead = true
	pt.st.raPages.Add(1)
	return true
}

// dropReadAhead drops page id if it is held only as an unused image read
// ahead (FreePage, after the store freed the page: such an image may have
// been kept between the pool's drop and the store's free). Anything else
// under the id (a new page that reuses it) stays. It looks under the
// partition's lock, which installReadAhead holds from its IsCurrent check
// to the image's insertion: either the image is in by then or that check
// saw the free (a look without the lock could miss an image about to go
// in, which then stayed: a freed page readable at its old version).
func (pt *partition) dropReadAhead(id PageID) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	di, ok := pt.table.lookup(id)
	if !ok {
		return
	}
	d := pt.desc(di)
	if d.state.Load() != stImage || !d.readAhead || d.pins.Load() > 0 {
		return
	}
	pt.dropImage(d, false)
	pt.retire(di)
}

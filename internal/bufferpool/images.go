package bufferpool

import "github.com/stratadb/strata/internal/codec"

// The compressed tier: images stored as chains of 512-byte chunks in the
// chunk arena, their CLOCK ring, and their eviction.
//
// An image is either the only copy of a page (state stImage: "sole") or a
// redundant copy of a page that is also in a frame, unmodified since it was
// read or written back (state stFrame with chunk ≥ 0). Redundant images
// make demotion free; when the images need room they go first, except those
// of frames whose demotion is near (reference bit clear), which the hand
// passes over once.
//
// Chunks are allocated in resident OS pages with free chunks first (lowest
// page first), then in untouched pages. An OS page whose chunks are all
// free is given back to the kernel at once. compactChunks moves chunks out
// of a partly used page into holes below it, so that shrinking the images
// gives memory back instead of leaving it fragmented.
//
// Lock rules: every function here is called with mu held and returns
// with it held, never releasing it, except readChain, which the loader of
// a page (stLoading) calls without mu on its own image.

// keepImages makes pages keep the image they were read from, written as
// or promoted from (see keepImage). A variable only so that tests can
// make every demotion compress.
var keepImages = true

// chunksPerOSPage is how many chunks share an OS page of the chunk arena.
var chunksPerOSPage = max(osPageSize/chunkSize, 1)

// allocChain allocates a chain of chunks for an image of n bytes, making
// room by the split (roomForImage) until free chunks of resident pages and
// the pages the budget still allows hold it. It returns the first chunk,
// or -1.
func (pt *partition) allocChain(n int, owner int32) int32 {
	need := (n + chunkSize - 1) / chunkSize
	for {
		capacity := pt.residentPages*chunksPerOSPage - pt.chunksUsed
		if room := pt.avail - pt.resident(); room > 0 {
			capacity += room / osPageSize * chunksPerOSPage
		}
		if capacity >= need {
			break
		}
		if !pt.roomForImage() {
			return -1
		}
	}
	first, prev := int32(-1), int32(-1)
	for i := 0; i < need; i++ {
		c := pt.allocChunk()
		pt.chunkNext[c] = -1
		pt.chunkOwner[c] = owner
		if prev >= 0 {
			pt.chunkNext[prev] = c
		} else {
			first = c
		}
		prev = c
	}
	return first
}

// allocChunk takes the lowest free chunk of the lowest resident page with
// one, or of the lowest untouched page; allocChain has checked the budget.
func (pt *partition) allocChunk() int32 {
	pg := pt.partialPages.first()
	if pg < 0 {
		pg = pt.freshPages.first()
		pt.freshPages.remove(pg)
		pt.partialPages.add(pg)
		pt.residentPages++
	}
	c := -1
	for i := pg * chunksPerOSPage; i < (pg+1)*chunksPerOSPage; i++ {
		if pt.chunkFree.has(i) {
			c = i
			break
		}
	}
	pt.chunkFree.remove(c)
	pt.chunksUsed++
	pt.osPageUsed[pg]++
	if int(pt.osPageUsed[pg]) == chunksPerOSPage {
		pt.partialPages.remove(pg)
	}
	return int32(c)
}

// freeChunk frees chunk c, and gives its OS page back to the kernel if
// that was the page's last chunk in use.
func (pt *partition) freeChunk(c int32) {
	pt.chunkFree.add(int(c))
	pt.chunksUsed--
	pg := int(c) / chunksPerOSPage
	if int(pt.osPageUsed[pg]) == chunksPerOSPage {
		pt.partialPages.add(pg)
	}
	pt.osPageUsed[pg]--
	if pt.osPageUsed[pg] == 0 {
		pt.chunks.release(pg*osPageSize, osPageSize)
		pt.partialPages.remove(pg)
		pt.freshPages.add(pg)
		pt.residentPages--
	}
}

func (pt *partition) freeChain(c int32) {
	for c >= 0 {
		next := pt.chunkNext[c]
		pt.freeChunk(c)
		c = next
	}
}

func (pt *partition) writeChain(c int32, img []byte) {
	for len(img) > 0 {
		off := int(c) * chunkSize
		n := copy(pt.chunks.mem[off:off+chunkSize], img)
		img = img[n:]
		c = pt.chunkNext[c]
	}
}

func (pt *partition) readChain(c int32, n int, dst []byte) []byte {
	out := dst[:n]
	for p := out; len(p) > 0; c = pt.chunkNext[c] {
		off := int(c) * chunkSize
		k := copy(p, pt.chunks.mem[off:off+chunkSize])
		p = p[k:]
	}
	return out
}

// compactChunks empties a partly used OS page of the chunk arena, the
// highest it can, by moving its chunks into free chunks of lower pages,
// and so gives it back to the kernel. It does so only if the free chunks
// of lower resident pages can take the page's chunks, and not for a page
// holding a chunk of an image being promoted (read without mu): it then
// tries the next lower partly used page, up to compactTries pages (a
// promotion that holds the highest page would otherwise make every call
// fail, and its caller evict images instead). It reports whether a page
// was released.
func (pt *partition) compactChunks() bool {
	free := pt.residentPages*chunksPerOSPage - pt.chunksUsed
	if free < chunksPerOSPage {
		return false
	}
	above := 0 // free chunks in the pages skipped, above src
	for src, tries := pt.partialPages.last(), 0; src >= 0 && tries < compactTries; src, tries = pt.partialPages.lastBelow(src), tries+1 {
		used := int(pt.osPageUsed[src])
		if free-above-(chunksPerOSPage-used) >= used && !pt.holdsLoadingChunk(src) {
			return pt.emptyOSPage(src)
		}
		above += chunksPerOSPage - used
	}
	return false
}

// compactTries bounds the partly used pages compactChunks looks at, under
// the partition's mutex.
const compactTries = 4

// holdsLoadingChunk reports whether OS page pg of the chunk arena holds a
// chunk of an image being promoted.
func (pt *partition) holdsLoadingChunk(pg int) bool {
	for c := pg * chunksPerOSPage; c < (pg+1)*chunksPerOSPage; c++ {
		if !pt.chunkFree.has(c) && pt.desc(pt.chunkOwner[c]).state.Load() == stLoading {
			return true
		}
	}
	return false
}

// emptyOSPage moves every chunk of OS page src to free chunks of lower
// pages, which the caller found room for, and so releases the page. It
// reports whether it did (false, with some chunks moved, cannot happen).
func (pt *partition) emptyOSPage(src int) bool {
	for c := src * chunksPerOSPage; c < (src+1)*chunksPerOSPage && pt.osPageUsed[src] > 0; c++ {
		if pt.chunkFree.has(c) {
			continue
		}
		if pg := pt.partialPages.first(); pg < 0 || pg >= src {
			return false
		}
		pt.moveChunk(int32(c), pt.allocChunk())
	}
	return true
}

// moveChunk moves the contents of chunk c to the free chunk dst (already
// allocated) and frees c.
func (pt *partition) moveChunk(c, dst int32) {
	di := pt.chunkOwner[c]
	d := pt.desc(di)
	copy(pt.chunks.mem[int(dst)*chunkSize:int(dst+1)*chunkSize], pt.chunks.mem[int(c)*chunkSize:int(c+1)*chunkSize])
	pt.chunkNext[dst] = pt.chunkNext[c]
	pt.chunkOwner[dst] = di
	if d.chunk == c {
		d.chunk = dst
	} else {
		p := d.chunk
		for pt.chunkNext[p] != c {
			p = pt.chunkNext[p]
		}
		pt.chunkNext[p] = dst
	}
	pt.freeChunk(c)
	pt.st.movedChunks.Add(1)
}

// attachImage stores img (codec c) as the image of descriptor di and puts
// it in the image ring, cold. redundant says whether the page is also in a
// frame. It reports false if there was no room.
func (pt *partition) attachImage(di int32, img []byte, c codec.ID, redundant bool) bool {
	first := pt.allocChain(len(img), di)
	if first < 0 {
		return false
	}
	d := pt.desc(di)
	pt.writeChain(first, img)
	d.chunk, d.imgLen, d.codec = first, int32(len(img)), c
	d.hasImage.Store(true)
	if redundant {
		pt.redundant++
	} else {
		pt.images++
		d.ref.Store(false) // a page entering the image CLOCK enters cold
	}
	pt.pushImg(di)
	return true
}

// keepImage keeps img, which page di (in a frame, unmodified) was just read
// from or written as, as its redundant image, when that is likely to pay:
// frames are being evicted (so its demotion is likely, and will then
// compress nothing) and the images' share can hold a copy of every frame
// (copiesFit). A memcpy here replaces a compression at demotion.
func (pt *partition) keepImage(di int32, img []byte, c codec.ID) {
	if !keepImages || c == codec.None || len(img) == 0 || len(img) >= pt.ps || !pt.underPressure() || pt.imagesOff() || !pt.copiesFit() {
		return
	}
	if pt.desc(di).chunk >= 0 {
		return
	}
	if pt.attachImage(di, img, c, true) {
		pt.desc(di).compressed = false
		pt.st.keptImages.Add(1)
	}
}

// dropImage frees the image of descriptor d, which is counted as
// redundant (the page is in a frame) or not.
func (pt *partition) dropImage(d *desc, redundant bool) {
	if d.chunk < 0 {
		return
	}
	pt.freeChain(d.chunk)
	d.chunk, d.imgLen = -1, 0
	d.hasImage.Store(false)
	d.compressed = false
	if redundant {
		pt.redundant--
	} else {
		pt.images--
	}
}

// pushImg puts descriptor di's image at the tail of the ring with a new
// generation, which makes any older entry of it stale.
func (pt *partition) pushImg(di int32) {
	d := pt.desc(di)
	d.gen++
	pt.pushRef(imgRef{di, d.gen})
}

func (pt *partition) popImg() imgRef {
	r := pt.imgRing[pt.imgHead]
	pt.imgHead++
	if pt.imgHead == len(pt.imgRing) {
		pt.imgHead = 0
	}
	pt.imgLen--
	return r
}

// live reports whether ring entry r still names an image.
func (pt *partition) live(r imgRef) bool {
	d := pt.desc(r.d)
	if d.gen != r.gen || d.chunk < 0 {
		return false
	}
	st := d.state.Load()
	return st == stImage || st == stFrame
}

// pushRef appends r to the ring. The ring has room for more images than
// the partition can hold; when stale entries fill it, they are squeezed
// out first.
func (pt *partition) pushRef(r imgRef) {
	if pt.imgLen == len(pt.imgRing) {
		for n := pt.imgLen; n > 0; n-- {
			if e := pt.popImg(); pt.live(e) {
				pt.pushRef(e)
			}
		}
	}
	pt.imgRing[(pt.imgHead+pt.imgLen)%len(pt.imgRing)] = r
	pt.imgLen++
}

// evictImage runs the image CLOCK and drops one image: a redundant image
// of a frame in use (reference bit set) or a sole image whose reference
// bit is clear (second chance otherwise; a sole image pinned by a loader
// about to promote it stays). Redundant images of frames about
// to be evicted are passed over once: their demotion is near and will then
// cost nothing. It reports whether it dropped an image.
func (pt *partition) evictImage() bool {
	for tries, firstPass := 2*pt.imgLen, pt.imgLen; tries > 0 && pt.imgLen > 0; tries-- {
		r := pt.popImg()
		if !pt.live(r) {
			continue // stale: promoted, demoted again or dropped since
		}
		d := pt.desc(r.d)
		if d.state.Load() == stFrame {
			if !d.ref.Load() && tries > firstPass {
				pt.pushRef(r)
				continue
			}
			pt.dropImage(d, true)
			pt.ghostC.add(d.pageID())
			pt.st.evictRedundant.Add(1)
			pt.st.ctlImageEvictions.Add(1)
			return true
		}
		if d.pins.Load() > 0 || d.ref.Swap(false) {
			pt.pushRef(r) // second chance, or about to be promoted
			continue
		}
		pt.offerImage(d)
		pt.dropImage(d, false)
		pt.ghostC.add(d.pageID())
		pt.retire(r.d)
		pt.st.evictImages.Add(1)
		pt.st.ctlImageEvictions.Add(1)
		return true
	}
	return false
}

package bufferpool

import (
	"encoding/binary"
	"math/bits"
)

// The image arena: where the compressed tier's images live.
//
// The arena is divided into granules, 64 to an OS page (64 bytes with
// 4 KiB OS pages). An image occupies one extent: a run of contiguous
// granules, which may cross OS pages. Its first extentHeader bytes name the
// descriptor that owns it, so that compaction can find whose extent it
// moves; the image's bytes follow. An image of n bytes so takes n + 4
// bytes rounded up to a granule: a 770-byte image (a 4 KiB JSON page)
// takes 832 bytes, where chains of 512-byte chunks took 1,024.
//
// The bookkeeping is two bits per granule, one 64-bit word per OS page:
// granFree (the granule is free) and granStart (an extent starts at it).
// Extents are placed first-fit, at the lowest run of free granules in
// resident OS pages or, when the budget allows new memory, at the lowest
// run that may also cover OS pages not yet backed by memory. Placing low
// keeps the extents packed at the start of the arena. An OS page whose
// granules are all free goes back to the kernel at once; compactImages
// moves the extents of a partly used page into holes below it, so that
// shrinking the images gives memory back instead of leaving it fragmented.
//
// Lock rules: every function here is called with mu held and returns with
// it held, never releasing it, except imageData, which the loader of a page
// (stLoading) calls without mu on its own image: compaction does not move
// the extent of a loading page (holdsLoadingExtent) and eviction does not
// drop a pinned image, so the bytes stay in place.

// granulesPerPage is the number of granules per OS page: one word of each
// bitmap.
const granulesPerPage = 64

// extentHeader is the size of an extent's header: the owner's descriptor
// index, little-endian.
const extentHeader = 4

// granuleSize is the unit of image memory.
var granuleSize = osPageSize / granulesPerPage

// maxImageBytes bounds the number of images a partition may hold: one per
// maxImageBytes of its budget. The image ring and the descriptor slots are
// sized for that many; a partition holding that many images evicts one
// before it attaches another (attachImage). Only images smaller than this
// on average (pages compressed more than 8× at 4 KiB) meet the bound.
const maxImageBytes = 512

// extentGranules is the number of granules an image of n bytes occupies.
func extentGranules(n int) int {
	return (n + extentHeader + granuleSize - 1) / granuleSize
}

// allocExtent allocates an extent for an image of n bytes owned by
// descriptor owner and returns its first granule, or -1 if no room could
// be made. It places the extent in free granules of resident OS pages, or
// in new memory the budget allows; failing both, it compacts the arena
// when enough granules are free but scattered, and otherwise makes room by
// the split (roomForImage).
func (pt *partition) allocExtent(n int, owner int32) int32 {
	k := extentGranules(n)
	for {
		fresh := 0
		if room := pt.avail - pt.resident(); room > 0 {
			fresh = room / osPageSize
		}
		if g := pt.findRun(k, fresh, len(pt.granFree)); g >= 0 {
			pt.takeRun(g, k)
			binary.LittleEndian.PutUint32(pt.imgArena.mem[g*granuleSize:], uint32(owner))
			return int32(g)
		}
		if pt.freeGranules() >= k && pt.compactImages() {
			continue
		}
		if !pt.roomForImage() {
			return -1
		}
	}
}

// freeGranules is the number of free granules in resident OS pages.
func (pt *partition) freeGranules() int {
	return pt.residentPages*granulesPerPage - pt.granulesUsed
}

// imageUsed is the memory of the extents in use.
func (pt *partition) imageUsed() int { return pt.granulesUsed * granuleSize }

// findRun returns the first granule of the lowest run of k free granules
// that lies below OS page limit and covers at most fresh OS pages not
// backed by memory, or -1.
func (pt *partition) findRun(k, fresh, limit int) int {
	begin := pt.partialPages.first()
	if fresh > 0 {
		if f := pt.freshPages.first(); f >= 0 && (begin < 0 || f < begin) {
			begin = f
		}
	}
	if begin < 0 {
		return -1
	}
	runStart, runLen, freshInRun := 0, 0, 0 // the free run reaching the current page
	for pg := begin; pg < limit; pg++ {
		w := pt.granFree[pg]
		isFresh := pt.freshPages.has(pg)
		if isFresh && fresh == 0 {
			runLen = 0
			continue
		}
		if w == ^uint64(0) { // a whole page free: the run goes on
			if runLen == 0 {
				runStart, freshInRun = pg*granulesPerPage, 0
			}
			if isFresh {
				// Too many new pages: the run starts after its first.
				for freshInRun++; freshInRun > fresh; freshInRun-- {
					p := runStart / granulesPerPage
					for !pt.freshPages.has(p) {
						p++
					}
					runStart = (p + 1) * granulesPerPage
				}
			}
			if runLen = (pg+1)*granulesPerPage - runStart; runLen >= k {
				return runStart
			}
			continue
		}
		// A partly used page: the run reaching it may end in its first
		// free granules; else a run inside it; else the run its last free
		// granules begin.
		if runLen > 0 && runLen+bits.TrailingZeros64(^w) >= k {
			return runStart
		}
		if k <= granulesPerPage {
			if x := runStarts(w, k); x != 0 {
				return pg*granulesPerPage + bits.TrailingZeros64(x)
			}
		}
		tail := bits.LeadingZeros64(^w)
		runStart, runLen, freshInRun = (pg+1)*granulesPerPage-tail, tail, 0
	}
	return -1
}

// runStarts returns the bits of w at which k (1..64) set bits in a row
// begin, within w.
func runStarts(w uint64, k int) uint64 {
	for n := 1; n < k; {
		s := min(n, k-n)
		w &= w >> s
		n += s
	}
	return w
}

// rangeMask is the mask of bits lo..hi-1 of a word (0 ≤ lo < hi ≤ 64).
func rangeMask(lo, hi int) uint64 {
	if hi-lo == 64 {
		return ^uint64(0)
	}
	return (1<<(hi-lo) - 1) << lo
}

// takeRun marks the k granules from g used, as an extent.
func (pt *partition) takeRun(g, k int) {
	pt.markRun(g, k, false)
	pt.granStart[g/granulesPerPage] |= 1 << (g % granulesPerPage)
	pt.granulesUsed += k
}

// freeRun frees the extent of k granules at g.
func (pt *partition) freeRun(g, k int) {
	pt.granStart[g/granulesPerPage] &^= 1 << (g % granulesPerPage)
	pt.granulesUsed -= k
	pt.markRun(g, k, true)
}

// markRun marks the k granules from g free or used and keeps the OS
// pages' sets in step: a page whose first granule is taken becomes
// resident, and a page whose last granule is freed goes back to the kernel.
func (pt *partition) markRun(g, k int, free bool) {
	for pg := g / granulesPerPage; pg*granulesPerPage < g+k; pg++ {
		base := pg * granulesPerPage
		m := rangeMask(max(g, base)-base, min(g+k, base+granulesPerPage)-base)
		if !free {
			if pt.freshPages.has(pg) {
				pt.freshPages.remove(pg)
				pt.residentPages++
			}
			pt.granFree[pg] &^= m
			if pt.granFree[pg] == 0 {
				pt.partialPages.remove(pg)
			} else {
				pt.partialPages.add(pg)
			}
			continue
		}
		pt.granFree[pg] |= m
		if pt.granFree[pg] == ^uint64(0) {
			pt.imgArena.release(pg*osPageSize, osPageSize)
			pt.partialPages.remove(pg)
			pt.freshPages.add(pg)
			pt.residentPages--
		} else {
			pt.partialPages.add(pg)
		}
	}
}

// allocImage stores img in a new extent owned by descriptor owner and
// returns its first granule, or -1 if no room could be made.
func (pt *partition) allocImage(img []byte, owner int32) int32 {
	g := pt.allocExtent(len(img), owner)
	if g >= 0 {
		off := int(g)*granuleSize + extentHeader
		copy(pt.imgArena.mem[off:off+len(img)], img)
	}
	return g
}

// freeImage frees the extent at g of an image of n bytes.
func (pt *partition) freeImage(g int32, n int) {
	pt.freeRun(int(g), extentGranules(n))
}

// imageData returns the n bytes of the image whose extent starts at g, in
// place in the arena: valid until the extent is freed or moved.
func (pt *partition) imageData(g int32, n int) []byte {
	off := int(g)*granuleSize + extentHeader
	return pt.imgArena.mem[off : off+n : off+n]
}

// extentOwner returns the descriptor that owns the extent starting at g.
func (pt *partition) extentOwner(g int) int32 {
	return int32(binary.LittleEndian.Uint32(pt.imgArena.mem[g*granuleSize:]))
}

// extentAt returns the first granule of the extent that holds used granule
// g.
func (pt *partition) extentAt(g int) int {
	wi := g / granulesPerPage
	w := pt.granStart[wi] & rangeMask(0, g%granulesPerPage+1)
	for w == 0 {
		wi--
		w = pt.granStart[wi]
	}
	return wi*granulesPerPage + 63 - bits.LeadingZeros64(w)
}

// firstExtentIn returns the first granule of the lowest extent that
// covers a granule of OS page pg, which must have a used granule.
func (pt *partition) firstExtentIn(pg int) int {
	return pt.extentAt(pg*granulesPerPage + bits.TrailingZeros64(^pt.granFree[pg]))
}

// compactImages empties a partly used OS page of the arena, the highest it
// can, by moving its extents into free granules of lower pages, and so
// gives the page back to the kernel. It tries only a page whose used
// granules the free granules of the pages below could take, and not one
// holding the extent of an image being promoted (read without mu): it then
// tries the next lower partly used page, up to compactTries pages (a
// promotion that holds the highest page would otherwise make every call
// fail, and its caller evict images instead). It reports whether a page
// was released.
func (pt *partition) compactImages() bool {
	free := pt.freeGranules()
	if free < granulesPerPage {
		return false
	}
	above := 0 // free granules in the pages skipped, above src
	for src, tries := pt.partialPages.last(), 0; src >= 0 && tries < compactTries; src, tries = pt.partialPages.lastBelow(src), tries+1 {
		unused := bits.OnesCount64(pt.granFree[src])
		used := granulesPerPage - unused
		if free-above-unused >= used && !pt.holdsLoadingExtent(src) {
			return pt.emptyOSPage(src)
		}
		above += unused
	}
	return false
}

// compactTries bounds the partly used pages compactImages looks at, under
// the partition's mutex.
const compactTries = 4

// holdsLoadingExtent reports whether OS page pg of the arena holds a
// granule of an image being promoted.
func (pt *partition) holdsLoadingExtent(pg int) bool {
	end := (pg + 1) * granulesPerPage
	for g := pt.firstExtentIn(pg); g < end; {
		d := pt.desc(pt.extentOwner(g))
		if d.state.Load() == stLoading {
			return true
		}
		g = pt.nextExtent(g+extentGranules(int(d.imgLen)), end)
	}
	return false
}

// nextExtent returns the first extent start at or after granule g and
// before end, or end.
func (pt *partition) nextExtent(g, end int) int {
	for g < end {
		wi := g / granulesPerPage
		if w := pt.granStart[wi] &^ rangeMaskBelow(g%granulesPerPage); w != 0 {
			return min(wi*granulesPerPage+bits.TrailingZeros64(w), end)
		}
		g = (wi + 1) * granulesPerPage
	}
	return end
}

// rangeMaskBelow is the mask of bits 0..n-1 (0 ≤ n < 64).
func rangeMaskBelow(n int) uint64 { return 1<<n - 1 }

// emptyOSPage moves every extent covering OS page src into free granules
// of lower resident pages, and so releases the page. It reports whether it
// did; if a move finds no room it stops, with the extents moved so far in
// their new places.
func (pt *partition) emptyOSPage(src int) bool {
	for pt.granFree[src] != ^uint64(0) {
		if !pt.moveExtent(pt.firstExtentIn(src), src) {
			return false
		}
	}
	return true
}

// moveExtent moves the extent at g into the lowest run of free granules
// of resident pages below OS page limit, and frees it. It reports false
// if there was no such run.
func (pt *partition) moveExtent(g, limit int) bool {
	di := pt.extentOwner(g)
	d := pt.desc(di)
	k := extentGranules(int(d.imgLen))
	dst := pt.findRun(k, 0, limit)
	if dst < 0 {
		return false
	}
	pt.takeRun(dst, k)
	copy(pt.imgArena.mem[dst*granuleSize:(dst+k)*granuleSize], pt.imgArena.mem[g*granuleSize:(g+k)*granuleSize])
	d.imgAt = int32(dst)
	pt.freeRun(g, k)
	pt.st.movedImages.Add(1)
	return true
}

package bufferpool

import (
	"encoding/binary"
	"math/bits"
)

// The image arena: where the compressed tier's images live.
//
// The arena is divided into granules, 64 to an OS page (64 bytes with
// 4 KiB OS pages). An image is stored in pieces: runs of contiguous free
// granules within one OS page, linked in order. Each piece begins with a
// pieceHeader: the descriptor that owns it (so that compaction can find
// whose piece it moves), the first granule of the next piece (-1 for the
// last), and how many of the image's bytes it holds, which follow. An image
// usually takes one or two pieces. As allocImage writes them, every piece
// but the last is full, so n bytes in p pieces take n + 10p bytes rounded
// up to a granule: a 770-byte image (a 4 KiB JSON page) takes 832 bytes,
// where chains of 512-byte chunks took 1,024. (Compaction may leave
// several pieces partly filled.)
//
// The bookkeeping is two bits per granule, one 64-bit word per OS page:
// granFree (the granule is free) and granStart (a piece starts at it).
// Any free granule can hold part of an image, so allocation never waits
// for a hole of the right size (which made a first-fit search of
// contiguous extents take half the CPU at 1.5× the memory): it takes the
// free runs of the lowest resident OS pages with a free granule, in
// address order, then OS pages not yet backed by memory as far as the
// budget allows. Placing low keeps the images packed at the start of the
// arena. An OS page whose granules are all free goes back to the kernel
// at once; compactImages moves the pieces of a partly used page into free
// granules below it, so that shrinking the images gives memory back
// instead of leaving it fragmented.
//
// Lock rules: every function here is called with mu held and returns with
// it held, never releasing it, except readImage, which the loader of a
// page (stLoading) calls without mu on its own image: compaction does not
// move a piece of a loading page (holdsLoadingPiece) and eviction does not
// drop a pinned image, so the pieces stay in place.

// granulesPerPage is the number of granules per OS page: one word of each
// bitmap.
const granulesPerPage = 64

// pieceHeader is the size of a piece's header: owner (int32), next
// (int32), and the bytes of the image it holds (uint16), little-endian.
const pieceHeader = 10

// granuleSize is the unit of image memory.
var granuleSize = osPageSize / granulesPerPage

// maxImageBytes bounds the number of images a partition may hold: one per
// maxImageBytes of its budget. The image ring and the descriptor slots are
// sized for that many; a partition holding that many images evicts one
// before it attaches another (attachImage). Only images smaller than this
// on average (pages compressed more than 8× at 4 KiB) meet the bound.
const maxImageBytes = 512

// piece is a run of granules planned for part of an image.
type piece struct{ g, k int32 }

// allocImage stores img in pieces owned by descriptor owner and returns
// the first piece's granule, or -1 if no room could be made. It takes free
// granules of resident OS pages, then new memory the budget allows, and
// failing both makes room by the split (roomForImage).
func (pt *partition) allocImage(img []byte, owner int32) int32 {
	if len(img) == 0 {
		return -1 // attachImage keeps no empty image; a plan needs a piece
	}
	for {
		fresh := 0
		if room := pt.avail - pt.resident(); room > 0 {
			fresh = room / osPageSize
		}
		if pt.planPieces(len(img), fresh, len(pt.granFree)) {
			break
		}
		if !pt.roomForImage() {
			return -1
		}
	}
	pt.writePieces(pt.plan, owner, img, -1)
	return pt.plan[0].g
}

// planPieces plans pieces (pt.plan) holding n bytes: the free runs of
// resident OS pages below limit, lowest first, then up to fresh OS pages
// not backed by memory. It reports whether they hold n bytes.
func (pt *partition) planPieces(n, fresh, limit int) bool {
	pt.plan = pt.plan[:0]
	if (pt.freeGranules()+fresh*granulesPerPage)*granuleSize-pieceHeader < n {
		return false // not even in one piece
	}
	need := n
	for pg := pt.partialPages.first(); pg >= 0 && pg < limit && need > 0; pg = pt.partialPages.nextAfter(pg) {
		w := pt.granFree[pg]
		for w != 0 && need > 0 {
			lo := bits.TrailingZeros64(w)
			run := bits.TrailingZeros64(^(w >> lo))
			need = pt.planPiece(pg*granulesPerPage+lo, run, need)
			w &^= rangeMask(lo, lo+run)
		}
	}
	for pg := pt.freshPages.first(); pg >= 0 && pg < limit && need > 0 && fresh > 0; pg = pt.freshPages.nextAfter(pg) {
		need = pt.planPiece(pg*granulesPerPage, granulesPerPage, need)
		fresh--
	}
	return need <= 0
}

// planPiece plans a piece in the first granules of the free run of run
// granules at g, as many as the need bytes left take, and returns the
// bytes left.
func (pt *partition) planPiece(g, run, need int) int {
	k := min(run, (need+pieceHeader+granuleSize-1)/granuleSize)
	pt.plan = append(pt.plan, piece{int32(g), int32(k)})
	return need - (k*granuleSize - pieceHeader)
}

// writePieces takes the planned pieces, links them (the last to next),
// and writes img into them.
func (pt *partition) writePieces(plan []piece, owner int32, img []byte, next int32) {
	for i, p := range plan {
		pt.takeRun(int(p.g), int(p.k))
		link := next
		if i+1 < len(plan) {
			link = plan[i+1].g
		}
		off := int(p.g) * granuleSize
		n := copy(pt.imgArena.mem[off+pieceHeader:off+int(p.k)*granuleSize], img)
		img = img[n:]
		h := pt.imgArena.mem[off : off+pieceHeader]
		binary.LittleEndian.PutUint32(h[0:], uint32(owner))
		binary.LittleEndian.PutUint32(h[4:], uint32(link))
		binary.LittleEndian.PutUint16(h[8:], uint16(n))
	}
}

// pieceAt returns the header of the piece at granule g: its owner, the
// next piece (-1 for none) and the image bytes it holds.
func (pt *partition) pieceAt(g int32) (owner, next int32, n int) {
	h := pt.imgArena.mem[int(g)*granuleSize:]
	return int32(binary.LittleEndian.Uint32(h[0:])), int32(binary.LittleEndian.Uint32(h[4:])), int(binary.LittleEndian.Uint16(h[8:]))
}

// pieceGranules is the length of a piece holding n bytes.
func pieceGranules(n int) int { return (n + pieceHeader + granuleSize - 1) / granuleSize }

// setNext links the piece at granule g to next.
func (pt *partition) setNext(g, next int32) {
	binary.LittleEndian.PutUint32(pt.imgArena.mem[int(g)*granuleSize+4:], uint32(next))
}

// freeImage frees the pieces of the image whose first piece is at g.
func (pt *partition) freeImage(g int32) {
	for g >= 0 {
		_, next, n := pt.pieceAt(g) // before the free: releasing the page zeroes it
		pt.freeRun(int(g), pieceGranules(n))
		g = next
	}
}

// readImage returns the n bytes of the image whose first piece is at g: in
// place in the arena if it has one piece (valid until it is freed or
// moved), else copied into buf (len ≥ n).
func (pt *partition) readImage(g int32, n int, buf []byte) []byte {
	if _, next, _ := pt.pieceAt(g); next < 0 {
		off := int(g)*granuleSize + pieceHeader
		return pt.imgArena.mem[off : off+n : off+n]
	}
	out := buf[:0]
	for g >= 0 {
		_, next, k := pt.pieceAt(g)
		off := int(g)*granuleSize + pieceHeader
		out = append(out, pt.imgArena.mem[off:off+k]...)
		g = next
	}
	return out
}

// freeGranules is the number of free granules in resident OS pages.
func (pt *partition) freeGranules() int {
	return pt.residentPages*granulesPerPage - pt.granulesUsed
}

// imageUsed is the memory of the pieces in use.
func (pt *partition) imageUsed() int { return pt.granulesUsed * granuleSize }

// rangeMask is the mask of bits lo..hi-1 of a word (0 ≤ lo < hi ≤ 64).
func rangeMask(lo, hi int) uint64 {
	if hi-lo == 64 {
		return ^uint64(0)
	}
	return (1<<(hi-lo) - 1) << lo
}

// takeRun marks the k granules from g (within one OS page) used, as a
// piece.
func (pt *partition) takeRun(g, k int) {
	pg, lo := g/granulesPerPage, g%granulesPerPage
	if pt.freshPages.has(pg) {
		pt.freshPages.remove(pg)
		pt.residentPages++
	}
	pt.granFree[pg] &^= rangeMask(lo, lo+k)
	pt.granStart[pg] |= 1 << lo
	pt.granulesUsed += k
	if pt.granFree[pg] == 0 {
		pt.partialPages.remove(pg)
	} else {
		pt.partialPages.add(pg)
	}
}

// freeRun frees the piece of k granules at g, and gives its OS page back
// to the kernel if that was the page's last piece.
func (pt *partition) freeRun(g, k int) {
	pg, lo := g/granulesPerPage, g%granulesPerPage
	pt.granStart[pg] &^= 1 << lo
	pt.granulesUsed -= k
	pt.granFree[pg] |= rangeMask(lo, lo+k)
	if pt.granFree[pg] == ^uint64(0) {
		pt.imgArena.release(pg*osPageSize, osPageSize)
		pt.partialPages.remove(pg)
		pt.freshPages.add(pg)
		pt.residentPages--
	} else {
		pt.partialPages.add(pg)
	}
}

// compactImages empties a partly used OS page of the arena, the highest it
// can, by moving its pieces into free granules of lower pages, and so
// gives the page back to the kernel. It tries only a page whose used
// granules the free granules of the pages below could take, and not one
// holding a piece of an image being promoted (read without mu); if a page
// cannot be emptied it tries the next lower partly used page, up to
// compactTries pages (a promotion that holds the highest page would
// otherwise make every call fail, and its caller evict images instead).
// It reports whether a page was released.
func (pt *partition) compactImages() bool {
	if pt.freeGranules() < granulesPerPage {
		return false
	}
	above := 0 // free granules in the pages skipped, above src
	for src, tries := pt.partialPages.last(), 0; src >= 0 && tries < compactTries; src, tries = pt.partialPages.lastBelow(src), tries+1 {
		unused := bits.OnesCount64(pt.granFree[src])
		used := granulesPerPage - unused
		// The count of free granules below may still not take the page's
		// pieces (a header per run they are split into): then the next
		// page down is tried, with the pieces moved so far kept lower.
		if pt.freeGranules()-above-unused >= used && !pt.holdsLoadingPiece(src) && pt.emptyOSPage(src) {
			return true
		}
		above += bits.OnesCount64(pt.granFree[src]) // src may have fewer pieces now
	}
	return false
}

// compactTries bounds the partly used pages compactImages looks at, under
// the partition's mutex.
const compactTries = 4

// holdsLoadingPiece reports whether OS page pg of the arena holds a piece
// of an image being promoted.
func (pt *partition) holdsLoadingPiece(pg int) bool {
	for w := pt.granStart[pg]; w != 0; w &= w - 1 {
		owner, _, _ := pt.pieceAt(int32(pg*granulesPerPage + bits.TrailingZeros64(w)))
		if pt.desc(owner).state.Load() == stLoading {
			return true
		}
	}
	return false
}

// emptyOSPage moves every piece in OS page src into free granules of
// lower resident pages, and so releases the page. It reports whether it
// did; if a move finds no room it stops, with the pieces moved so far in
// their new places.
func (pt *partition) emptyOSPage(src int) bool {
	for pt.granStart[src] != 0 {
		g := src*granulesPerPage + bits.TrailingZeros64(pt.granStart[src])
		if !pt.movePiece(int32(g), src) {
			return false
		}
	}
	return true
}

// movePiece moves the piece at g into free granules of resident pages
// below OS page limit (in one or more pieces, linked in its place) and
// frees it. It reports false if they cannot hold it.
func (pt *partition) movePiece(g int32, limit int) bool {
	owner, next, n := pt.pieceAt(g)
	if !pt.planPieces(n, 0, limit) {
		return false
	}
	off := int(g)*granuleSize + pieceHeader
	pt.writePieces(pt.plan, owner, pt.imgArena.mem[off:off+n], next)
	if d := pt.desc(owner); d.imgAt == g {
		d.imgAt = pt.plan[0].g
	} else {
		p := d.imgAt
		for {
			_, nx, _ := pt.pieceAt(p)
			if nx == g {
				break
			}
			p = nx
		}
		pt.setNext(p, pt.plan[0].g)
	}
	pt.freeRun(int(g), pieceGranules(n))
	pt.st.movedPieces.Add(1)
	return true
}

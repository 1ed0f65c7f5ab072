package bufferpool

import "github.com/stratadb/strata/internal/codec"

// The compressed tier: images (each in pieces in the image arena,
// image_arena.go), their CLOCK ring, and their eviction.
//
// An image is either the only copy of a page (state stImage: "sole") or a
// redundant copy of a page that is also in a frame, unmodified since it was
// read or written back (state stFrame with imgAt ≥ 0). Redundant images
// make demotion free; when the images need room they go first, except those
// of frames whose demotion is near (reference bit clear), which the hand
// passes over once.
//
// A partition holds at most maxImages images (one per maxImageBytes of its
// budget): the ring and the descriptor slots are sized for that many.
//
// Lock rules: every function here is called with mu held and returns
// with it held, never releasing it.

// keepImages makes pages keep the image they were read from, written as
// or promoted from (see keepImage). A variable only so that tests can
// make every demotion compress.
var keepImages = true

// attachImage stores img (codec c) as the image of descriptor di and puts
// it in the image ring, cold. redundant says whether the page is also in a
// frame. It reports false if there was no room.
func (pt *partition) attachImage(di int32, img []byte, c codec.ID, redundant bool) bool {
	if len(img) == 0 {
		return false // nothing to keep (a custom codec's empty output)
	}
	if pt.images+pt.redundant >= pt.maxImages && !pt.evictImage() {
		return false
	}
	g := pt.allocImage(img, di)
	if g < 0 {
		return false
	}
	d := pt.desc(di)
	d.imgAt, d.imgLen, d.codec = g, int32(len(img)), c
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
	if pt.desc(di).imgAt >= 0 {
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
	if d.imgAt < 0 {
		return
	}
	pt.freeImage(d.imgAt)
	d.imgAt, d.imgLen = -1, 0
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
	if d.gen != r.gen || d.imgAt < 0 {
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
		if d.readAhead {
			// Never used: not a page the compressed tier held for a
			// use, so no controller input.
			pt.st.raUnused.Add(1)
		} else {
			pt.ghostC.add(d.pageID())
			pt.st.ctlImageEvictions.Add(1)
		}
		pt.retire(r.d)
		pt.st.evictImages.Add(1)
		return true
	}
	return false
}

package bufferpool

// The partition's memory: one budget shared by the two tiers.
//
// What counts is resident memory: frames and OS pages of the image arena
// that are backed by memory, plus the metadata. resident() + metaBytes()
// never exceeds the budget when mu is released, with one exception: a
// chunk of 256 descriptors (descChunkMeta, 19 KiB of metadata with 4 KiB
// pages) is added before the eviction that pays for it, so the partition
// may be over by that much while the eviction compresses its victim or
// waits for the cleaner (mu released), or, if nothing can be evicted,
// until memory is next freed. A chunk that doubles the page table adds
// 16 bytes per descriptor besides: payGrowth pays for all but a chunk
// before anything releases mu.
// Every other allocation of new memory checks the budget first, and
// memory freed by one tier is released to the kernel (madvise) before the
// other tier touches new memory. So the process's memory, not only the
// bytes in use, stays within the budget, whatever the fragmentation of
// the image arena.
//
// R is how the budget splits under pressure, not a cap: a tier may use
// memory the other leaves unused. When memory is needed and the budget is
// full, the images give way if they hold more than their share
// (imageShare = R × avail), the frames otherwise. One exception: while
// demotions do not compress, a frame that needs memory, with the images
// within their share, takes an OS page from the image arena by compaction
// if half the arena's resident memory is free granules (imagesSparse):
// the images keep every image, and the frames get memory the images hold
// without using it and that no compressing demotion would fill. That is
// the state after images drain under their share in frames alone
// (R = MinShare, compressing demotions off): sysbench special keys at
// 1.5× the memory kept 0.71 MB of arena pages for 50 KB of images, and
// missed 24% more often than R 0 (docs/BENCHMARKS.md, "Auto R against
// fixed R across the sweep").
//
// Lock rules: every function here is called with mu held and returns
// with it held, never releasing it.

// resident is the memory the partition's pages occupy: resident frames,
// free or not, and resident OS pages of the image arena.
func (pt *partition) resident() int {
	return pt.residentFrames*pt.ps + pt.residentPages*osPageSize
}

// imageBytes is the memory the images occupy (the resident OS pages of their arena).
func (pt *partition) imageBytes() int { return pt.residentPages * osPageSize }

// used is the memory of the frames and image pieces in use.
func (pt *partition) used() int { return pt.framesUsed*pt.ps + pt.imageUsed() }

// roomFor reports whether the budget holds n more frames beside the
// frames and image pieces in use, without evicting anything.
func (pt *partition) roomFor(n int) bool { return pt.avail-pt.used() >= n*pt.ps }

// imagesOff reports whether R leaves the images too little memory to
// hold anything under pressure (R = 0 means frames only): then pages are
// neither demoted nor keep their images.
func (pt *partition) imagesOff() bool { return pt.imageShare < 2*pt.ps }

// imagesOverShare reports whether the images occupy more than their share
// and a margin of a few pages: within the margin neither tier takes memory
// from the other, so memory does not go back and forth at the boundary
// (frames released, image pages compacted) on every load.
func (pt *partition) imagesOverShare() bool { return pt.imageBytes() > pt.imageShare+4*pt.ps }

// imagesSparse reports whether demotions do not compress and at least
// half the image arena's resident memory, and at least two OS pages, is
// free granules: memory the images hold without using it. Only then do
// the frames take it (allocFrame). With compressing demotions the holes
// are the demotions' to fill, and taking them would drain the images
// below their share; the second page is slack, so that the next image
// does not take a frame back at once.
func (pt *partition) imagesSparse() bool {
	if pt.pool.compressing.Load() {
		return false
	}
	free := pt.freeGranules() * granuleSize
	return free >= 2*osPageSize && 2*free >= pt.imageBytes()
}

// underPressure reports whether frames have been evicted recently: fewer
// loads than there are frames since the last eviction. Only then is it
// worth keeping the compressed image of a page in a frame (its demotion
// is likely); a pool whose data fits in frames keeps none.
func (pt *partition) underPressure() bool {
	return pt.sinceEviction < max(pt.framesUsed, 64)
}

// copiesFit reports whether the images' share can hold a redundant copy of
// every frame: only then does the copy of a frame outlive the frame's stay
// and make its demotion free. Below that (document 000's R ≥ α/(1+α),
// InnoDB's constraint) copies only displace the images of pages not in a
// frame and are evicted before they save anything, so pages keep none and
// the tiers are exclusive.
func (pt *partition) copiesFit() bool {
	return pt.imageShare >= max(pt.framesUsed, 1)*pt.expectedImage()
}

// expectedImage is the size a page's image is expected to have: the mean
// of the images held, or half a page.
func (pt *partition) expectedImage() int {
	if n := pt.images + pt.redundant; n > 0 {
		return pt.imageUsed() / n
	}
	return pt.ps / 2
}

// releaseIdleFrame gives the memory of one free frame back to the kernel,
// so the images can use it. It reports whether there was one.
func (pt *partition) releaseIdleFrame() bool {
	f := pt.frameIdle.last() // keep the frames in use packed low
	if f < 0 {
		return false
	}
	pt.frameIdle.remove(f)
	pt.frames.release(f*pt.ps, pt.ps)
	pt.frameResident[f] = false
	pt.residentFrames--
	return true
}

// shedToBudget releases idle frames while the partition is resident above
// its budget (after the metadata grew).
func (pt *partition) shedToBudget() {
	for pt.resident() > pt.avail && pt.releaseIdleFrame() {
	}
}

// descChunkMeta is the metadata a chunk of descriptors adds (each with
// its free-list slot): what the partition may be over its budget by while
// mu is released (see the top of this file).
const descChunkMeta = descChunkLen * (descBytes + 4)

// payGrowth brings the partition back within its budget after growDescs,
// or within a chunk of descriptors of it, by steps that keep mu: idle
// frames' memory, frames whose demotion is free (they have a redundant
// image) and images, then, beyond a chunk, clean frames dropped. A chunk
// that doubles the page table adds 16 bytes per descriptor at once (3% of
// the budget) besides the chunk, and the eviction that would pay for them
// may compress, releasing mu over the budget by all of it. What it cannot
// pay (every frame pinned or dirty, and no image) the next eviction pays
// as before.
func (pt *partition) payGrowth() {
	for pt.resident() > pt.avail {
		if pt.releaseIdleFrame() {
			continue
		}
		if evicted, _, _ := pt.evictFrame(true); evicted {
			continue
		}
		if pt.shrinkImages(0) || pt.resident()-descChunkMeta <= pt.avail {
			return
		}
		pt.dropping = true
		evicted, _, _ := pt.evictFrame(false)
		pt.dropping = false
		if !evicted {
			return
		}
	}
}

// shrinkImages frees image memory until n more bytes fit in the budget:
// it compacts the image arena when that empties an OS page, and evicts
// images otherwise. It reports false if the images cannot free enough.
func (pt *partition) shrinkImages(n int) bool {
	for pt.resident()+n > pt.avail {
		if pt.compactImages() {
			continue
		}
		if !pt.evictImage() {
			return false
		}
	}
	return true
}

// roomForImage frees memory for the images, one step. If the images are
// within their share the frames give way: a free frame's memory is
// released, or a frame whose demotion is free (it has a redundant image)
// is demoted and its memory released. Otherwise (or if no frame can go)
// an image is evicted and its granules reused. It reports false if nothing
// could give memory.
func (pt *partition) roomForImage() bool {
	if !pt.imagesOverShareBy(osPageSize) {
		if pt.releaseIdleFrame() {
			return true
		}
		if evicted, _, _ := pt.evictFrame(true); evicted {
			return pt.releaseIdleFrame()
		}
	}
	return pt.evictImage() || pt.releaseIdleFrame()
}

// imagesOverShareBy reports whether n more bytes of images would exceed
// their share.
func (pt *partition) imagesOverShareBy(n int) bool { return pt.imageBytes()+n > pt.imageShare }

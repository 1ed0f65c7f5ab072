package bufferpool

import (
	"bytes"
	"testing"

	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// TestFramesTakeSparseImageMemory: images under their share that leave
// most of their arena's resident memory unused (they drained, and with
// compressing demotions off no demotion fills the holes: frames alone at
// a small R) give that memory to the frames by compaction when the frames
// need it, keeping every image; before, the frames evicted each other
// beside arena pages holding an eighth of their bytes (sysbench special
// keys at 1.5× the memory: 0.71 MB of arena for 50 KB of images, 24% more
// misses than R 0).
func TestFramesTakeSparseImageMemory(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	t.Cleanup(func() { s.Close() })
	// R 0.05 of 4 MiB: a share of about 200 KiB, more than the 128 KiB
	// of arena pages below, so the images are never over their share,
	// and too little to keep a copy of every frame (copiesFit), so pages
	// read from the store keep no image.
	p, err := New(s, Options{CacheSize: 4 << 20, Partitions: 1, FixedShare: true, CompressedShare: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	p.compressing.Store(false)
	pt := p.parts[0]

	// 256 images of one 8-granule piece, eight to an OS page: 32 pages.
	// Then all but one in eight dropped: 32 pages holding 32 images.
	const images, perPage = 256, granulesPerPage / 8
	kept := map[int32][]byte{}
	var resident int
	withLock(pt, func() {
		n := 8*granuleSize - pieceHeader
		base := PageID(pagestore.MaxPageID - images) // ids the store never gave out
		var dis []int32
		for i := range images {
			dis = append(dis, attachTestImage(t, pt, base+PageID(i), n, byte(i)))
		}
		for i, di := range dis {
			if i%perPage != 0 {
				pt.dropImage(pt.desc(di), false)
				pt.retire(di)
				continue
			}
			kept[di] = bytes.Repeat([]byte{byte(i)}, n)
		}
		resident = pt.residentPages
	})
	if want := images / perPage; resident < want {
		t.Fatalf("%d resident arena pages after the drops, want at least %d: the test needs a sparse arena", resident, want)
	}

	// Pages three times the cache, written and read twice: the frames
	// fill the budget and evict each other.
	ids := newCleanPages(t, p, 3000, func(i int, d []byte) { d[0], d[1] = byte(i), byte(i>>8) })
	readPages(t, p, ids, 2)

	withLock(pt, func() {
		t.Logf("arena pages %d → %d (%d bytes of images), %d frames resident of a budget of %d bytes",
			resident, pt.residentPages, pt.imageUsed(), pt.residentFrames, pt.avail)
		if got, want := pt.residentPages, resident/4; got > want {
			t.Errorf("%d arena pages still resident for %d bytes of images, want at most %d: the frames did not take the pages the images do not use", got, pt.imageUsed(), want)
		}
		if frames, without := pt.residentFrames*pt.ps, pt.avail-resident*osPageSize; frames <= without {
			t.Errorf("frames hold %d bytes, no more than the %d the budget left them beside the sparse arena", frames, without)
		}
		for di, want := range kept {
			d := pt.desc(di)
			if d.imgAt < 0 {
				t.Fatalf("descriptor %d lost its image", di)
			}
			if got := pt.readImage(d.imgAt, int(d.imgLen), nil); !bytes.Equal(got, want) {
				t.Fatalf("image of descriptor %d changed by compaction", di)
			}
		}
	})
	checkInvariants(t, p)
}

package bufferpool

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/codec"
)

// Demotion coding: how a demotion that compresses codes its page.
//
// A page demoted without an image is compressed in memory; the image never
// reaches the page store (a page is written back by the store's codec),
// so the pool may code it as it likes. (It may reach a flash cache, which
// keeps images of any codec: a frame of literals is a standard zstd frame
// naming the store's dictionary.) Two codings are on offer: the demotion
// codec (zstd-1 with the store's dictionary, as the store writes) and, where
// that dictionary has a literal table, a frame of literals
// (codec.CompressLiterals): the page Huffman-coded with the table, without
// matching. On sysbench leaves the second compresses in 0.3× the time
// (5.5 against 19 µs) and decodes in 0.85×, for images about a sixth larger;
// on JSON documents its images are three or four times larger. Which
// coding pays is a property of the data, so the pool measures it: one
// compressing demotion in codingSampleEvery is coded both ways (the smaller
// image is kept), and after every codingWindow such samples the pool
// chooses frames of literals if their images came to at most codingSlack
// of the codec's, the codec otherwise; a page the literal coding refuses
// counts as coded at twice its size (so that pages neither coding
// compresses do not keep the literals chosen, each tried in vain). The slack trades image size (a
// compressed tier holding fewer pages) against time; the controller sees
// the coding's time as T_comp (a sample's, both codings') and sizes the
// tiers from it.
//
// Lock rules: the choice is an atomic; the window's sums are under their
// own mutex, taken only by sampled demotions (callers hold no pool lock:
// compressDemote releases mu to compress).

const (
	codingSampleEvery = 16 // one compressing demotion in 16 is coded both ways
	codingWindow      = 8  // samples per choice
	// codingSlack: frames of literals are chosen while their images are
	// at most 5/4 of the codec's (sysbench leaves: 1.17; JSON: 3-4).
	codingSlackNum, codingSlackDen = 5, 4
)

// demoteCoding is the pool's choice of coding for compressing demotions.
type demoteCoding struct {
	n        atomic.Uint64 // compressing demotions coded so far
	literals atomic.Bool   // frames of literals chosen
	coded    atomic.Int64  // frames of literals kept as images (Stats)

	mu                   sync.Mutex
	samples              int
	litBytes, codecBytes int64
}

// compressDemotion compresses page, a frame being demoted, into dst[:0]
// with the coding chosen (above), sampling both codings now and then. It
// returns the image, the codec that decodes it (codec.None: the page does
// not compress by an eighth), whether it is a frame of literals, and how
// long compressing took.
func (p *Pool) compressDemotion(dst, page []byte) (img []byte, used codec.ID, literal bool, took time.Duration, err error) {
	c := p.demotionCodec()
	limit := len(page) - len(page)/8
	if p.coding.n.Add(1)%codingSampleEvery == 1 {
		return p.sampleDemotion(c, dst, page)
	}
	start := time.Now()
	if p.coding.literals.Load() {
		if img, ok := codec.CompressLiterals(c, dst, page); ok && len(img) <= limit {
			return img, c.ID(), true, time.Since(start), nil
		}
	}
	img, used, err = codec.EncodePage(c, dst, page)
	return img, used, false, time.Since(start), err
}

// sampleDemotion codes page both ways, records their sizes, chooses again
// after a window of samples, and returns the smaller image.
func (p *Pool) sampleDemotion(c codec.Codec, dst, page []byte) ([]byte, codec.ID, bool, time.Duration, error) {
	sp := p.getScratch()
	start := time.Now()
	lit, litOK := codec.CompressLiterals(c, (*sp)[:0], page)
	defer p.putScratch(sp, lit)
	img, used, err := codec.EncodePage(c, dst, page)
	took := time.Since(start)
	if err != nil {
		return img, used, false, took, err
	}
	size := len(img)
	if used == codec.None {
		size = len(page)
	}
	if !litOK {
		p.coding.record(2*len(page), size) // never chosen for such pages
		return img, used, false, took, nil
	}
	p.coding.record(len(lit), size)
	if len(lit) < size && len(lit) <= len(page)-len(page)/8 {
		return append(img[:0], lit...), c.ID(), true, took, nil
	}
	return img, used, false, took, nil
}

// record adds one sample: a page coded as a frame of literals in litBytes
// and by the codec in codecBytes (the page's size if it did not compress).
func (dc *demoteCoding) record(litBytes, codecBytes int) {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	dc.litBytes += int64(litBytes)
	dc.codecBytes += int64(codecBytes)
	if dc.samples++; dc.samples < codingWindow {
		return
	}
	dc.literals.Store(dc.litBytes*codingSlackDen <= dc.codecBytes*codingSlackNum)
	dc.samples, dc.litBytes, dc.codecBytes = 0, 0, 0
}

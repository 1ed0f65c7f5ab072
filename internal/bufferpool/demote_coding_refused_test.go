package bufferpool

import (
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// Once frames of literals are chosen, pages the literal coding refuses
// (here random bytes: huff0 finds them incompressible)
// must still count: else the choice was never made again and every later
// demotion tried the literal coding first, then the codec (a reviewer of 5e5786c).
func TestDemotionCodingReconsidersRefusedPages(t *testing.T) {
	s := dictStore{openStore(t, vfs.NewMem(), "zstd"), tableDictCodec(t, digitsLeaf, 6)}
	p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	page := make([]byte, testPageSize)
	for i := range codingSampleEvery * codingWindow * 2 {
		digitsLeaf(page, PageID(i))
		if _, _, _, _, err := p.compressDemotion(nil, page); err != nil {
			t.Fatal(err)
		}
	}
	if !p.coding.literals.Load() {
		t.Fatal("digits: frames of literals not chosen")
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for range codingSampleEvery * codingWindow * 4 {
		for i := range page {
			page[i] = byte(rng.Uint32())
		}
		if _, _, _, _, err := p.compressDemotion(nil, page); err != nil {
			t.Fatal(err)
		}
	}
	if p.coding.literals.Load() {
		t.Errorf("after %d demotions of pages no frame of literals codes, frames of literals are still chosen (window: %d samples)",
			codingSampleEvery*codingWindow*4, p.coding.samples)
	}
}

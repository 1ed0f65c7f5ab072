package bufferpool

import (
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestDemotionReusesReadImage: pages read from the store keep the image
// they were read from, so evicting them to the compressed tier compresses
// nothing; a page modified since it was read has dropped that image and
// is compressed again. Contents survive every round trip.
func TestDemotionReusesReadImage(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const n = 400 // compressed, about 1.5× what the pool holds
	populate(t, p, n)
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	// The pages populate left in frames were written, not read: their
	// first demotion compresses. Every later one should not.
	base := p.Stats()
	for round := 0; round < 3; round++ {
		for id := PageID(0); id < n; id++ {
			pg, err := p.Get(id, Shared)
			if err != nil {
				t.Fatal(err)
			}
			pageVersion(t, pg.Data(), id)
			pg.Release()
		}
	}
	st := p.Stats()
	free := st.FreeDemotions - base.FreeDemotions
	all := st.Demotions - base.Demotions
	t.Logf("demotions %d, of which free %d; misses %d, promotions %d", all, free, st.Misses-base.Misses, st.Promotions-base.Promotions)
	if free == 0 || free < all*9/10 {
		t.Errorf("read-only rounds: %d of %d demotions reused the read image, want nearly all", free, all)
	}
	checkInvariants(t, p)

	// Modify every page: their read images no longer match, so their
	// demotions compress the new contents.
	for id := PageID(0); id < n; id++ {
		pg, err := p.Get(id, Exclusive)
		if err != nil {
			t.Fatal(err)
		}
		fillPage(pg.Data(), id, 2)
		pg.MarkDirty()
		pg.Release()
	}
	checkInvariants(t, p)
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	before := p.Stats()
	for id := PageID(0); id < n; id++ { // evicts the modified frames
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatal(err)
		}
		if v := pageVersion(t, pg.Data(), id); v != 2 {
			t.Fatalf("page %d: version %d after rewrite, want 2", id, v)
		}
		pg.Release()
	}
	after := p.Stats()
	if compressing := (after.Demotions - before.Demotions) - (after.FreeDemotions - before.FreeDemotions); compressing == 0 {
		t.Errorf("no demotion compressed after every page was modified")
	}
	checkInvariants(t, p)
}

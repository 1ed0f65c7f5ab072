package bufferpool

import (
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// scanHitRatio interleaves reads of a small hot set with a sequential scan
// of many cold pages (one scan read per hot read) and returns the hot
// set's hit ratio (either tier) once the scan is under way.
func scanHitRatio(t *testing.T, cold bool) float64 {
	saved := coldInsert
	coldInsert = cold
	defer func() { coldInsert = saved }()
	fs := vfs.NewMem()
	s := openStore(t, fs, "none") // no compressed tier: the frame CLOCK alone
	defer s.Close()
	p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const hot, scan = 40, 3000 // ~110 frames
	populate(t, p, hot+scan)
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	read := func(id PageID) {
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatal(err)
		}
		pg.Release()
	}
	for i := 0; i < 3*hot; i++ {
		read(PageID(i % hot))
	}
	var hits, total int64
	for i := 0; i < scan; i++ {
		before := p.Stats()
		read(PageID(i % hot))
		after := p.Stats()
		if i > scan/10 {
			total++
			hits += after.HitsUncompressed + after.HitsCompressed - before.HitsUncompressed - before.HitsCompressed
		}
		read(PageID(hot + i))
	}
	return float64(hits) / float64(total)
}

// TestScanResistance is the measurement behind the insertion policy: with
// pages entering the CLOCK cold, a scan as frequent as the hot-set reads
// does not evict the hot set; entering referenced, it does.
func TestScanResistance(t *testing.T) {
	warm := scanHitRatio(t, false)
	cold := scanHitRatio(t, true)
	t.Logf("hot-set hit ratio during a scan: insert referenced %.3f, insert cold %.3f", warm, cold)
	if cold < 0.95 {
		t.Errorf("cold insertion: hot set hit ratio %.3f during a scan, want ≥ 0.95", cold)
	}
	if cold <= warm {
		t.Errorf("cold insertion (%.3f) is no better than referenced insertion (%.3f)", cold, warm)
	}
}

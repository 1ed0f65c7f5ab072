package bufferpool

import (
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestLoadAllocations: a page load (here every Get a miss or an image hit,
// cycling through 4× the budget) allocates nothing on the Go heap in the
// steady state: frames, images and descriptors are reused, and finishing a
// load with nobody waiting for it replaces no channel (it used to make one
// per load).
func TestLoadAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const budget = 1 << 20
	n := 4 * budget / testPageSize
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	writePages(t, s, n)
	p, err := New(s, poolOptions(budget, 0.5))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	next := 0
	get := func() {
		pg, err := p.Get(PageID(next%n), Shared)
		if err != nil {
			t.Fatal(err)
		}
		pg.Release()
		next += 7
	}
	for i := 0; i < 4*n; i++ {
		get()
	}
	before := p.Stats()
	allocs := testing.AllocsPerRun(2000, get)
	after := p.Stats()
	loads := (after.Misses - before.Misses) + (after.HitsCompressed - before.HitsCompressed)
	if loads < 1000 {
		t.Fatalf("only %d of the measured Gets loaded a page: the test does not measure loads", loads)
	}
	if allocs > 0.1 {
		t.Errorf("%.2f allocations per Get (%d loads in 2001 Gets), want none", allocs, loads)
	}
}

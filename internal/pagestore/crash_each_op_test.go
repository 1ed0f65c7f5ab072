package pagestore

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// allCrashModes are the crash modes the recovery crash tests open images
// of: vfs.CrashModes and torn writes with the namespace's operations.
var allCrashModes = []vfs.CrashMode{vfs.CrashDropUnsynced, vfs.CrashTorn, vfs.CrashDropUnsynced | vfs.CrashNamespace, vfs.CrashTorn | vfs.CrashNamespace, vfs.CrashStrict}

// crashEachOp runs session on the durable image of base (with o's other
// options), crashing it after its kth operation for k = 1, 2, ... until a
// run ends without reaching its crash point (at most maxOps). For every
// crash point it opens crash images in each of modes (seeds images of
// each random one) and hands each store to check, with a description of
// the image; an image that does not open is an error (the first three
// are reported). It returns how many images did not open.
func crashEachOp(t *testing.T, base *vfs.MemFS, o Options, maxOps int, modes []vfs.CrashMode, seeds uint64,
	session func(o Options), check func(s *Store, at string)) (failed int) {
	t.Helper()
	for k := 1; k <= maxOps; k++ {
		fsk := base.CrashClone(vfs.CrashDropUnsynced, nil)
		fsk.CrashAfterOps(k)
		ok := o
		ok.FS = fsk
		session(ok)
		if !fsk.Crashed() {
			t.Logf("the session ran in %d operations", k-1)
			return failed
		}
		for _, mode := range modes {
			for seed := range seeds {
				var rng *rand.Rand
				if mode != vfs.CrashDropUnsynced {
					rng = rand.New(rand.NewPCG(seed, uint64(k)))
				}
				oi := o
				oi.FS = fsk.CrashedClone(mode, rng)
				at := fmt.Sprintf("crash at op %d (%v, seed %d)", k, mode, seed)
				s, err := Open("db", oi)
				if err != nil {
					if failed++; failed <= 3 {
						t.Errorf("%s, reopen: %v", at, err)
					}
					continue
				}
				check(s, at)
				s.Close()
				if rng == nil {
					break // one image
				}
			}
		}
	}
	t.Fatalf("the session did not end within %d operations", maxOps)
	return failed
}

// openWithPages opens a store with o at "db" and writes pages 0..n-1,
// version 1 of each (pageContent), not synced.
func openWithPages(t *testing.T, o Options, n int) *Store {
	t.Helper()
	s, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	for id := PageID(0); id < PageID(n); id++ {
		if _, _, err := s.WritePage(id, pageContent(id, 1, testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

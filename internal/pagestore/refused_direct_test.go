package pagestore

import (
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestTornTailWithoutODirect: on a file system that refuses O_DIRECT
// (segments buffered, alignment still checked), a store whose newest
// segment a power loss tore opens, as with direct I/O. Recovery's rewrite
// of what it replays (vfs.RewriteRange) read and wrote the torn tail's
// unaligned range through the alignment check and failed Open (33 of 40
// images). (Found by a reviewer, thirty-third session.)
func TestTornTailWithoutODirect(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		mem := vfs.NewMem()
		if refuse {
			mem.RefuseDirect()
		}
		s, err := Open("db", testOptions(mem, mustCodec(t, "none")))
		if err != nil {
			t.Fatal(err)
		}
		for id := PageID(0); id < 3; id++ {
			if _, _, err := s.WritePage(id, pageContent(id, 1, testPageSize)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		for id := PageID(0); id < 9; id++ { // fills write buffers: written, not synced
			if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
				t.Fatal(err)
			}
		}
		failed := 0
		for seed := range uint64(40) {
			img := mem.CrashClone(vfs.CrashTorn, rand.New(rand.NewPCG(seed, 9)))
			s2, err := Open("db", testOptions(img, mustCodec(t, "none")))
			if err != nil {
				if failed == 0 {
					t.Errorf("O_DIRECT refused %v, torn crash seed %d: %v", refuse, seed, err)
				}
				failed++
				continue
			}
			s2.Close()
		}
		if failed > 0 {
			t.Errorf("O_DIRECT refused %v: %d of 40 torn crash images do not open", refuse, failed)
		}
		s.Close()
	}
}

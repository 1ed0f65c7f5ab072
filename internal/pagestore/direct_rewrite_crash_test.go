package pagestore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestCrashDuringDirectRewriteOfACutTail: a direct segment whose size is not
// block aligned (a torn tail cut by an earlier recovery) and that is no
// longer its stream's newest is replayed again. vfs.RewriteRange wrote
// its last block whole, past the end of the file, then cut it back: a
// crash between the two left the grown tail (zeros, or a torn sector:
// CrashTorn), and the next Open called the segment corrupt. It rewrites
// whole blocks only (found by a reviewer). Every crash image must open
// with the pages of session 2.
func TestCrashDuringDirectRewriteOfACutTail(t *testing.T) {
	base := vfs.NewMem()
	o := testOptions(base, mustCodec(t, "none"))
	s, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	for id := PageID(0); id < 3; id++ {
		if _, _, err := s.WritePage(id, pageContent(id, 1, testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	head := s.streams[streamHot].head
	recEnd, segPath := head.size, head.path
	direct := head.f.Direct()
	s.mu.Unlock()
	if !direct {
		t.Fatal("segment not direct")
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	killStore(t, s)
	if recEnd%vfs.BlockSize == 0 {
		t.Fatalf("records end at %d, block aligned", recEnd)
	}
	// A torn tail: garbage where the next record would start.
	f, err := base.OpenFile(segPath, os.O_RDWR, 0, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xAB}, 64), recEnd); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	// Session 2: recovery cuts the torn tail (an unaligned size); new
	// writes go to a new segment of the same stream.
	s2, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	for id := PageID(0); id < 3; id++ {
		if _, _, err := s2.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s2.Sync(); err != nil {
		t.Fatal(err)
	}
	killStore(t, s2)
	st, _ := base.Stat(segPath)
	t.Logf("segment %s: %d bytes after the torn tail was cut (records end at %d)", segPath, st.Size(), recEnd)

	// Session 3 crashes at each of its recovery's operations in turn;
	// session 4 must open.
	modes := []vfs.CrashMode{vfs.CrashDropUnsynced, vfs.CrashTorn, vfs.CrashStrict}
	failures := 0
	for k := 1; k < 400; k++ {
		fsk := base.CrashClone(vfs.CrashDropUnsynced, nil)
		fsk.CrashAfterOps(k)
		o3 := o
		o3.FS = fsk
		if s3, err := Open("db", o3); err == nil {
			_ = s3.lock.Close()
		}
		if !fsk.Crashed() {
			t.Logf("recovery done in %d operations", k-1)
			break
		}
		for _, mode := range modes {
			for seed := uint64(0); seed < 8; seed++ {
				var rng *rand.Rand
				if mode != vfs.CrashDropUnsynced {
					rng = rand.New(rand.NewPCG(seed, uint64(k)))
				}
				img := fsk.CrashedClone(mode, rng)
				o4 := o
				o4.FS = img
				s4, err := Open("db", o4)
				if err != nil {
					failures++
					if failures <= 3 {
						t.Errorf("crash at recovery op %d (%v, seed %d), reopen: %v", k, mode, seed, err)
					}
					continue
				}
				buf := make([]byte, testPageSize)
				for id := PageID(0); id < 3; id++ {
					if err := s4.ReadPage(id, buf); err != nil || !bytes.Equal(buf, pageContent(id, 2, testPageSize)) {
						t.Errorf("crash at recovery op %d (%v, seed %d): page %d: %v", k, mode, seed, id, err)
					}
				}
				s4.Close()
				if mode == vfs.CrashDropUnsynced {
					break
				}
			}
		}
	}
	if failures > 0 {
		t.Errorf("%s", fmt.Sprintf("%d crash images did not open", failures))
	}
}

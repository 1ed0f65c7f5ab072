package pagestore

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

func cutTestVersion(t *testing.T, s *Store, id PageID) int {
	buf := make([]byte, testPageSize)
	if err := s.ReadPage(id, buf); err != nil {
		return -1
	}
	for _, v := range []int{1, 6, 11} {
		if bytes.Equal(buf, pageContent(id, v, testPageSize)) {
			return v
		}
	}
	return -2
}

// TestCutDoesNotResurrectPastTorn: a block holds A (page 0 v6, at a block
// boundary), X (page 1 v6, unaligned) and sync padding; Y (page 2 v6)
// starts at the next block boundary. X is torn (a scatter crash: its last
// sector garbage), Y intact. Recovery cuts at X, zeroing the rest of X's
// block (direct I/O); a crash at any point of that recovery must leave a
// prefix of the writes: never Y without X. (Zeroing the block before the
// bytes after it were cut left zeros, read as padding, then Y: found by a
// reviewer.)
func TestCutDoesNotResurrectPastTorn(t *testing.T) {
	base := vfs.NewMem()
	o := testOptions(base, mustCodec(t, "lz4"))
	s, err := Open("db", o)
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
	if _, _, err := s.WritePage(0, pageContent(0, 6, testPageSize)); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	xoff, segPath := s.streams[streamHot].head.size, s.streams[streamHot].head.path
	s.mu.Unlock()
	if _, _, err := s.WritePage(1, pageContent(1, 6, testPageSize)); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	xend := s.streams[streamHot].head.size
	s.mu.Unlock()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	yoff := s.streams[streamHot].head.size
	s.mu.Unlock()
	if _, _, err := s.WritePage(2, pageContent(2, 6, testPageSize)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	killStore(t, s)
	t.Logf("X at [%d,%d), Y at %d", xoff, xend, yoff)
	if xoff%vfs.BlockSize == 0 || yoff%vfs.BlockSize != 0 || yoff-xoff > vfs.BlockSize {
		t.Fatalf("layout not as planned")
	}
	f, err := base.OpenFile(segPath, os.O_RDWR, 0, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xAB}, 8), xend-8); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	{
		c := base.CrashClone(vfs.CrashDropUnsynced, nil)
		oc := o
		oc.FS = c
		sc, err := Open("db", oc)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("plain recovery: p0=%d p1=%d p2=%d", cutTestVersion(t, sc, 0), cutTestVersion(t, sc, 1), cutTestVersion(t, sc, 2))
		sc.Close()
	}
	modes := []vfs.CrashMode{vfs.CrashDropUnsynced, vfs.CrashTorn, vfs.CrashDropUnsynced | vfs.CrashNamespace, vfs.CrashTorn | vfs.CrashNamespace, vfs.CrashStrict}
	bad, failed := 0, 0
	for k := 1; k < 400; k++ {
		fsk := base.CrashClone(vfs.CrashDropUnsynced, nil)
		fsk.CrashAfterOps(k)
		o2 := o
		o2.FS = fsk
		if s2, err := Open("db", o2); err == nil {
			_ = s2.lock.Close()
		}
		if !fsk.Crashed() {
			t.Logf("recovery done in %d ops", k-1)
			break
		}
		for _, mode := range modes {
			for seed := uint64(0); seed < 16; seed++ {
				var rng *rand.Rand
				if mode != vfs.CrashDropUnsynced {
					rng = rand.New(rand.NewPCG(seed, uint64(k)))
				}
				img := fsk.CrashedClone(mode, rng)
				o3 := o
				o3.FS = img
				s3, err := Open("db", o3)
				if err != nil {
					failed++
					if failed <= 3 {
						t.Errorf("op %d %v seed %d: reopen: %v", k, mode, seed, err)
					}
					continue
				}
				p1, p2 := cutTestVersion(t, s3, 1), cutTestVersion(t, s3, 2)
				if p2 == 6 && p1 != 6 {
					bad++
					if bad <= 5 || seed == 0 {
						t.Errorf("op %d %v seed %d: not a prefix: page 1 v%d (X lost), page 2 v%d (Y, written after X) kept", k, mode, seed, p1, p2)
					}
				}
				s3.Close()
				if mode == vfs.CrashDropUnsynced || mode == vfs.CrashDropUnsynced|vfs.CrashNamespace {
					break
				}
			}
		}
	}
	t.Logf("non-prefix images: %d, failed opens: %d", bad, failed)
}

// TestCrashMidCutShortTail: a short torn tail (the file ends inside the
// block): a crash at every operation of the recovery that cuts it and of
// the session after (new head, writes, sync), in every crash mode, leaves
// a store that opens with valid pages.
func TestCrashMidCutShortTail(t *testing.T) {
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
	recEnd, segPath := s.streams[streamHot].head.size, s.streams[streamHot].head.path
	s.mu.Unlock()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	killStore(t, s)
	f, _ := base.OpenFile(segPath, os.O_RDWR, 0, vfs.OpenOptions{})
	st, _ := base.Stat(segPath)
	t.Logf("records end %d, file %d", recEnd, st.Size())
	// Torn tail shorter than the rest of the block: the file ends inside it.
	// Sync padded to a block boundary, so write the tail at recEnd and cut the file there+64.
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xAB}, 64), recEnd); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(recEnd + 64); err != nil {
		t.Fatal(err)
	}
	f.Sync()
	f.Close()
	modes := []vfs.CrashMode{vfs.CrashDropUnsynced, vfs.CrashTorn, vfs.CrashDropUnsynced | vfs.CrashNamespace, vfs.CrashTorn | vfs.CrashNamespace, vfs.CrashStrict}
	failed, wrong := 0, 0
	for k := 1; k < 600; k++ {
		fsk := base.CrashClone(vfs.CrashDropUnsynced, nil)
		fsk.CrashAfterOps(k)
		o2 := o
		o2.FS = fsk
		if s2, err := Open("db", o2); err == nil {
			for id := PageID(0); id < 3; id++ {
				s2.WritePage(id, pageContent(id, 6, testPageSize))
			}
			s2.Sync()
			s2.Checkpoint()
			_ = s2.lock.Close()
		}
		if !fsk.Crashed() {
			t.Logf("session done in %d ops", k-1)
			break
		}
		for _, mode := range modes {
			for seed := uint64(0); seed < 16; seed++ {
				var rng *rand.Rand
				if mode != vfs.CrashDropUnsynced {
					rng = rand.New(rand.NewPCG(seed, uint64(k)))
				}
				img := fsk.CrashedClone(mode, rng)
				o3 := o
				o3.FS = img
				s3, err := Open("db", o3)
				if err != nil {
					failed++
					if failed <= 3 {
						t.Errorf("op %d %v seed %d: reopen: %v", k, mode, seed, err)
					}
					continue
				}
				for id := PageID(0); id < 3; id++ {
					if v := cutTestVersion(t, s3, id); v != 1 && v != 6 {
						wrong++
						t.Errorf("op %d %v seed %d: page %d v%d", k, mode, seed, id, v)
					}
				}
				s3.Close()
				if mode == vfs.CrashDropUnsynced || mode == vfs.CrashDropUnsynced|vfs.CrashNamespace {
					break
				}
			}
		}
	}
	t.Logf("failed opens %d, wrong pages %d", failed, wrong)
}

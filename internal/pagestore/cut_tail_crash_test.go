package pagestore

import (
	"bytes"
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
	s := openWithPages(t, o, 3)
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
	bad := 0
	failed := crashEachOp(t, base, o, 600, allCrashModes, 16,
		func(o Options) {
			if s2, err := Open("db", o); err == nil {
				_ = s2.lock.Close()
			}
		},
		func(s *Store, at string) {
			if p1, p2 := cutTestVersion(t, s, 1), cutTestVersion(t, s, 2); p2 == 6 && p1 != 6 {
				if bad++; bad <= 5 {
					t.Errorf("%s: not a prefix: page 1 v%d (X lost), page 2 v%d (Y, written after X) kept", at, p1, p2)
				}
			}
		})
	t.Logf("non-prefix images: %d, failed opens: %d", bad, failed)
}

// TestCrashMidCutShortTail: a short torn tail (the file ends inside the
// block): a crash at every operation of the recovery that cuts it and of
// the session after (new head, writes, sync), in every crash mode, leaves
// a store that opens with valid pages.
func TestCrashMidCutShortTail(t *testing.T) {
	base := vfs.NewMem()
	o := testOptions(base, mustCodec(t, "none"))
	s := openWithPages(t, o, 3)
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
	wrong := 0
	failed := crashEachOp(t, base, o, 600, allCrashModes, 16,
		func(o Options) {
			if s2, err := Open("db", o); err == nil {
				for id := PageID(0); id < 3; id++ {
					s2.WritePage(id, pageContent(id, 6, testPageSize))
				}
				s2.Sync()
				s2.Checkpoint()
				_ = s2.lock.Close()
			}
		},
		func(s *Store, at string) {
			for id := PageID(0); id < 3; id++ {
				if v := cutTestVersion(t, s, id); v != 1 && v != 6 {
					wrong++
					t.Errorf("%s: page %d v%d", at, id, v)
				}
			}
		})
	t.Logf("failed opens %d, wrong pages %d", failed, wrong)
}

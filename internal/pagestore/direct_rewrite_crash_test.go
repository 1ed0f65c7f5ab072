package pagestore

import (
	"bytes"
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
	s := openWithPages(t, o, 3)
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
	failures := crashEachOp(t, base, o, 400, []vfs.CrashMode{vfs.CrashDropUnsynced, vfs.CrashTorn, vfs.CrashStrict}, 8,
		func(o Options) {
			if s3, err := Open("db", o); err == nil {
				_ = s3.lock.Close()
			}
		},
		func(s *Store, at string) {
			buf := make([]byte, testPageSize)
			for id := PageID(0); id < 3; id++ {
				if err := s.ReadPage(id, buf); err != nil || !bytes.Equal(buf, pageContent(id, 2, testPageSize)) {
					t.Errorf("%s: page %d: %v", at, id, err)
				}
			}
		})
	if failures > 0 {
		t.Errorf("%d crash images did not open", failures)
	}
}

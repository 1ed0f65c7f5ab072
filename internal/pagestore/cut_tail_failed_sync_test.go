package pagestore

import (
	"bytes"
	"os"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestCutTailFailedSyncThenReopen: a recovery cuts a torn tail and its
// fsync fails (Open fails); the next Open in the same boot must write
// again every block it replays, the one the cut ended in too, or it builds on
// bytes a power loss then takes. (Cut inside a block, that block was not
// written again: found by a reviewer. Recovery now cuts on a block
// boundary, zeroing the rest of the block.)
func TestCutTailFailedSyncThenReopen(t *testing.T) {
	fs := vfs.NewMem()
	o := testOptions(fs, mustCodec(t, "none"))
	s, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	var recEnd int64
	var segPath string
	for _, ver := range []int{1, 5} {
		for id := PageID(0); id < 3; id++ {
			if _, _, err := s.WritePage(id, pageContent(id, ver, testPageSize)); err != nil {
				t.Fatal(err)
			}
		}
		if ver == 5 {
			s.mu.Lock()
			recEnd, segPath = s.streams[streamHot].head.size, s.streams[streamHot].head.path
			s.mu.Unlock()
			fs.SetInjector(eioOn(".seg"))
		}
		if err := s.Sync(); (err == nil) != (ver == 1) {
			t.Fatalf("sync of version %d: %v", ver, err)
		}
	}
	fs.SetInjector(nil)
	killStore(t, s)
	t.Logf("records end at %d (block offset %d)", recEnd, recEnd%vfs.BlockSize)
	// A torn tail where the next record would start.
	f, err := fs.OpenFile(segPath, os.O_RDWR, 0, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xAB}, 64), recEnd); err != nil {
		t.Fatal(err)
	}
	f.Close()
	diff := func(label string) {
		rd := func(m *vfs.MemFS) []byte {
			g, err := m.OpenFile(segPath, os.O_RDONLY, 0, vfs.OpenOptions{})
			if err != nil {
				return nil
			}
			defer g.Close()
			n, _ := g.Size()
			b := make([]byte, n)
			g.ReadAt(b, 0)
			return b
		}
		cur, img := rd(fs), rd(fs.CrashClone(vfs.CrashDropUnsynced, nil))
		var ds []int
		for i := 0; i < max(len(cur), len(img)); i += 512 {
			if i >= len(cur) || i >= len(img) || !bytes.Equal(cur[i:min(i+512, len(cur), len(img))], img[i:min(i+512, len(cur), len(img))]) {
				ds = append(ds, i)
			}
		}
		t.Logf("%s: current %d bytes, crash image %d; sectors differing: %v", label, len(cur), len(img), ds)
	}
	diff("after session 1 and the torn tail")

	// Session 2: recovery rewrites, cuts the torn tail, and its fsync fails.
	fs.SetInjector(eioOn(".seg"))
	if s2, err := Open("db", o); err == nil {
		t.Fatal("session 2 opened despite the failed fsync")
		s2.Close()
	} else {
		t.Logf("session 2: %v", err)
	}
	fs.SetInjector(nil)
	diff("after session 2")
	st, _ := fs.Stat(segPath)
	t.Logf("segment %d bytes after the cut", st.Size())

	// Session 3, same boot: opens, reads version 2, checkpoints.
	s3, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	diff("after session 3's open")
	buf := make([]byte, testPageSize)
	for id := PageID(0); id < 3; id++ {
		if err := s3.ReadPage(id, buf); err != nil || !bytes.Equal(buf, pageContent(id, 5, testPageSize)) {
			t.Fatalf("session 3 page %d: %v", id, err)
		}
	}
	if err := s3.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	killStore(t, s3)
	readSeg := func() []byte {
		g, err := fs.OpenFile(segPath, os.O_RDONLY, 0, vfs.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		n, _ := g.Size()
		b := make([]byte, n)
		g.ReadAt(b, 0)
		return b
	}
	before := readSeg()
	fs.Crash(vfs.CrashDropUnsynced, nil) // power loss
	after := readSeg()
	t.Logf("segment before the power loss %d bytes, after %d", len(before), len(after))
	for i := 0; i < min(len(before), len(after)); i += 512 {
		j := min(i+512, len(before), len(after))
		if !bytes.Equal(before[i:j], after[i:j]) {
			t.Logf("sector at %d differs", i)
		}
	}

	s4, err := Open("db", o)
	if err != nil {
		t.Fatalf("open after a power loss that followed a successful open and checkpoint: %v", err)
	}
	defer s4.Close()
	for id := PageID(0); id < 3; id++ {
		if err := s4.ReadPage(id, buf); err != nil || !bytes.Equal(buf, pageContent(id, 5, testPageSize)) {
			t.Errorf("page %d after the power loss: %v", id, err)
		}
	}
}

//go:build linux

package vfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRewriteRangeOnRefusedDirect: a file opened for direct I/O on a file
// system that refuses O_DIRECT is buffered (Direct false) but checks its
// callers' alignment; RewriteRange writes any range of it again, aligned
// or not (a torn tail ends anywhere). It failed on "unaligned direct
// I/O". (Found by a reviewer, thirty-third session.)
func TestRewriteRangeOnRefusedDirect(t *testing.T) {
	saved := setDirectFlag
	t.Cleanup(func() { setDirectFlag = saved })
	setDirectFlag = func(uintptr) error { return unix.EINVAL }
	f, err := Default.OpenFile(filepath.Join(t.TempDir(), "seg"), os.O_RDWR|os.O_CREATE, 0o644, OpenOptions{Direct: true})
	must(t, err)
	defer f.Close()
	if f.Direct() {
		t.Fatal("Direct() true although O_DIRECT was refused")
	}
	b := AlignedBuffer(2 * BlockSize)
	for i := range b {
		b[i] = byte(i)
	}
	_, err = f.WriteAt(b, 0)
	must(t, err)
	must(t, RewriteRange(f, 100, 5000))
	got := AlignedBuffer(2 * BlockSize)
	_, err = f.ReadAt(got, 0)
	must(t, err)
	if !bytes.Equal(got, b) {
		t.Fatal("the rewrite changed the file")
	}
	if _, err := f.WriteAt(b[:100], 100); err == nil {
		t.Fatal("an unaligned write outside RewriteRange was allowed")
	}
}

// TestMemRefuseDirect: MemFS after RefuseDirect opens Direct files
// buffered, checks alignment, and RewriteRange works on any range.
func TestMemRefuseDirect(t *testing.T) {
	m := NewMem()
	m.RefuseDirect()
	f, err := m.OpenFile("f", os.O_RDWR|os.O_CREATE, 0o644, OpenOptions{Direct: true})
	must(t, err)
	if f.Direct() {
		t.Fatal("Direct() true after RefuseDirect")
	}
	if _, err := f.WriteAt(make([]byte, 100), 0); err == nil {
		t.Fatal("an unaligned write was allowed")
	}
	_, err = f.WriteAt(AlignedBuffer(BlockSize), 0)
	must(t, err)
	must(t, RewriteRange(f, 7, 3000))
	if c := m.CrashClone(CrashDropUnsynced, nil); !c.refuseDirect {
		t.Fatal("a crash image forgot RefuseDirect")
	}
}

package vfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestRewriteRangeDirect: RewriteRange writes a range of a file open for
// direct I/O again in whole blocks (a file system may take O_DIRECT and
// still write through its cache): bytes after a failed Sync (MemFS: lost
// at a crash, still readable) become durable with the next Sync; the
// file's contents and its size, not a multiple of a block (a torn tail),
// are unchanged. On MemFS, and on the OS's file system where it takes
// O_DIRECT.
func TestRewriteRangeDirect(t *testing.T) {
	const size = 3*BlockSize + 1000 // a torn tail ends anywhere
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i*7 + 1)
	}
	t.Run("mem", func(t *testing.T) {
		m := NewMem()
		f, err := m.OpenFile("seg", os.O_RDWR|os.O_CREATE, 0o644, OpenOptions{Direct: true})
		must(t, err)
		if !f.Direct() {
			t.Fatal("MemFS file not Direct")
		}
		writeTorn(t, f, want)
		must(t, m.SyncDir("."))
		m.SetInjector(func(op Op, path string) error {
			if op == OpSync {
				return InjectedError(op, path) // the kernel ran it and it failed: the bytes are lost at a crash
			}
			return nil
		})
		if f.Sync() == nil {
			t.Fatal("the injected Sync error did not fail the Sync")
		}
		m.SetInjector(nil)
		must(t, RewriteRange(f, 100, 2*BlockSize+10))
		must(t, RewriteRange(f, 3*BlockSize+5, size)) // the last, partial block
		must(t, f.Sync())
		m.Crash(CrashDropUnsynced, nil)
		g, err := m.OpenFile("seg", os.O_RDONLY, 0, OpenOptions{})
		must(t, err)
		defer g.Close()
		got := make([]byte, size+10)
		n, _ := g.ReadAt(got, 0)
		if n != size || !bytes.Equal(got[:n], want) {
			t.Fatalf("after the rewrite, a Sync and a crash: %d bytes, equal to what was written: %v", n, bytes.Equal(got[:min(n, size)], want[:min(n, size)]))
		}
		if n, err := g.Size(); err != nil || n != size {
			t.Fatalf("size %d, %v; want %d", n, err, size)
		}
	})
	t.Run("os", func(t *testing.T) {
		f, err := Default.OpenFile(filepath.Join(t.TempDir(), "seg"), os.O_RDWR|os.O_CREATE, 0o644, OpenOptions{Direct: true})
		must(t, err)
		defer f.Close()
		if !f.Direct() {
			t.Skip("the file system refused O_DIRECT")
		}
		writeTorn(t, f, want)
		must(t, RewriteRange(f, 100, size))
		got := AlignedBuffer(size)
		n, _ := f.ReadAt(got, 0)
		if n != size || !bytes.Equal(got[:n], want) {
			t.Fatalf("after the rewrite: %d bytes, want %d unchanged", n, size)
		}
		if n, err := f.Size(); err != nil || n != size {
			t.Fatalf("size %d, %v; want %d", n, err, size)
		}
	})
}

// writeTorn writes want to direct file f in whole blocks, then cuts the
// file to len(want) (a torn tail's size).
func writeTorn(t *testing.T, f File, want []byte) {
	t.Helper()
	b := AlignedBuffer(len(want))
	copy(b, want)
	_, err := f.WriteAt(b, 0)
	must(t, err)
	must(t, f.Truncate(int64(len(want))))
}

package vfs

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestRewriteRangeDirect: RewriteRange writes a range of a file open for
// direct I/O again in whole blocks (a file system may take O_DIRECT and
// still write through its cache): bytes after a failed Sync (MemFS: lost
// at a crash, still readable) become durable with the next Sync.
func TestRewriteRangeDirect(t *testing.T) {
	const size = 3 * BlockSize
	want := pattern(size)
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
	must(t, RewriteRange(f, 2*BlockSize+5, size))
	must(t, f.Sync())
	m.Crash(CrashDropUnsynced, nil)
	g, err := m.OpenFile("seg", os.O_RDONLY, 0, OpenOptions{})
	must(t, err)
	defer g.Close()
	got := make([]byte, size+10)
	n, _ := g.ReadAt(got, 0)
	if n != size || !bytes.Equal(got[:n], want) {
		t.Fatalf("after the rewrite, a Sync and a crash: %d bytes, want the %d written", n, size)
	}
}

// TestRewriteRangeDirectTornTail: a direct file that ends inside a block
// (a torn tail that recovery cut) is rewritten up to its last whole block
// and never grown: a crash between growing it and cutting it back could
// leave a torn sector past its end. On MemFS, and on the OS's file system
// where it takes O_DIRECT.
func TestRewriteRangeDirectTornTail(t *testing.T) {
	const size = 3*BlockSize + 1000
	want := pattern(size)
	m := NewMem()
	mf, err := m.OpenFile("seg", os.O_RDWR|os.O_CREATE, 0o644, OpenOptions{Direct: true})
	must(t, err)
	of, err := Default.OpenFile(filepath.Join(t.TempDir(), "seg"), os.O_RDWR|os.O_CREATE, 0o644, OpenOptions{Direct: true})
	must(t, err)
	defer of.Close()
	for name, f := range map[string]File{"mem": mf, "os": of} {
		if !f.Direct() {
			t.Logf("%s: the file system refused O_DIRECT", name)
			continue
		}
		writeTorn(t, f, want)
		must(t, f.Sync())
		if name == "mem" {
			must(t, m.SyncDir("."))
			m.CrashAfterOps(1) // after the rewrite's first write
		}
		err := RewriteRange(f, 100, size)
		if name == "mem" {
			// Nothing was written past the end: every crash image has
			// the file as it was.
			for seed := range uint64(20) {
				img := m.CrashedClone(CrashStrict, rand.New(rand.NewPCG(seed, 1)))
				g, gerr := img.OpenFile("seg", os.O_RDONLY, 0, OpenOptions{})
				must(t, gerr)
				if n, _ := g.Size(); n != size {
					t.Fatalf("%s: a crash during the rewrite left %d bytes, want %d", name, n, size)
				}
				g.Close()
			}
			continue
		}
		must(t, err)
		got := AlignedBuffer(size)
		n, _ := f.ReadAt(got, 0)
		if n != size || !bytes.Equal(got[:n], want) {
			t.Errorf("%s: after the rewrite: %d bytes, want %d unchanged", name, n, size)
		}
		if n, err := f.Size(); err != nil || n != size {
			t.Errorf("%s: size %d, %v; want %d", name, n, err, size)
		}
	}
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	return b
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

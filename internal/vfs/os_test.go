package vfs

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// osRoundTrip writes, syncs, reads back, truncates and re-reads an aligned
// file on fs in dir, and returns the file's Direct().
func osRoundTrip(t *testing.T, fs FS, dir string, direct bool) bool {
	t.Helper()
	name := filepath.Join(dir, "seg")
	f, err := fs.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644, OpenOptions{Direct: direct})
	must(t, err)
	defer f.Close()
	if f.Name() != name {
		t.Errorf("Name() = %q, want %q", f.Name(), name)
	}
	buf := AlignedBuffer(3 * BlockSize)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	if n, err := f.WriteAt(buf, 0); err != nil || n != len(buf) {
		t.Fatalf("write: %d, %v", n, err)
	}
	must(t, f.Sync())
	if size, err := f.Size(); err != nil || size != int64(len(buf)) {
		t.Fatalf("size: %d, %v", size, err)
	}
	got := AlignedBuffer(2 * BlockSize)
	if n, err := f.ReadAt(got, BlockSize); err != nil || n != len(got) || !bytes.Equal(got, buf[BlockSize:]) {
		t.Fatalf("read: %d, %v, equal %v", n, err, bytes.Equal(got, buf[BlockSize:]))
	}
	// A file whose size is not a multiple of BlockSize: the last read is
	// short and must end with io.EOF, not EINVAL.
	must(t, f.Truncate(BlockSize+100))
	clear(got)
	n, err := f.ReadAt(got, 0)
	if n != BlockSize+100 || err != io.EOF || !bytes.Equal(got[:n], buf[:n]) {
		t.Fatalf("read across unaligned EOF: %d, %v", n, err)
	}
	if n, err := f.ReadAt(got, 4*BlockSize); n != 0 || err != io.EOF {
		t.Fatalf("read past EOF: %d, %v", n, err)
	}
	if direct {
		// Alignment is enforced whenever direct I/O was asked for.
		if _, err := f.WriteAt(buf[:100], 0); !errors.Is(err, ErrUnaligned) {
			t.Fatalf("unaligned write: %v, want ErrUnaligned", err)
		}
		if _, err := f.ReadAt(buf[1:BlockSize+1], 0); !errors.Is(err, ErrUnaligned) {
			t.Fatalf("unaligned read: %v, want ErrUnaligned", err)
		}
	}
	// Concurrent readers on one handle.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := AlignedBuffer(BlockSize)
			for range 50 {
				if n, err := f.ReadAt(b, 0); err != nil || n != BlockSize || !bytes.Equal(b, buf[:BlockSize]) {
					t.Errorf("concurrent read: %d, %v", n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return f.Direct()
}

func TestOSRoundTripBuffered(t *testing.T) {
	if osRoundTrip(t, Default, t.TempDir(), false) {
		t.Fatal("Direct() true without OpenOptions.Direct")
	}
}

func TestOSFileSystemOps(t *testing.T) {
	fs, dir := OS(), t.TempDir()
	must(t, fs.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
	for _, n := range []string{"c", "a1", "b", "a"} {
		f, err := fs.OpenFile(filepath.Join(dir, "a", "b", n), os.O_RDWR|os.O_CREATE, 0o644, OpenOptions{})
		must(t, err)
		must(t, f.Close())
	}
	names, err := fs.List(filepath.Join(dir, "a", "b"))
	must(t, err)
	if want := []string{"a", "a1", "b", "c"}; !slices.Equal(names, want) {
		t.Fatalf("List = %v, want %v", names, want)
	}
	must(t, fs.Rename(filepath.Join(dir, "a", "b", "c"), filepath.Join(dir, "a", "b", "d")))
	must(t, fs.Remove(filepath.Join(dir, "a", "b", "a")))
	must(t, fs.SyncDir(filepath.Join(dir, "a", "b")))
	names, err = fs.List(filepath.Join(dir, "a", "b"))
	must(t, err)
	if want := []string{"a1", "b", "d"}; !slices.Equal(names, want) {
		t.Fatalf("List = %v, want %v", names, want)
	}
	fi, err := fs.Stat(filepath.Join(dir, "a"))
	must(t, err)
	if !fi.IsDir() {
		t.Fatal("Stat: not a dir")
	}
	if _, err := fs.Stat(filepath.Join(dir, "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Stat of missing: %v", err)
	}
	if err := fs.SyncDir(filepath.Join(dir, "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("SyncDir of missing: %v", err)
	}
}

func TestOSLock(t *testing.T) {
	name := filepath.Join(t.TempDir(), "LOCK")
	l, err := Default.Lock(name)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip(err)
	}
	must(t, err)
	// flock is per open file description: a second Lock from this same
	// process must fail too.
	l2, err := Default.Lock(name)
	if !errors.Is(err, ErrLocked) {
		if l2 != nil {
			l2.Close()
		}
		t.Fatalf("second Lock in the same process: %v, want ErrLocked", err)
	}
	must(t, l.Close())
	l, err = Default.Lock(name)
	if err != nil {
		t.Fatalf("Lock after Close: %v", err)
	}
	must(t, l.Close())
}

func TestAlignedBuffer(t *testing.T) {
	for _, n := range []int{0, 1, 100, BlockSize - 1, BlockSize, BlockSize + 1, 5 * BlockSize, 1 << 20} {
		for range 8 { // several allocations, so some start unaligned
			b := AlignedBuffer(n)
			want := (n + BlockSize - 1) / BlockSize * BlockSize
			if len(b) != want || cap(b) != want {
				t.Fatalf("AlignedBuffer(%d): len %d cap %d, want %d", n, len(b), cap(b), want)
			}
			if !IsAligned(b) {
				t.Fatalf("AlignedBuffer(%d) at %#x not aligned", n, addrOf(b))
			}
			if len(b) > 0 && addrOf(b)%BlockSize != 0 {
				t.Fatalf("AlignedBuffer(%d) at %#x", n, addrOf(b))
			}
		}
	}
	b := AlignedBuffer(2 * BlockSize)
	if IsAligned(b[1 : BlockSize+1]) {
		t.Error("IsAligned true for an unaligned address")
	}
	if IsAligned(b[:100]) {
		t.Error("IsAligned true for an unaligned length")
	}
	if !IsAligned(b[BlockSize:]) {
		t.Error("IsAligned false for the second block")
	}
}

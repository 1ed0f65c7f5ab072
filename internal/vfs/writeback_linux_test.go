package vfs

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residentPages counts the pages of path's first n bytes in the OS page
// cache (mincore on a mapping of the file).
func residentPages(t *testing.T, path string, n int) int {
	t.Helper()
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, n, unix.PROT_READ, unix.MAP_SHARED)
	must(t, err)
	defer unix.Munmap(m)
	vec := make([]byte, (n+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(n), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	resident := 0
	for _, v := range vec {
		resident += int(v & 1)
	}
	return resident
}

// TestDropWritten: a buffered file's written pages stay in the page cache
// until DropWritten, which leaves none of its range there; direct and
// in-memory files accept both calls and do nothing.
func TestDropWritten(t *testing.T) {
	dir := t.TempDir()
	if fsType(t, dir) == unix.TMPFS_MAGIC {
		t.Skip("tmpfs pages are the file: they cannot be dropped")
	}
	const size = 4 << 20
	path := filepath.Join(dir, "log")
	f, err := Default.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644, OpenOptions{})
	must(t, err)
	defer f.Close()
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i)
	}
	_, err = f.WriteAt(buf, 0)
	must(t, err)
	pages := size / os.Getpagesize()
	if got := residentPages(t, path, size); got < pages/2 {
		t.Fatalf("%d of %d pages resident right after the write: the test cannot tell", got, pages)
	}
	must(t, StartWriteback(f, 0, size/2))
	must(t, DropWritten(f, 0, size/2))
	got := residentPages(t, path, size)
	if got > pages/2 {
		t.Errorf("%d of %d pages resident after dropping the first half", got, pages)
	}
	must(t, DropWritten(f, size/2, size/2))
	if got := residentPages(t, path, size); got != 0 {
		t.Errorf("%d of %d pages resident after dropping all", got, pages)
	}
	back := make([]byte, size)
	_, err = f.ReadAt(back, 0)
	must(t, err)
	if string(back) != string(buf) {
		t.Fatal("the file's bytes changed")
	}

	for _, other := range []File{mustOpenDirect(t, filepath.Join(dir, "direct")), mustOpenMem(t)} {
		must(t, StartWriteback(other, 0, 4096))
		must(t, DropWritten(other, 0, 4096))
		other.Close()
	}
}

func mustOpenDirect(t *testing.T, path string) File {
	t.Helper()
	f, err := Default.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644, OpenOptions{Direct: true})
	must(t, err)
	return f
}

func mustOpenMem(t *testing.T) File {
	t.Helper()
	fs := NewMem()
	f, err := fs.OpenFile("f", os.O_RDWR|os.O_CREATE, 0o644, OpenOptions{})
	must(t, err)
	return f
}

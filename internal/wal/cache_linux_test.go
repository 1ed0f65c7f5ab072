package wal

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestCacheResidentOS writes 8 MiB of records through the log on the OS
// file system and counts the log file's pages in the page cache (mincore):
// about two chunks, not the whole file.
func TestCacheResidentOS(t *testing.T) {
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type == unix.TMPFS_MAGIC {
		t.Skip("tmpfs pages are the file: they cannot be dropped")
	}
	const queueSize = 64 << 10
	l := mustOpen(t, dir, Options{SyncMode: SyncNever, QueueSize: queueSize})
	defer l.Close()
	p := make([]byte, 1000)
	for range 8000 {
		if _, err := l.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.settle(); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	path, size := l.f.Name(), l.off
	l.mu.Unlock()

	f, err := os.Open(filepath.Clean(path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (int(size)+pageSize-1)/pageSize)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(size), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	resident := 0
	for _, v := range vec {
		resident += int(v & 1)
	}
	if bound := 2*(cacheChunk+queueSize) + pageSize; resident*pageSize > bound {
		t.Errorf("%d of the log's %d bytes in the page cache, want at most %d", resident*pageSize, size, bound)
	}
	t.Logf("%d KiB of %d KiB resident", resident*pageSize>>10, size>>10)
}

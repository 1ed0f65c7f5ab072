package vfs

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func fsType(t *testing.T, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Type)
}

func TestOSRoundTripDirect(t *testing.T) {
	dir := t.TempDir()
	direct := osRoundTrip(t, Default, dir, true)
	if fsType(t, dir) == unix.EXT4_SUPER_MAGIC && !direct {
		t.Fatal("ext4 accepts O_DIRECT, yet Direct() is false")
	}
	t.Logf("%s: Direct() = %v", dir, direct)

	// Direct() must mean O_DIRECT is really set on the descriptor.
	f, err := Default.OpenFile(filepath.Join(dir, "check"), os.O_RDWR|os.O_CREATE, 0o644, OpenOptions{Direct: true})
	must(t, err)
	defer f.Close()
	flags, err := unix.FcntlInt(f.(*osFile).f.Fd(), unix.F_GETFL, 0)
	must(t, err)
	if got := flags&unix.O_DIRECT != 0; got != f.Direct() {
		t.Fatalf("O_DIRECT set: %v, Direct(): %v", got, f.Direct())
	}
}

// TestOSDirectFallbackEINVAL simulates a file system that refuses O_DIRECT:
// the file must open buffered, Direct() false, I/O working, and O_EXCL must
// still create the file (a retried open would find it already there).
func TestOSDirectFallbackEINVAL(t *testing.T) {
	saved := setDirectFlag
	t.Cleanup(func() { setDirectFlag = saved })
	setDirectFlag = func(uintptr) error { return unix.EINVAL }
	if osRoundTrip(t, Default, t.TempDir(), true) {
		t.Fatal("Direct() true although O_DIRECT was refused")
	}

	// Any other error fails the open and leaves no descriptor behind.
	setDirectFlag = func(uintptr) error { return unix.EPERM }
	if _, err := Default.OpenFile(filepath.Join(t.TempDir(), "x"), os.O_RDWR|os.O_CREATE, 0o644, OpenOptions{Direct: true}); err == nil {
		t.Fatal("open succeeded although setting O_DIRECT failed with EPERM")
	}
}

// TestOSDirectTmpfs runs the round trip on tmpfs. Before Linux 6.6 tmpfs
// refused O_DIRECT, exercising the real fallback; later kernels accept it.
func TestOSDirectTmpfs(t *testing.T) {
	const shm = "/dev/shm"
	if _, err := os.Stat(shm); err != nil {
		t.Skip("no /dev/shm")
	}
	if fsType(t, shm) != unix.TMPFS_MAGIC {
		t.Skip("/dev/shm is not tmpfs")
	}
	dir, err := os.MkdirTemp(shm, "vfstest")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	direct := osRoundTrip(t, Default, dir, true)
	t.Logf("tmpfs: Direct() = %v (true on Linux >= 6.6)", direct)
}

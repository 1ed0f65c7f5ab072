package hostenv

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadAheadKBSysfs(t *testing.T) {
	// A fake sysfs: a disk 8:0 with a queue, its partition 8:1 without one,
	// and a device 9:0 without any queue.
	root := t.TempDir()
	disk := filepath.Join(root, "devices", "sda")
	must(t, os.MkdirAll(filepath.Join(disk, "queue"), 0o755))
	must(t, os.WriteFile(filepath.Join(disk, "queue", "read_ahead_kb"), []byte("128\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(disk, "sda1"), 0o755))
	must(t, os.WriteFile(filepath.Join(disk, "sda1", "partition"), []byte("1\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(root, "devices", "virtual", "odd"), 0o755))
	block := filepath.Join(root, "dev", "block")
	must(t, os.MkdirAll(block, 0o755))
	must(t, os.Symlink("../../devices/sda", filepath.Join(block, "8:0")))
	must(t, os.Symlink("../../devices/sda/sda1", filepath.Join(block, "8:1")))
	must(t, os.Symlink("../../devices/virtual/odd", filepath.Join(block, "9:0")))

	for _, tt := range []struct {
		major, minor uint32
		want         int
	}{
		{8, 0, 128}, // the disk itself
		{8, 1, 128}, // a partition: its disk's queue
		{9, 0, -1},  // no queue anywhere
		{0, 42, -1}, // not a block device (tmpfs, overlay)
		{8, 16, -1}, // not in sysfs
	} {
		if got := readAheadKB(block, tt.major, tt.minor); got != tt.want {
			t.Errorf("readAheadKB(%d:%d) = %d, want %d", tt.major, tt.minor, got, tt.want)
		}
	}
}

func TestReadAheadKBMissingDir(t *testing.T) {
	if got := ReadAheadKB(filepath.Join(t.TempDir(), "missing")); got != -1 {
		t.Errorf("ReadAheadKB of a missing directory = %d, want -1", got)
	}
}

func TestDropCaches(t *testing.T) {
	if !CanDropCaches() {
		t.Skip("cannot write /proc/sys/vm/drop_caches (not root, or /proc/sys read-only)")
	}
	if err := DropCaches(); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

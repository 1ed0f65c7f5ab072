//go:build linux

package strata

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// loopDevice attaches a loop device to a new file of size bytes and
// returns its path, detached at the test's end; the test is skipped where
// that cannot be done (not root, no losetup, no loop driver).
func loopDevice(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a loop device needs root")
	}
	if _, err := exec.LookPath("losetup"); err != nil {
		t.Skip("no losetup")
	}
	img := filepath.Join(t.TempDir(), "flash.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).CombinedOutput()
	if err != nil {
		t.Skipf("losetup: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
	return dev
}

// TestFlashCacheOnBlockDevice: a flash cache on a block device (a loop
// device here) serves reads and restarts warm after a clean Close, as on
// a file. stat(2) gives a block device's size as 0; the cache took that
// for a file to extend, whose ftruncate(2) a device refuses, so Open
// always ran without its cache. A device smaller than the cache's Size is
// refused with an error that says so, and the database runs without it.
func TestFlashCacheOnBlockDevice(t *testing.T) {
	const flash = 16 << 20
	dev := loopDevice(t, flash)
	n, cache := 20000, int64(2<<20)
	opts := func() *Options {
		return &Options{CacheSize: cache, Partitions: 2, Sync: SyncNever, FlashCache: FlashCache{Path: dev, Size: flash, Format: true}}
	}
	dir := t.TempDir()
	db, err := Open(dir, opts())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	loadKeys(t, db, n, 1)
	readKeys(t, db, n, 1, 2*n, rng)
	st := db.Stats().FlashCache
	// A new device is not empty as a new file is: it holds no valid
	// superblock (zeros here).
	if !st.Enabled || !st.Active || !strings.HasPrefix(st.OpenState, "cold: ") || st.Written == 0 || st.Hits == 0 {
		t.Fatalf("first session on %s: %+v", dev, st)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(dir, opts())
	if err != nil {
		t.Fatal(err)
	}
	readKeys(t, db, n, 1, n/2, rng)
	if st := db.Stats().FlashCache; st.OpenState != "warm" || st.Hits == 0 {
		t.Fatalf("after a clean restart on %s: %+v", dev, st)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	small := loopDevice(t, 4<<20)
	o := opts()
	o.FlashCache.Path = small
	db, err = Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if st := db.Stats().FlashCache; st.Active || !strings.Contains(st.OpenState+st.DisabledBy, "block device must hold") {
		t.Fatalf("a device smaller than Size: %+v", st)
	}
}

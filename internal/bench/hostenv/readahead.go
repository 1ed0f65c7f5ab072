package hostenv

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ReadAheadKB returns the read-ahead (KiB) of the block device holding dir,
// or -1 when unknown (no block device behind the file system, e.g. tmpfs or
// overlay, or no sysfs). Read-ahead matters for engines that read through
// the page cache (mmap, buffered reads) and not for direct I/O, so results
// report it.
func ReadAheadKB(dir string) int {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return -1
	}
	return readAheadKB("/sys/dev/block", unix.Major(st.Dev), unix.Minor(st.Dev))
}

// readAheadKB looks the device up under sysDevBlock (/sys/dev/block, whose
// entries "major:minor" link to the device's sysfs directory). A partition
// has no queue of its own: its disk, the parent directory, has.
func readAheadKB(sysDevBlock string, major, minor uint32) int {
	dev := filepath.Join(sysDevBlock, strconv.FormatUint(uint64(major), 10)+":"+strconv.FormatUint(uint64(minor), 10))
	real, err := filepath.EvalSymlinks(dev)
	if err != nil {
		return -1
	}
	for _, d := range []string{real, filepath.Dir(real)} {
		b, err := os.ReadFile(filepath.Join(d, "queue", "read_ahead_kb"))
		if err != nil {
			continue
		}
		kb, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return -1
		}
		return kb
	}
	return -1
}

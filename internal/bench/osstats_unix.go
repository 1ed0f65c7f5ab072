//go:build unix

package bench

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

// peakRSS is the process's maximum resident set size in bytes.
func peakRSS() (int64, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("bench: getrusage: %w", err)
	}
	rss := int64(ru.Maxrss)
	if runtime.GOOS != "darwin" && runtime.GOOS != "ios" {
		rss *= 1024 // KiB everywhere but Apple's kernels, which report bytes
	}
	return rss, nil
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() (user, sys time.Duration, err error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, fmt.Errorf("bench: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), nil
}

// dropPageCache writes dirty pages back and asks Linux to drop its clean
// page cache, so that the measured phase starts cold. It needs root.
func dropPageCache() error {
	syscall.Sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("1"), 0); err != nil {
		return fmt.Errorf("bench: drop page cache: %w", err)
	}
	return nil
}

// allocatedSize is the space a file occupies on its device: its allocated
// blocks, not its apparent size, so that preallocated sparse files (Badger's
// value log and memtable files) count what they use, and every engine is
// measured the same way.
func allocatedSize(info os.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return info.Size()
}

package vfs

import (
	"fmt"
	"os"
	"runtime"
)

// RemoveStep is how many bytes RemoveGradually frees per truncation.
const RemoveStep = 4 << 20

// RemoveGradually deletes the file at path after truncating it from its
// end RemoveStep bytes at a time, yielding the processor between steps.
//
// A goroutine in a system call keeps its Go processor (P) until the
// runtime's monitor takes it back, which in a busy process can take up to
// 10 ms; with GOMAXPROCS 2, the other goroutines share one processor
// meanwhile. On ext4 (this project's benchmark machine) unlinking a 70 MB
// file took 9–15 ms in the kernel, idle or not: the checkpoint's deletion
// of the WAL file it made obsolete stalled a committer for 10 ms at every
// checkpoint (docs/BENCHMARKS.md, twenty-first session). Freed 4 MiB at a
// time, each call takes well under a millisecond.
//
// No one may read or write the file meanwhile: callers rename it to a name
// nothing else opens first, and remove leftovers of such names when they
// open (a crash can leave the file partly truncated).
func RemoveGradually(fs FS, path string) error {
	f, err := fs.OpenFile(path, os.O_RDWR, 0, OpenOptions{})
	if err != nil {
		return fmt.Errorf("vfs: open %s to remove it: %w", path, err)
	}
	size, err := f.Size()
	for err == nil && size > RemoveStep {
		size -= RemoveStep
		err = f.Truncate(size)
		runtime.Gosched()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("vfs: truncate %s to remove it: %w", path, err)
	}
	return fs.Remove(path)
}

package vfs

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// RemoveStep is how many bytes RemoveGradually frees per truncation.
const RemoveStep = 4 << 20

// RemoveGradually deletes the file at path after truncating it from its
// end RemoveStep bytes at a time, pausing between steps (FreeGradually).
//
// A goroutine in a system call keeps its Go processor (P) until the
// runtime's monitor takes it back, which in a busy process can take up to
// 10 ms; with GOMAXPROCS 2, the other goroutines share one processor
// meanwhile. On ext4 (this project's benchmark machine) unlinking a 70 MB
// file took 9–15 ms in the kernel, idle or not: the checkpoint's deletion
// of the WAL file it made obsolete stalled a committer for 10 ms at every
// checkpoint (docs/BENCHMARKS.md, twenty-first session). Freed 4 MiB at a
// time, each call took 0.6–0.7 ms there (70 MB in 18 steps: 12 ms in all).
// The file is removed even if opening or truncating it failed.
//
// No one may read or write the file meanwhile: callers rename it to a name
// nothing else opens first, and remove leftovers of such names when they
// open (a crash can leave the file partly truncated).
func RemoveGradually(fs FS, path string) error {
	var errs []error
	if f, err := fs.OpenFile(path, os.O_RDWR, 0, OpenOptions{}); err != nil {
		errs = append(errs, fmt.Errorf("vfs: open %s to free it: %w", path, err))
	} else {
		if err := FreeGradually(f, RemoveStep); err != nil {
			errs = append(errs, fmt.Errorf("vfs: free %s: %w", path, err))
		}
		f.Close()
	}
	// Removed whatever happened above: the space comes back at the last
	// close, as with any unlink.
	if err := fs.Remove(path); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// FreeGradually truncates f, open for writing, from its end step bytes (a
// power of two) at a time, pausing FreePause between steps, down to less
// than step (see RemoveGradually). For a file that is removed already:
// its blocks are freed at its last close, all at once otherwise.
func FreeGradually(f File, step int64) error {
	size, err := f.Size()
	// Down to multiples of step: a size inside a block makes the file
	// system zero that block's tail, reading it first.
	for err == nil && size > step {
		size = (size - 1) &^ (step - 1)
		if err = f.Truncate(size); err == nil {
			time.Sleep(FreePause)
		}
	}
	return err
}

// FreePause is FreeGradually's pause between truncations. A pause, not
// runtime.Gosched: Gosched puts the goroutine on the global run queue,
// where its own processor takes it back at once, while a goroutine another
// goroutine woke waits in that one's processor's queue (a committer waited
// 15 ms so behind a committer that ran on: docs/BENCHMARKS.md,
// twenty-first session). A goroutine asleep leaves its processor free to
// take that one. About twenty pauses per 70 MB file; in an idle process
// Go rounds such a sleep up to about a millisecond.
const FreePause = 100 * time.Microsecond

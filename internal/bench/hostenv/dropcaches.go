package hostenv

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

const dropCachesFile = "/proc/sys/vm/drop_caches"

// CanDropCaches reports whether DropCaches may work: the knob opens for
// writing (root, /proc/sys not read-only). It writes nothing.
func CanDropCaches() bool {
	f, err := os.OpenFile(dropCachesFile, os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// DropCaches writes dirty pages back and then drops the clean page cache,
// dentries and inodes, so that a run after a load starts cold whatever
// engine wrote the data. It affects the whole host.
func DropCaches() error {
	// drop_caches only drops clean pages: sync first.
	unix.Sync()
	if err := os.WriteFile(dropCachesFile, []byte("3"), 0); err != nil {
		return fmt.Errorf("hostenv: drop caches: %w", err)
	}
	return nil
}

//go:build !linux

package bufferpool

// noHugePages does nothing where there are no transparent huge pages to
// keep out of an arena (see arena_linux.go).
func noHugePages([]byte) {}

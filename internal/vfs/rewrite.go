package vfs

import "fmt"

// rewriteChunk is the most RewriteRange holds at a time.
const rewriteChunk = 256 << 10

// unalignedIO is a File that checks its callers' alignment although it is
// buffered (direct I/O asked, the file system refused it: OS, or MemFS
// after RefuseDirect), and can read and write without the check.
type unalignedIO interface {
	readAtUnaligned(p []byte, off int64) (int, error)
	writeAtUnaligned(p []byte, off int64) (int, error)
}

// RewriteRange writes bytes [from, to) of f again with what reading them
// returns, unless f uses direct I/O; the caller syncs f. Recovery calls it
// on what it replays from a buffered file before it syncs it.
//
// After a failed fsync, Linux marks the pages whose write-back failed
// clean: they stay readable from the OS's cache in this boot, a later
// fsync has nothing to write for them and succeeds, and a power loss
// loses them. A store reopened in the same boot (its process restarted
// after the error) would read them as if durable, sync them without
// effect, and build on them. Writing them again dirties the pages, and the
// fsync that follows persists them or fails. (MemFS models this: a failed
// Sync loses the file's dirty bytes; a write of them dirties them again.)
// Direct writes bypass the OS's cache and leave no such copy.
func RewriteRange(f File, from, to int64) error {
	if f.Direct() || from >= to {
		return nil
	}
	// A buffered file opened for direct I/O still checks alignment; the
	// range need not be aligned (a torn tail ends anywhere).
	readAt, writeAt := f.ReadAt, f.WriteAt
	if u, ok := f.(unalignedIO); ok {
		readAt, writeAt = u.readAtUnaligned, u.writeAtUnaligned
	}
	buf := make([]byte, min(rewriteChunk, to-from))
	for off := from; off < to; {
		n := min(int64(len(buf)), to-off)
		if _, err := readAt(buf[:n], off); err != nil {
			return fmt.Errorf("read %d bytes at %d to write them again: %w", n, off, err)
		}
		if _, err := writeAt(buf[:n], off); err != nil {
			return fmt.Errorf("write %d bytes at %d again: %w", n, off, err)
		}
		off += n
	}
	return nil
}

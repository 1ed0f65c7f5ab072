package vfs

// Writebacker is implemented by files whose writes go through the OS page
// cache and that can give its pages back once they are on the device, so
// that a file written once and read rarely (a write-ahead log) does not
// leave its bytes in memory: the OS page cache is charged to the process's
// memory cgroup like the rest of its memory. Files open for direct I/O and
// in-memory files do not need it; use StartWriteback and DropWritten,
// which do nothing for a file without it.
type Writebacker interface {
	// StartWriteback asks the OS to start writing the dirty pages of
	// [off, off+n) to the device, without waiting for them.
	StartWriteback(off, n int64) error
	// DropWritten waits until the pages of [off, off+n) are written to
	// the device, then drops them from the page cache. Treat an error as
	// a write error of the file, like Sync's: waiting consumes the OS's
	// record of a failed writeback, so a later Sync may not report it,
	// and the caller must assume data written to the file is lost.
	DropWritten(off, n int64) error
}

// StartWriteback calls f's StartWriteback if it has one.
func StartWriteback(f File, off, n int64) error {
	if w, ok := f.(Writebacker); ok && n > 0 {
		return w.StartWriteback(off, n)
	}
	return nil
}

// DropWritten calls f's DropWritten if it has one.
func DropWritten(f File, off, n int64) error {
	if w, ok := f.(Writebacker); ok && n > 0 {
		return w.DropWritten(off, n)
	}
	return nil
}

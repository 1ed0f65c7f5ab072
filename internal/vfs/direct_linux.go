//go:build linux

package vfs

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// setDirectFlag adds O_DIRECT to the status flags of the open file fd. It is
// a variable so that tests can make it fail like a file system that refuses
// direct I/O: on Linux 6.6 and later even tmpfs accepts O_DIRECT, so such a
// file system is not always at hand.
var setDirectFlag = func(fd uintptr) error {
	flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	_, err = unix.FcntlInt(fd, unix.F_SETFL, flags|unix.O_DIRECT)
	return err
}

// enableDirect switches f to direct I/O. It reports false, without error,
// if the file system refuses O_DIRECT (EINVAL), and fails on any other error.
func enableDirect(f *os.File) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = setDirectFlag(fd) }); err != nil {
		return false, err
	}
	switch {
	case serr == nil:
		return true, nil
	case errors.Is(serr, unix.EINVAL):
		return false, nil
	default:
		return false, serr
	}
}

// datasync is fdatasync(2): it flushes the file's data and whatever metadata
// is needed to read it back, including its size when that changed, but not
// its timestamps, which saves a journal commit on most file systems.
func datasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: err}
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = unix.Fdatasync(int(fd))
			if serr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: err}
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}

// directReadAt reads with pread(2) on a file open with O_DIRECT, through
// Linux AIO where it can (aio_linux.go).
//
// It does not use os.File.ReadAt, which after a short read at the end of a
// file whose size is not a multiple of BlockSize retries at the unaligned
// offset where the data ended. Current Linux file systems answer that retry
// with end-of-file, because they test for EOF before alignment, but nothing
// promises it (the pre-iomap direct I/O code tested alignment first and
// returned EINVAL). Under O_DIRECT a read is short only at the end of the
// file, so a short read that leaves the offset unaligned is taken for
// end-of-file here without asking the kernel again.
func (f *osFile) directReadAt(p []byte, off int64) (int, error) {
	rc, err := f.f.SyscallConn()
	if err != nil {
		return 0, &os.PathError{Op: "read", Path: f.name, Err: err}
	}
	n := 0
	for n < len(p) {
		var m int
		var rerr error
		// rc.Control holds a reference on the descriptor, so a concurrent
		// Close cannot make us read from a reused descriptor number. (Not
		// rc.Read: that also takes the file's read lock, which would
		// serialize concurrent readers of one file, as os.File.ReadAt
		// does not.)
		if err := rc.Control(func(fd uintptr) {
			if a := asyncReads(); a != nil {
				var done bool
				if m, rerr, done = a.pread(fd, p[n:], off+int64(n), f.pollReads); done {
					return
				}
			}
			for {
				m, rerr = unix.Pread(int(fd), p[n:], off+int64(n))
				if rerr != unix.EINTR {
					return
				}
			}
		}); err != nil {
			return n, &os.PathError{Op: "read", Path: f.name, Err: err}
		}
		if rerr != nil {
			return n, &os.PathError{Op: "read", Path: f.name, Err: rerr}
		}
		if m <= 0 {
			return n, io.EOF
		}
		n += m
		if n < len(p) && (off+int64(n))%BlockSize != 0 {
			return n, io.EOF
		}
	}
	return n, nil
}

// directWriteAt writes with pwrite(2) on a file open with O_DIRECT. Like
// directReadAt it stops, with io.ErrShortWrite, at a short transfer that
// leaves the offset unaligned (the device or quota is full) rather than
// retrying at an offset the kernel would refuse with EINVAL and hiding the
// real cause.
func (f *osFile) directWriteAt(p []byte, off int64) (int, error) {
	rc, err := f.f.SyscallConn()
	if err != nil {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: err}
	}
	n := 0
	for n < len(p) {
		var m int
		var werr error
		if err := rc.Control(func(fd uintptr) {
			for {
				m, werr = unix.Pwrite(int(fd), p[n:], off+int64(n))
				if werr != unix.EINTR {
					return
				}
			}
		}); err != nil {
			return n, &os.PathError{Op: "write", Path: f.name, Err: err}
		}
		if werr != nil {
			return n, &os.PathError{Op: "write", Path: f.name, Err: werr}
		}
		if m <= 0 {
			return n, &os.PathError{Op: "write", Path: f.name, Err: io.ErrShortWrite}
		}
		n += m
		if n < len(p) && (off+int64(n))%BlockSize != 0 {
			return n, &os.PathError{Op: "write", Path: f.name, Err: io.ErrShortWrite}
		}
	}
	return n, nil
}

// StartWriteback implements Writebacker with sync_file_range(2)
// (SYNC_FILE_RANGE_WRITE), which starts writeback without waiting and
// without consuming a writeback error. Files open for direct I/O have no
// dirty pages: nothing to do.
func (f *osFile) StartWriteback(off, n int64) error {
	if f.direct {
		return nil
	}
	return f.fdOp("sync_file_range", func(fd int) error {
		return unix.SyncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}

// DropWritten implements Writebacker: sync_file_range(2) writes the range
// and waits for it (which reports, and consumes, a writeback error like
// fdatasync), then posix_fadvise(POSIX_FADV_DONTNEED) drops its clean pages.
func (f *osFile) DropWritten(off, n int64) error {
	if f.direct {
		return nil
	}
	return f.fdOp("sync_file_range", func(fd int) error {
		flags := unix.SYNC_FILE_RANGE_WAIT_BEFORE | unix.SYNC_FILE_RANGE_WRITE | unix.SYNC_FILE_RANGE_WAIT_AFTER
		if err := unix.SyncFileRange(fd, off, n, flags); err != nil {
			return err
		}
		return unix.Fadvise(fd, off, n, unix.FADV_DONTNEED)
	})
}

// fdOp runs fn on f's descriptor, retrying on EINTR, and names op and the
// file in its error.
func (f *osFile) fdOp(op string, fn func(fd int) error) error {
	rc, err := f.f.SyscallConn()
	if err != nil {
		return &os.PathError{Op: op, Path: f.name, Err: err}
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = fn(int(fd))
			if serr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return &os.PathError{Op: op, Path: f.name, Err: err}
	}
	if serr != nil {
		return &os.PathError{Op: op, Path: f.name, Err: serr}
	}
	return nil
}

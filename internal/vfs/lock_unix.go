//go:build unix

package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes flock(LOCK_EX|LOCK_NB) on name, creating it if missing.
// On a read-only file system, or a file it may not write, it locks the
// existing file opened read-only (flock needs no write access): an
// offline check of a read-only copy or mount still excludes a writer.
//
// flock locks belong to the open file description, not to the process, so
// a second lockFile on the same path fails even in the same process (a
// POSIX fcntl lock would not: those are per process and silently shared).
// The lock is released when the returned Closer closes the file, or when
// the process dies.
func lockFile(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, unix.EROFS) || errors.Is(err, os.ErrPermission) {
		f, err = os.Open(name)
	}
	if err != nil {
		return nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			lerr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
			if lerr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		f.Close()
		return nil, err
	}
	if lerr != nil {
		f.Close()
		if errors.Is(lerr, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, name)
		}
		return nil, &os.PathError{Op: "flock", Path: name, Err: lerr}
	}
	return f, nil
}

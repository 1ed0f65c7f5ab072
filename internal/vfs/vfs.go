// Package vfs is the small file-system interface that every Strata layer
// uses for its I/O, so that tests can run the same code on a fault-injecting
// in-memory file system and experiments on a latency-simulating one.
//
// Three implementations are provided:
//
//   - Default (OS): the real file system, with direct I/O (O_DIRECT on Linux)
//     when asked for and accepted by the file system, and automatic fallback
//     to buffered I/O where it is refused (tmpfs, for instance).
//   - MemFS: an in-memory file system that tracks what has been made durable
//     (File.Sync, FS.SyncDir) and can crash, discarding or tearing everything
//     written since, and inject I/O errors and short writes.
//   - Latency: a wrapper that delays reads and writes like a device (HDD,
//     SATA SSD, NVMe) with a bounded queue, for experiments whose results
//     must be labelled as simulated.
package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// BlockSize is the alignment of direct I/O: file offsets, lengths and
// memory addresses of direct reads and writes must be multiples of it.
const BlockSize = 4096

// ErrInjected is returned (wrapped) by operations that a fault injector failed.
var ErrInjected = errors.New("vfs: injected fault")

// ErrCrashed is returned by every operation on a MemFS after it crashed.
var ErrCrashed = errors.New("vfs: file system crashed")

// ErrLocked is returned (wrapped) by FS.Lock when the lock is already held,
// by another process or by another handle in this one.
var ErrLocked = errors.New("vfs: lock held by another process or handle")

// ErrUnaligned is returned (wrapped) by reads and writes on a file open for
// direct I/O whose offset, length or buffer address is not a multiple of
// BlockSize. It wraps syscall.EINVAL, which is what the kernel returns for
// such an O_DIRECT request; both implementations check before the kernel
// does so that the error says which of the three was wrong.
var ErrUnaligned = fmt.Errorf("vfs: unaligned direct I/O: %w", syscall.EINVAL)

// OpenOptions are per-file options.
type OpenOptions struct {
	// Direct asks for direct I/O (bypassing the OS page cache). If the file
	// system refuses it, the file is opened buffered and File.Direct
	// reports false. With direct I/O, offsets, lengths and buffer addresses
	// must be BlockSize-aligned (see AlignedBuffer).
	Direct bool
	// PollReads makes a direct read through Linux AIO wait for its
	// completion by polling for up to 200 µs before its goroutine parks,
	// when it is the only read in flight and GOMAXPROCS is 2 or more
	// (aio_linux.go): a parked reader can wait long to be woken while the
	// process's other goroutines keep its CPUs busy. It costs the CPU time
	// of the wait.
	PollReads bool
}

// FS is a file system.
type FS interface {
	// OpenFile opens or creates name with os.O_* flags, like os.OpenFile.
	OpenFile(name string, flag int, perm os.FileMode, opts OpenOptions) (File, error)
	// Remove deletes a file or an empty directory.
	Remove(name string) error
	// Rename atomically replaces newname with oldname.
	Rename(oldname, newname string) error
	// MkdirAll creates a directory and its parents.
	MkdirAll(dir string, perm os.FileMode) error
	// List returns the names (not paths) of the entries of dir, sorted.
	List(dir string) ([]string, error)
	// Stat describes name.
	Stat(name string) (os.FileInfo, error)
	// SyncDir makes the directory entries of dir durable (creations,
	// renames and removals of its files).
	SyncDir(dir string) error
	// Lock takes an exclusive advisory lock on name (created if missing),
	// failing at once if another holder, in this or another process, has it.
	Lock(name string) (io.Closer, error)
}

// File is an open file. Positional reads and writes only: every layer
// manages its own offsets, so concurrent readers need no shared cursor.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	// Sync makes the file's data and size durable (fdatasync).
	Sync() error
	// Truncate changes the file's size.
	Truncate(size int64) error
	// Size is the file's current size.
	Size() (int64, error)
	// Direct reports whether the file is really open for direct I/O.
	Direct() bool
	// Name is the path the file was opened with.
	Name() string
}

// The implementations, checked at compile time.
var (
	_ FS   = osFS{}
	_ FS   = (*MemFS)(nil)
	_ FS   = (*LatencyFS)(nil)
	_ File = (*osFile)(nil)
	_ File = (*memFile)(nil)
	_ File = (*latencyFile)(nil)
)

// SyncAncestors makes the directory entries of dir and of each of its
// ancestors durable (fsync of every parent up to the root). A store that may
// have just created dir, and parents of it, calls this before it
// acknowledges anything stored there: otherwise a crash could lose the
// whole directory.
func SyncAncestors(fs FS, dir string) error {
	for d := filepath.Clean(dir); ; {
		parent := filepath.Dir(d)
		if err := fs.SyncDir(parent); err != nil {
			return fmt.Errorf("sync %s: %w", parent, err)
		}
		if parent == d || parent == "." || parent == string(filepath.Separator) {
			return nil
		}
		d = parent
	}
}

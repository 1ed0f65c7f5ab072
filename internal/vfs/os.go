package vfs

import (
	"io"
	"os"
	"slices"
)

// Default is the operating system's file system; see OS.
var Default FS = OS()

// OS returns the operating system's file system.
//
// Files opened with OpenOptions.Direct use direct I/O where the platform and
// the file system allow it: on Linux O_DIRECT is set on the open file, and
// if the file system refuses it (EINVAL) the file stays buffered and
// File.Direct reports false. On other platforms files are always buffered.
// Whenever direct I/O was requested, reads and writes are checked for
// BlockSize alignment even if the file ended up buffered, so that code
// tested on a file system that refuses O_DIRECT does not break on one that
// accepts it.
//
// File.Sync is fdatasync on Linux (the file's data and size, not its
// timestamps) and fsync elsewhere. FS.Lock is flock(LOCK_EX|LOCK_NB) on Unix
// systems.
func OS() FS { return osFS{} }

// osFS implements FS on the os package.
type osFS struct{}

// OpenFile implements FS.
func (osFS) OpenFile(name string, flag int, perm os.FileMode, opts OpenOptions) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	file := &osFile{f: f, name: name, checkAlign: opts.Direct, pollReads: opts.PollReads}
	if opts.Direct {
		// O_DIRECT is switched on after the open rather than passed to it:
		// on a file system that refuses O_DIRECT, open(O_CREAT|O_DIRECT)
		// fails with EINVAL after it may already have created the file, so
		// a retry without O_DIRECT would break O_EXCL (EEXIST on our own
		// file) or, without O_EXCL, lose the caller's exclusivity.
		// fcntl(F_SETFL) runs the same "can this file do direct I/O" check
		// and leaves the open file untouched when it fails.
		direct, err := enableDirect(f)
		if err != nil {
			f.Close()
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		file.direct = direct
	}
	return file, nil
}

// Remove implements FS.
func (osFS) Remove(name string) error { return os.Remove(name) }

// Rename implements FS.
func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

// MkdirAll implements FS.
func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }

// List implements FS.
func (osFS) List(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// Stat implements FS.
func (osFS) Stat(name string) (os.FileInfo, error) { return os.Stat(name) }

// SyncDir implements FS. It fsyncs the directory itself, which is what makes
// creations, renames and removals of its entries durable.
func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return serr
	}
	return cerr
}

// Lock implements FS.
func (osFS) Lock(name string) (io.Closer, error) { return lockFile(name) }

// osFile implements File on an *os.File.
type osFile struct {
	f    *os.File
	name string
	// direct: O_DIRECT is really set on f.
	direct bool
	// checkAlign: direct I/O was requested, so alignment is enforced even
	// if the file system refused it (see OS).
	checkAlign bool
	// pollReads: direct reads poll for their completion (OpenOptions).
	pollReads bool
}

// ReadAt implements File.
func (f *osFile) ReadAt(p []byte, off int64) (int, error) {
	if f.checkAlign {
		if err := checkAligned("read", f.name, p, off); err != nil {
			return 0, err
		}
	}
	if f.direct {
		return f.directReadAt(p, off)
	}
	return f.f.ReadAt(p, off)
}

// WriteAt implements File.
func (f *osFile) WriteAt(p []byte, off int64) (int, error) {
	if f.checkAlign {
		if err := checkAligned("write", f.name, p, off); err != nil {
			return 0, err
		}
	}
	if f.direct {
		return f.directWriteAt(p, off)
	}
	return f.f.WriteAt(p, off)
}

// readAtUnaligned reads without the alignment check when the file is
// buffered (unalignedIO); a direct file's reads stay checked.
func (f *osFile) readAtUnaligned(p []byte, off int64) (int, error) {
	if f.direct {
		return f.ReadAt(p, off)
	}
	return f.f.ReadAt(p, off)
}

// writeAtUnaligned writes without the alignment check when the file is
// buffered (unalignedIO); a direct file's writes stay checked.
func (f *osFile) writeAtUnaligned(p []byte, off int64) (int, error) {
	if f.direct {
		return f.WriteAt(p, off)
	}
	return f.f.WriteAt(p, off)
}

// Close implements File.
func (f *osFile) Close() error { return f.f.Close() }

// Sync implements File.
func (f *osFile) Sync() error { return datasync(f.f) }

// Truncate implements File.
func (f *osFile) Truncate(size int64) error { return f.f.Truncate(size) }

// Size implements File. A block device's size is where it ends: stat(2)
// says 0 for one (a flash cache may be a device).
func (f *osFile) Size() (int64, error) {
	fi, err := f.f.Stat()
	if err != nil {
		return 0, err
	}
	if m := fi.Mode(); m&os.ModeDevice != 0 && m&os.ModeCharDevice == 0 {
		return f.f.Seek(0, io.SeekEnd) // reads and writes give their offsets
	}
	return fi.Size(), nil
}

// Direct implements File.
func (f *osFile) Direct() bool { return f.direct }

// Name implements File.
func (f *osFile) Name() string { return f.name }

//go:build !linux

package vfs

import "os"

// enableDirect reports false: direct I/O is only implemented on Linux.
// (macOS has F_NOCACHE, which bypasses the cache without the alignment
// rules; Strata does not need it.)
func enableDirect(f *os.File) (bool, error) { return false, nil }

// datasync is os.File.Sync, which is fsync(2) (F_FULLFSYNC on macOS).
func datasync(f *os.File) error { return f.Sync() }

// directReadAt is never called off Linux, where no file is direct.
func (f *osFile) directReadAt(p []byte, off int64) (int, error) { return f.f.ReadAt(p, off) }

// directWriteAt is never called off Linux, where no file is direct.
func (f *osFile) directWriteAt(p []byte, off int64) (int, error) { return f.f.WriteAt(p, off) }

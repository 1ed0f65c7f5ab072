//go:build !linux

package vfs

// AsyncReads reports whether direct reads go through AIO: only on Linux.
func AsyncReads() bool { return false }

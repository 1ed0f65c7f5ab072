//go:build !linux

package vfs

import "time"

// AsyncReads reports whether direct reads go through AIO: only on Linux.
func AsyncReads() bool { return false }

// ReadOverhead is the mean CPU time of a read through AIO outside the
// device's wait: there is none without AIO.
func ReadOverhead() (d time.Duration, ok bool) { return 0, false }

package vfs

import (
	"fmt"
	"os"
	"unsafe"
)

// AlignedBuffer returns a zeroed buffer usable for direct I/O: its length is
// n rounded up to a multiple of BlockSize and its first byte is at a
// BlockSize-aligned address. Its capacity equals its length, so an append
// reallocates (losing the alignment) instead of silently growing in place.
//
// Go's allocator only promises word alignment, so the buffer is cut out of
// an allocation one block larger than needed. The garbage collector does not
// move heap objects, so the alignment holds for the buffer's lifetime.
// AlignedBuffer panics if n is negative.
func AlignedBuffer(n int) []byte {
	if n < 0 {
		panic(fmt.Sprintf("vfs: AlignedBuffer(%d): negative size", n))
	}
	size := alignUp(n)
	if size == 0 {
		return []byte{}
	}
	buf := make([]byte, size+BlockSize)
	off := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(buf))) & (BlockSize - 1)); r != 0 {
		off = BlockSize - r
	}
	return buf[off : off+size : off+size]
}

// IsAligned reports whether b can be the buffer of a direct read or write:
// its length and the address of its first byte are both multiples of
// BlockSize. An empty slice is aligned (a zero-length transfer needs no
// buffer).
func IsAligned(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	return len(b)%BlockSize == 0 && addrOf(b)%BlockSize == 0
}

// alignUp rounds n up to a multiple of BlockSize.
func alignUp(n int) int {
	return (n + BlockSize - 1) &^ (BlockSize - 1)
}

// addrOf is the address of b's first element (0 for an empty slice).
func addrOf(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))
}

// checkAligned returns an error wrapping ErrUnaligned, in an *os.PathError
// for op on name, unless off, len(b) and b's address are all multiples of
// BlockSize. A zero-length transfer is always allowed.
func checkAligned(op, name string, b []byte, off int64) error {
	if len(b) == 0 {
		return nil
	}
	var what string
	switch {
	case off%BlockSize != 0:
		what = fmt.Sprintf("offset %d", off)
	case len(b)%BlockSize != 0:
		what = fmt.Sprintf("length %d", len(b))
	case addrOf(b)%BlockSize != 0:
		what = fmt.Sprintf("buffer address %#x", addrOf(b))
	default:
		return nil
	}
	return &os.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: %s is not a multiple of %d", ErrUnaligned, what, BlockSize)}
}

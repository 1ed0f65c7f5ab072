package bufferpool

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// arena is a region of anonymous memory outside the Go heap, addressed by
// integer offsets. Mapping it reserves address space only: the kernel
// backs a page with memory when it is first touched, and release gives it
// back. This is how the pool keeps page memory out of the garbage
// collector's way and its resident size within the budget even though each
// tier's arena is sized for the largest share it may ever get.
type arena struct {
	mem []byte
}

var osPageSize = os.Getpagesize()

func newArena(size int) (*arena, error) {
	if size <= 0 {
		return &arena{}, nil
	}
	size = (size + osPageSize - 1) &^ (osPageSize - 1)
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("bufferpool: map %d-byte arena: %w", size, err)
	}
	noHugePages(mem)
	return &arena{mem: mem}, nil
}

// release returns the memory of [off, off+n) to the kernel; the next touch
// finds zeros. off and n must be multiples of the OS page size.
func (a *arena) release(off, n int) {
	if n > 0 {
		_ = unix.Madvise(a.mem[off:off+n], unix.MADV_DONTNEED)
	}
}

func (a *arena) close() error {
	if a.mem == nil {
		return nil
	}
	err := unix.Munmap(a.mem)
	a.mem = nil
	return err
}

package bufferpool

import "golang.org/x/sys/unix"

// noHugePages keeps transparent huge pages out of an arena: where they
// apply to anonymous memory (THP "always"), the first touch of one frame
// would make a whole 2 MiB page resident, and khugepaged could fill the
// holes release gave back, so the resident size would no longer be what
// the pool counts. Best effort: a kernel without THP refuses the advice,
// and then has no huge pages to keep out.
func noHugePages(mem []byte) {
	_ = unix.Madvise(mem, unix.MADV_NOHUGEPAGE)
}

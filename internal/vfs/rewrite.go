package vfs

import (
	"fmt"
	"sync"
)

// rewriteChunk is the most RewriteRange holds at a time.
const rewriteChunk = 256 << 10

// rewriteBufs keeps RewriteRange's buffers (rewriteChunk bytes, aligned
// for direct I/O): recovery rewrites a range of every segment it replays,
// and its memory must not grow with their number.
var rewriteBufs = sync.Pool{New: func() any { b := AlignedBuffer(rewriteChunk); return &b }}

// unalignedIO is a File that checks its callers' alignment although it is
// buffered (direct I/O asked, the file system refused it: OS, or MemFS
// after RefuseDirect), and can read and write without the check.
type unalignedIO interface {
	readAtUnaligned(p []byte, off int64) (int, error)
	writeAtUnaligned(p []byte, off int64) (int, error)
}

// RewriteRange writes bytes [from, to) of f again with what reading them
// returns; the caller syncs f. Recovery calls it on what it replays before
// it syncs it.
//
// After a failed fsync, Linux marks the pages whose write-back failed
// clean: they stay readable from the OS's cache in this boot, a later
// fsync has nothing to write for them and succeeds, and a power loss
// loses them. A store reopened in the same boot (its process restarted
// after the error) would read them as if durable, sync them without
// effect, and build on them. Writing them again dirties the pages, and the
// fsync that follows persists them or fails. (MemFS models this: a failed
// Sync loses the file's dirty bytes; a write of them dirties them again.)
//
// A file open for direct I/O is rewritten too, in whole blocks (the
// bytes around the range are written as they are; see rewriteBlocks for
// a last block the end of the file cuts): Direct only says the file
// system took O_DIRECT, and some write such files through the OS's cache
// all the same (ext4 with data=journal or on encrypted inodes, btrfs in
// some cases, ZFS before 2.3); a write that did reach the device is
// written again unchanged. Blocks written again hold the same bytes, so
// a torn rewrite leaves each sector old or new alike.
func RewriteRange(f File, from, to int64) error {
	if from >= to {
		return nil
	}
	if f.Direct() {
		return rewriteBlocks(f, from, to)
	}
	// A buffered file opened for direct I/O still checks alignment; the
	// range need not be aligned (a torn tail ends anywhere).
	readAt, writeAt := f.ReadAt, f.WriteAt
	if u, ok := f.(unalignedIO); ok {
		readAt, writeAt = u.readAtUnaligned, u.writeAtUnaligned
	}
	bp := rewriteBufs.Get().(*[]byte)
	defer rewriteBufs.Put(bp)
	buf := *bp
	for off := from; off < to; {
		n := min(int64(len(buf)), to-off)
		if _, err := readAt(buf[:n], off); err != nil {
			return fmt.Errorf("read %d bytes at %d to write them again: %w", n, off, err)
		}
		if _, err := writeAt(buf[:n], off); err != nil {
			return fmt.Errorf("write %d bytes at %d again: %w", n, off, err)
		}
		off += n
	}
	return nil
}

// CutTail cuts f at off (a torn tail), and returns where the file now
// ends; the caller syncs f. A file open for direct I/O is cut on a block
// boundary instead, the rest of off's block zeroed with one aligned write
// (the zeros read as padding), so that it still ends on a block boundary
// and a later RewriteRange can write every block of it again. What
// follows that block is cut first, and synced: zeroed while a record
// after it was still in the file, the block would read, after a crash, as
// padding followed by that record.
func CutTail(f File, off int64) (int64, error) {
	if !f.Direct() || off%BlockSize == 0 {
		if err := f.Truncate(off); err != nil {
			return 0, fmt.Errorf("cut at %d: %w", off, err)
		}
		return off, nil
	}
	start := off &^ (BlockSize - 1)
	end := start + BlockSize
	if size, err := f.Size(); err != nil {
		return 0, fmt.Errorf("size of the file to cut: %w", err)
	} else if size > end {
		if err := f.Truncate(end); err != nil {
			return 0, fmt.Errorf("cut at %d: %w", end, err)
		}
		if err := f.Sync(); err != nil {
			return 0, fmt.Errorf("sync the cut at %d: %w", end, err)
		}
	}
	bp := rewriteBufs.Get().(*[]byte)
	defer rewriteBufs.Put(bp)
	block := (*bp)[:BlockSize]
	n, err := f.ReadAt(block, start)
	if n < int(off-start) {
		return 0, fmt.Errorf("read the block at %d to zero it from %d: %w", start, off, err)
	}
	clear(block[off-start:])
	if _, err := f.WriteAt(block, start); err != nil {
		return 0, fmt.Errorf("zero the block at %d from %d: %w", start, off, err)
	}
	if err := f.Truncate(end); err != nil { // a short file grew to the block's end
		return 0, fmt.Errorf("cut at %d: %w", end, err)
	}
	return end, nil
}

// rewriteBlocks is RewriteRange for a file open for direct I/O: the blocks
// that hold [from, to) are read and written whole, with an aligned buffer,
// except a last block that the end of the file cuts: a direct write cannot
// rewrite it without growing the file, and a crash between that write and
// the cut back would leave bytes past the old end (a torn sector) that the
// file's next reader takes for damage. Such a block is left as it is: a
// file written with direct I/O ends inside a block only where a recovery
// of an earlier version cut a torn tail (recovery now cuts on a block
// boundary, after zeroing the rest of the block: CutTail).
func rewriteBlocks(f File, from, to int64) error {
	size, err := f.Size()
	if err != nil {
		return fmt.Errorf("size of the file to write again: %w", err)
	}
	start := from &^ (BlockSize - 1)
	end := min((to+BlockSize-1)&^(BlockSize-1), size&^(BlockSize-1))
	bp := rewriteBufs.Get().(*[]byte)
	defer rewriteBufs.Put(bp)
	buf := *bp
	for off := start; off < end; {
		n := min(int64(len(buf)), end-off)
		if _, err := f.ReadAt(buf[:n], off); err != nil {
			return fmt.Errorf("read %d bytes at %d to write them again: %w", n, off, err)
		}
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			return fmt.Errorf("write %d bytes at %d again: %w", n, off, err)
		}
		off += n
	}
	return nil
}

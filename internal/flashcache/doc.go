// Package flashcache is a second-level cache of clean pages on a faster
// device, between the buffer pool and the page store (document 003's
// Oracle Database Flash Cache; ZFS's L2ARC), persistent across clean
// restarts.
//
// It holds the compressed images of clean pages, the bytes the page store
// holds for them (or, for a frame evicted without an image, its
// compression), as they leave RAM. A miss of the buffer pool reads the
// flash first, then the page store (Store wraps the page store as the
// pool's bufferpool.Store).
//
// It never stands in the foreground's way:
//
//   - admission is asynchronous: the pool's evicting goroutine copies the
//     image into a bounded queue (a memcpy, no I/O) and goes on; when the
//     writer is behind the queue is full and the image is dropped and
//     counted (document 003: the writer skips work when busy, so the buffer
//     cache does not fill with dirty blocks);
//   - a write or free of a page only invalidates its entry in RAM: write-back
//     never waits for the flash, and a page changed while its image is
//     queued or being written does not wait either (the writer has its own
//     copy and does not install it);
//   - a foreground flash read waits at most ReadTimeout, then reads the
//     page store (and the flash is bypassed for a while).
//
// Layout: the file is a superblock (two slots), an index snapshot area and
// a ring of regions (16 MiB by default) written in large sequential,
// direct I/O writes, as CacheLib's BlockCache or L2ARC's rotor; reusing the
// oldest region evicts its entries. The RAM index is about 32 bytes per
// entry of its capacity (one per quarter page of flash), charged to the
// database's memory budget. Admission: every
// page leaving RAM, or pages leaving it a second time (AdmitSecond), within
// a write-rate budget (WriteRate bytes/s).
//
// Correctness: each entry carries the page id, an admission version and a
// CRC-32C over header and image; a read checks all three against the index
// and the region's generation, so an entry overwritten or corrupted is a
// miss, never wrong data. A stale entry (page rewritten or freed) is never
// returned: every write and free removes the page's entry first. An I/O
// error disables its region; repeated checksum failures too; many write
// errors disable the cache. Reads then go to the page store: the cache
// only ever holds copies, so nothing is lost.
//
// Persistence: a clean Close writes the index as a snapshot and marks the
// file clean; the next Open rebuilds the index from it, in time
// proportional to the entries, if a marker file in the database's
// directory shows that no session changed the database without the cache
// meanwhile (persist.go). A crash, a session without the cache, or a
// flash file from another database starts the cache cold.
//
// The on-flash format is in docs/FORMAT.md; the design and its
// measurements in docs/ARCHITECTURE.md and docs/BENCHMARKS.md.
package flashcache

// Package bufferpool is Strata's page cache: a partitioned, two-tier buffer
// pool over the page store whose compressed share of memory tunes itself.
//
// Every page access goes through it: Get holds a page in a frame, latched
// Shared or Exclusive, Page.Data gives its bytes, MarkDirty records a
// change, and Release unlatches it (and unpins it, if it was pinned: a page
// that was already in a frame is held by its latch alone).
//
// Two tiers share one memory budget (Options.CacheSize), which also pays for
// the pool's metadata and counts resident memory, not only bytes in use:
//
//   - uncompressed frames, one page each, in an anonymous memory arena
//     outside the Go heap, addressed by frame index;
//   - compressed images — the bytes the page store keeps on disk, or a
//     demoted page compressed with the pool's codec — each stored in
//     pieces of granules (64 bytes with 4 KiB OS pages) of a second
//     arena, compacted when it shrinks.
//
// R, the images' share, is how the budget splits under pressure, not a cap:
// a tier uses the memory the other leaves unused and gives it back when the
// other needs it.
//
// A miss reads the image from the store (timed: T_disk_read) and
// decompresses it into a frame (timed: T_decom). A page in a frame keeps
// the image it was read from, promoted from or written back as while it is
// unmodified (a redundant image), so that evicting the frame (CLOCK) turns
// the page into that image without compressing anything; only a frame with
// no image is compressed (T_comp) when evicted, or dropped when such
// compressions do not pay. An image hit promotes the page back into a
// frame. Evicting an image (CLOCK, redundant images first) drops it. Both
// tiers keep ghosts of the ids they recently evicted.
//
// R is fixed or (by default) tuned online: every interval the controller
// estimates, from the ghosts and the measured T_decom, T_disk_read and
// T_comp, what a tenth of the budget more or less in each tier would
// change in the time per access, and moves R the way that lowers it in
// bounded, damped steps. Model implements the paper's analytical model for
// comparison.
//
// Dirty frames are written back by a background page cleaner ahead of need.
// An access that finds no clean frame to reuse waits for it; such waits are
// counted as free buffer waits.
//
// Pages are spread over partitions (a power of two, by default ≥
// GOMAXPROCS) by a hash of their id over 16 where partitions hold 1,024
// frames or more (runs of 16 consecutive ids share a partition, and so
// are written back together), of their id otherwise; each partition has
// its own table,
// frames, images, CLOCK hands, ghosts and mutex. A hit on a frame takes
// neither the mutex nor a pin, only the frame's latch; a page can be read
// without even the latch (Peek: the latch's version tells the reader
// afterwards whether what it read was the page, unchanged; the tree peeks
// its branches and a point lookup's leaf); the mutex is held
// exclusively to change what is cached. The lock rules are at the top of
// partition.go and of each file.
package bufferpool

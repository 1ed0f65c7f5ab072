// Package bufferpool is Strata's page cache: a partitioned, two-tier buffer
// pool over the page store whose compressed share of memory tunes itself.
//
// Every page access goes through it: Get pins a page and latches it Shared
// or Exclusive, Page.Data gives its bytes, MarkDirty records a change, and
// Release unlatches and unpins.
//
// Two tiers share one memory budget (Options.CacheSize), which also pays for
// the pool's metadata:
//
//   - uncompressed frames, one page each, in an anonymous memory arena
//     outside the Go heap, addressed by frame index;
//   - compressed images — the same bytes the page store keeps on disk, or a
//     demoted page compressed with the store's codec — stored as chains of
//     512-byte chunks in a second arena.
//
// A clean page lives in one tier at a time. A miss reads the image from the
// store (timed: T_disk_read) and decompresses it into a frame (timed:
// T_decom). Evicting a clean frame (CLOCK) demotes it: it is compressed into
// the compressed tier. A compressed hit promotes the page back into a frame
// and frees the image. Evicting an image (CLOCK) drops it. Both tiers keep
// ghosts of the ids they recently evicted.
//
// R, the compressed tier's share of the budget, is fixed or (by default)
// tuned online: every interval the controller compares what a tenth of the
// budget more would have saved in each tier (ghost hits times the measured
// T_decom and T_disk_read) and moves R toward the better one in bounded,
// damped steps. Model implements the paper's analytical model for
// comparison.
//
// Dirty frames are written back by a background page cleaner ahead of need.
// An access that finds no clean frame to reuse waits for it; such waits are
// counted as free buffer waits.
//
// Pages are spread over partitions (a power of two, by default ≥
// GOMAXPROCS) by a hash of their id; each partition has its own table,
// frames, images, CLOCK hands, ghosts and mutex, and the mutex is held shared
// on the hit path, exclusively only to change what is cached.
package bufferpool

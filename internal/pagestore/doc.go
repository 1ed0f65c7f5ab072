// Package pagestore is Strata's lowest layer: a compressed, log-structured
// store of fixed-size logical pages.
//
// Every write of a page appends a record (a 36-byte header and the page's
// compressed image) to the head of a log of segment files. Records are
// packed back to back, not padded to 4 KiB, so a page takes the bytes it
// compresses to. An in-memory page map, a flat array of 12-byte locations
// indexed by page id, says where each page's newest record is.
//
// Durability: Sync makes all written pages durable. Checkpoint writes the
// page map atomically (temporary file, fsync, rename, directory fsync); Open
// loads the last checkpoint and replays the segments written after it,
// dropping a torn tail. After a crash the store holds, for every page, its
// last durable version (or a later acknowledged one that happened to reach
// the disk): the state after a prefix of the acknowledged writes.
//
// The cleaner reclaims the space of overwritten and freed pages by copying
// the live records of the segments with the most garbage to the head of the
// log, checkpointing, and deleting the emptied segments.
//
// Segment files use direct I/O where the file system allows it, so the OS
// page cache keeps no second copy of the pages; the buffer pool above is the
// only cache.
//
// The on-disk format is described byte by byte in docs/FORMAT.md.
package pagestore

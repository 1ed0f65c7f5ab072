// Package pagestore is Strata's lowest layer: a compressed, log-structured
// store of fixed-size logical pages.
//
// Every write of a page appends a record (a 36-byte header and the page's
// compressed image) to the head of a log of segment files. Records are
// packed back to back, not padded to 4 KiB, so a page takes the bytes it
// compresses to. An in-memory page map, a flat array of 12-byte locations
// indexed by page id, says where each page's newest record is.
//
// The log has two heads (streams): callers' writes go to the hot stream,
// the cleaner's relocated records to the cold one. Appends copy records into
// a write buffer under a short critical section; full buffers are written to
// the segment files outside it (writebuf.go).
//
// Durability: Sync makes all written pages durable. Checkpoint records the
// page map: usually as a delta (the entries changed since the previous
// checkpoint) appended to the map log, and now and then as the whole map,
// written atomically (temporary file, fsync, rename, directory fsync). Open
// loads the last full map and its deltas and replays the log written after
// them, dropping a torn tail. After a crash the store holds, for every page,
// its last durable version (or a later acknowledged one that happened to
// reach the disk): the state after a prefix of the acknowledged writes.
//
// The cleaner reclaims the space of overwritten and freed pages when the
// store's share of garbage passes a threshold: it picks victim segments by
// cost-benefit, copies their live records to the cold stream, checkpoints,
// and deletes the victims.
//
// Segment files use direct I/O where the file system allows it, so the OS
// page cache keeps no second copy of the pages; the buffer pool above is the
// only cache.
//
// The on-disk format is described byte by byte in docs/FORMAT.md.
package pagestore

package flashcache

import "time"

// The cache's statistics.
//
// Lock rules: the counters are atomics, updated without locks; Stats reads
// the open state under infoMu (cache.go).

// Stats describe a flash cache. Counts are since Open.
type Stats struct {
	Enabled bool   // a cache is configured
	Active  bool   // serving reads and admitting pages (false once disabled or closed)
	Path    string // the flash file
	// OpenState says how Open found the flash file: "warm" (index
	// rebuilt), "cold: <why>", or "disabled".
	OpenState string
	// DisabledBy is why the cache stopped serving, if it did.
	DisabledBy string

	Size        int64 // bytes of the flash file used
	Regions     int
	RegionSize  int64
	BadRegions  int64 // regions disabled by I/O errors or checksum failures
	Entries     int64 // images on flash that the index names
	Capacity    int   // the index's capacity (entries)
	MemoryBytes int64 // RAM taken (index, queue, buffers), charged to the cache budget
	QueueBytes  int64 // images waiting for the writer

	// Reads: lookups of pages missing from RAM, hits served from flash,
	// misses (read from the page store). Misses include pages whose image
	// was still queued, reads that bypassed a stalled flash, errors.
	Lookups, Hits, Misses int64
	HitRatio              float64 // Hits / Lookups
	// ReadTimeouts: flash reads that took longer than the read timeout
	// (the page was read from the store); Bypassed: reads that did not try
	// the flash because it was stalled or every reader was busy.
	ReadTimeouts, Bypassed int64
	TFlashRead             time.Duration // mean time of a flash read

	// Admission: pages offered as they left RAM, admitted to the queue,
	// dropped because the queue was full (the writer was behind) or the
	// write budget was spent or the index full, rejected by the policy,
	// or already cached.
	Offered, Admitted                     int64
	DroppedBusy, DroppedRate, DroppedFull int64
	Rejected, AlreadyCached               int64
	// Written: images written to flash; BytesWritten: bytes written to the
	// regions (block padding included); Writes: write requests.
	Written, BytesWritten, Writes int64
	// Evictions: images dropped because their region was reused.
	// Invalidations: images dropped because the page was rewritten or
	// freed. StaleRejects: queued images not written because the page
	// changed meanwhile.
	Evictions, Invalidations, StaleRejects int64
	// Errors: flash reads and writes that failed, entries that failed
	// verification (read from the store instead).
	ReadErrors, WriteErrors, ChecksumErrors int64

	// Open: time to rebuild the index, entries rebuilt, entries found
	// but not used (invalid, or the whole snapshot when the cache started
	// cold).
	RebuildTime      time.Duration
	Rebuilt          int64
	DiscardedAtOpen  int64
	CompressedFrames int64 // evicted frames the writer compressed
}

// Stats returns a snapshot of the cache's statistics.
func (c *Cache) Stats() Stats {
	s := &c.st
	st := Stats{
		Enabled:          true,
		Active:           c.active.Load(),
		Path:             c.opts.Path,
		Size:             c.lay.fileSize,
		Regions:          c.lay.regions,
		RegionSize:       c.lay.regionSize,
		BadRegions:       s.badRegions.Load(),
		Entries:          c.ix.written(),
		Capacity:         c.lay.maxEntries,
		MemoryBytes:      c.opts.MemoryBytes(),
		QueueBytes:       c.q.bytes(),
		Lookups:          s.lookups.Load(),
		Hits:             s.hits.Load(),
		Misses:           s.misses.Load(),
		ReadTimeouts:     s.readTimeouts.Load(),
		Bypassed:         s.bypassed.Load(),
		Offered:          s.offered.Load(),
		Admitted:         s.admitted.Load(),
		DroppedBusy:      s.droppedBusy.Load(),
		DroppedRate:      s.droppedRate.Load(),
		DroppedFull:      s.droppedFull.Load(),
		Rejected:         s.rejected.Load(),
		AlreadyCached:    s.alreadyCached.Load(),
		Written:          s.written.Load(),
		BytesWritten:     s.bytesWritten.Load(),
		Writes:           s.writes.Load(),
		Evictions:        s.evictions.Load(),
		Invalidations:    s.invalidations.Load(),
		StaleRejects:     s.staleRejects.Load(),
		ReadErrors:       s.readErrors.Load(),
		WriteErrors:      s.writeErrors.Load(),
		ChecksumErrors:   s.checksumErrors.Load(),
		CompressedFrames: s.compressedFrames.Load(),
	}
	if st.Lookups > 0 {
		st.HitRatio = float64(st.Hits) / float64(st.Lookups)
	}
	if n := s.reads.Load(); n > 0 {
		st.TFlashRead = time.Duration(s.readNanos.Load() / n)
	}
	c.infoMu.Lock()
	st.OpenState = c.openInfo.state
	st.DisabledBy = c.openInfo.disabledBy
	st.RebuildTime = c.openInfo.rebuild
	st.Rebuilt = c.openInfo.rebuilt
	st.DiscardedAtOpen = c.openInfo.discarded
	c.infoMu.Unlock()
	return st
}

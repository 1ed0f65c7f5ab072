package pagestore

import (
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/codec"
)

// numCodecIDs bounds the codec ids the stats track.
const numCodecIDs = 8

type codecCounters struct {
	compressions    atomic.Int64
	compressNanos   atomic.Int64
	compressIn      atomic.Int64
	compressOut     atomic.Int64
	storedRaw       atomic.Int64
	decompressions  atomic.Int64
	decompressNanos atomic.Int64
}

// compress counts one compression of an in-byte page that took d: to out
// bytes if kept, or stored raw (the codec did not shrink it enough).
func (c *codecCounters) compress(d time.Duration, in, out int, kept bool) {
	c.compressions.Add(1)
	c.compressNanos.Add(int64(d))
	if !kept {
		c.storedRaw.Add(1)
		return
	}
	c.compressIn.Add(int64(in))
	c.compressOut.Add(int64(out))
}

func (c *codecCounters) decompress(d time.Duration) {
	c.decompressions.Add(1)
	c.decompressNanos.Add(int64(d))
}

// counters are the store's running totals, updated without locks.
type counters struct {
	codec          [numCodecIDs]codecCounters
	callerBytes    atomic.Int64 // raw bytes of pages callers wrote
	fileBytes      atomic.Int64 // bytes written to segment, checkpoint and map log files
	mapBytes       atomic.Int64 // bytes written to checkpoint and map log files
	pagesWritten   atomic.Int64
	pagesRead      atomic.Int64
	pagesFreed     atomic.Int64
	diskReads      atomic.Int64
	diskReadNanos  atomic.Int64
	bufferReads    atomic.Int64
	extentReads    atomic.Int64
	extentNanos    atomic.Int64
	extentPages    atomic.Int64
	syncs          atomic.Int64
	checkpoints    atomic.Int64
	fullCkpts      atomic.Int64
	cleanPasses    atomic.Int64
	segsCleaned    atomic.Int64
	relocatedBytes atomic.Int64
}

func (c *counters) diskRead(d time.Duration) {
	c.diskReads.Add(1)
	c.diskReadNanos.Add(int64(d))
}

// extentRead counts a read of n pages' records (ReadImages).
func (c *counters) extentRead(d time.Duration, n int) {
	c.extentReads.Add(1)
	c.extentNanos.Add(int64(d))
	c.extentPages.Add(int64(n))
	c.pagesRead.Add(int64(n))
}

// CodecStats are the timings of one codec.
type CodecStats struct {
	Codec codec.ID
	// Compressions and CompressTime count every page the codec
	// compressed, whether the result was kept or not (the time is spent
	// either way).
	Compressions int64
	CompressTime time.Duration // total
	// CompressedIn and CompressedOut are the raw and compressed bytes of
	// the pages stored compressed by this codec: their ratio is the
	// codec's compression ratio on what it actually stores.
	CompressedIn  int64
	CompressedOut int64
	// StoredRaw counts the pages the codec compressed too little (by
	// less than 1/8) and that were stored uncompressed instead.
	StoredRaw      int64
	Decompressions int64
	DecompressTime time.Duration // total
}

// MeanDecompress is the average time to decompress one page (T_decom).
func (c CodecStats) MeanDecompress() time.Duration {
	if c.Decompressions == 0 {
		return 0
	}
	return c.DecompressTime / time.Duration(c.Decompressions)
}

// MeanCompress is the average time to compress one page.
func (c CodecStats) MeanCompress() time.Duration {
	if c.Compressions == 0 {
		return 0
	}
	return c.CompressTime / time.Duration(c.Compressions)
}

// Stats describe a store's space and work. Sizes are in bytes.
type Stats struct {
	PageSize  int
	DirectIO  bool // segment files use direct I/O
	LivePages int64
	// LogicalBytes is LivePages × PageSize: what the pages take uncompressed.
	LogicalBytes int64
	// StoredBytes is the sum of the stored (compressed) payloads of live pages.
	StoredBytes int64
	// LiveRecordBytes is StoredBytes plus the record headers.
	LiveRecordBytes int64
	// PhysicalBytes is the size of all segment files, the checkpoint and
	// the map log.
	PhysicalBytes int64
	// GarbageBytes is segment bytes not holding a live record: overwritten
	// and freed pages, padding, headers. The cleaner reclaims it.
	GarbageBytes int64
	Segments     int
	// CompressionRatio is r = LogicalBytes / StoredBytes.
	CompressionRatio float64
	// SpaceAmplification is PhysicalBytes / LiveRecordBytes.
	SpaceAmplification float64
	// WriteAmplification is FileBytesWritten / CallerBytesWritten.
	WriteAmplification float64
	FileBytesWritten   int64
	CallerBytesWritten int64

	PagesWritten, PagesRead, PagesFreed int64
	// DiskReads and DiskReadTime time the reads that went to a segment
	// file; MeanDiskRead is T_disk_read. BufferReads were served from the
	// write buffer.
	DiskReads    int64
	DiskReadTime time.Duration
	BufferReads  int64
	// ExtentReads and ExtentReadTime time the reads of ReadImages, which
	// brought ExtentPages pages' records (also in PagesRead; not in
	// DiskReads).
	ExtentReads    int64
	ExtentReadTime time.Duration
	ExtentPages    int64

	Syncs, Checkpoints int64
	// FullCheckpoints counts the checkpoints that wrote the whole page map;
	// the others appended a delta to the map log. MapBytesWritten is what
	// all of them wrote (part of FileBytesWritten).
	FullCheckpoints                int64
	MapBytesWritten                int64
	CleanerPasses, SegmentsCleaned int64
	CleanerRelocatedBytes          int64
	Codecs                         []CodecStats // codecs used so far
	// DictionaryID is the compression dictionary new pages are compressed
	// with (0: none); Dictionary says what became of this run's attempt
	// to train one ("" while sampling, else adopted/rejected and the
	// measured gain, "disabled", or why it failed).
	DictionaryID uint32
	Dictionary   string
}

// MeanDiskRead is the average time of one page read from a segment file (T_disk_read).
func (st Stats) MeanDiskRead() time.Duration {
	if st.DiskReads == 0 {
		return 0
	}
	return st.DiskReadTime / time.Duration(st.DiskReads)
}

// Stats returns a snapshot of the store's statistics.
func (s *Store) Stats() Stats {
	c := &s.stats
	dictID, dictVerdict := s.Dictionary()
	st := Stats{
		DictionaryID:          dictID,
		Dictionary:            dictVerdict,
		PageSize:              s.pageSize,
		FileBytesWritten:      c.fileBytes.Load(),
		CallerBytesWritten:    c.callerBytes.Load(),
		PagesWritten:          c.pagesWritten.Load(),
		PagesRead:             c.pagesRead.Load(),
		PagesFreed:            c.pagesFreed.Load(),
		DiskReads:             c.diskReads.Load(),
		DiskReadTime:          time.Duration(c.diskReadNanos.Load()),
		BufferReads:           c.bufferReads.Load(),
		ExtentReads:           c.extentReads.Load(),
		ExtentReadTime:        time.Duration(c.extentNanos.Load()),
		ExtentPages:           c.extentPages.Load(),
		Syncs:                 c.syncs.Load(),
		Checkpoints:           c.checkpoints.Load(),
		FullCheckpoints:       c.fullCkpts.Load(),
		MapBytesWritten:       c.mapBytes.Load(),
		CleanerPasses:         c.cleanPasses.Load(),
		SegmentsCleaned:       c.segsCleaned.Load(),
		CleanerRelocatedBytes: c.relocatedBytes.Load(),
	}
	st.DirectIO = s.direct.Load()
	s.mu.RLock()
	if s.closed {
		// The files are closed: no space figures, only the counters.
		s.mu.RUnlock()
		return st
	}
	st.LivePages = s.pmap.live
	st.Segments = len(s.segs)
	for _, seg := range s.segs {
		st.LiveRecordBytes += seg.live
		st.PhysicalBytes += seg.size
		st.GarbageBytes += seg.size - seg.live
	}
	st.PhysicalBytes += s.ckptBytes + s.mapLogBytes
	s.mu.RUnlock()
	st.LogicalBytes = st.LivePages * int64(s.pageSize)
	st.StoredBytes = st.LiveRecordBytes - st.LivePages*recordHeaderSize
	if st.StoredBytes > 0 {
		st.CompressionRatio = float64(st.LogicalBytes) / float64(st.StoredBytes)
	}
	if st.LiveRecordBytes > 0 {
		st.SpaceAmplification = float64(st.PhysicalBytes) / float64(st.LiveRecordBytes)
	}
	if st.CallerBytesWritten > 0 {
		st.WriteAmplification = float64(st.FileBytesWritten) / float64(st.CallerBytesWritten)
	}
	for id := range c.codec {
		cc := &c.codec[id]
		cs := CodecStats{
			Codec:          codec.ID(id),
			Compressions:   cc.compressions.Load(),
			CompressTime:   time.Duration(cc.compressNanos.Load()),
			CompressedIn:   cc.compressIn.Load(),
			CompressedOut:  cc.compressOut.Load(),
			StoredRaw:      cc.storedRaw.Load(),
			Decompressions: cc.decompressions.Load(),
			DecompressTime: time.Duration(cc.decompressNanos.Load()),
		}
		if cs.Compressions > 0 || cs.Decompressions > 0 {
			st.Codecs = append(st.Codecs, cs)
		}
	}
	return st
}

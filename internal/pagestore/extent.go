package pagestore

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// Extent reads: the records of several pages with as few reads as their
// places in the segments allow. A range scan's next leaves are known
// before it reaches them (their parent names them); where their records
// lie close together in a segment, one read of a few tens of KiB brings
// them all for about the price of one (on the benchmark's disk a 4 KiB
// read and a 64 KiB read take about the same time: the latency is the
// seek, not the transfer).
//
// Records are grouped by segment and offset: a record joins the extent
// before it when the gap between them is at most extentGap bytes and the
// extent stays within maxExtent. Records still in a write buffer are left
// to ReadImage (the caller reads them as usual).
//
// Lock rules: ReadImages holds mu shared only to look the pages up and pin
// their segments, and reads without it. IsCurrent holds mu shared.

const (
	extentGap = 16 << 10 // bytes of other records one read may span between two wanted ones
	maxExtent = 64 << 10 // bytes of one read (a single record may be longer)
)

// Stamp says which record of a page an extent read returned (its place in
// the log), for IsCurrent.
type Stamp struct{ loc location }

// extentRec is a wanted record: page id at loc.
type extentRec struct {
	id  PageID
	loc location
	seg *segment
}

// extentScratch is the state of one ReadImages call, reused.
type extentScratch struct {
	recs    []extentRec
	extents []extent
	buf     []byte // aligned; a piece of extentBufSize per extent
	wg      sync.WaitGroup
}

// extent is one read: records recs[i:j], bytes [from, to) of their segment.
type extent struct {
	i, j     int
	from, to int64
	data     []byte
	took     time.Duration
	err      error
}

// extentBufSize is the bytes of buffer extent e's read needs: whole
// blocks, and a block's slack at each end (readAligned).
func extentBufSize(e *extent) int {
	return int(e.to-e.from+vfs.BlockSize-1)&^(vfs.BlockSize-1) + 2*vfs.BlockSize
}

var extentPool = sync.Pool{New: func() any { return new(extentScratch) }}

// ReadImages reads the records of the pages ids that are in the segment
// files, merging records that lie close together into one read and making
// the reads at once (a goroutine each beyond the first: on the
// benchmark's disk two reads in flight take little longer than one, see
// docs/BENCHMARKS.md), and calls fn with each page's image (in file order,
// from the calling goroutine) and the Stamp of the record it came from.
// img.Data is valid only during the call. Pages not in the store, and
// pages whose records are still in a write buffer, are skipped; so are
// records that fail verification (ReadImage reports those to whoever
// reads the page). It returns how many reads succeeded, and the first read
// error (the pages of the reads that succeeded are still passed to fn).
func (s *Store) ReadImages(ids []PageID, fn func(id PageID, img Image, at Stamp)) (reads int, err error) {
	sc := extentPool.Get().(*extentScratch)
	defer extentPool.Put(sc)
	recs := sc.recs[:0]
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return 0, ErrClosed
	}
	for _, id := range ids {
		loc := s.pmap.get(id)
		if !loc.present() {
			continue
		}
		seg := s.segs[loc.seg]
		if int64(loc.off)+int64(loc.len) > seg.written {
			continue // in a write buffer
		}
		seg.pin()
		recs = append(recs, extentRec{id: id, loc: loc, seg: seg})
	}
	s.mu.RUnlock()
	defer func() {
		for i := range recs {
			recs[i].seg.unpin()
			recs[i].seg = nil
		}
		sc.recs = recs[:0]
	}()
	slices.SortFunc(recs, func(a, b extentRec) int {
		if c := cmp.Compare(a.loc.seg, b.loc.seg); c != 0 {
			return c
		}
		return cmp.Compare(a.loc.off, b.loc.off)
	})
	exts := sc.extents[:0]
	for i := 0; i < len(recs); {
		n, from, to := spanOf(len(recs)-i, func(k int) location { return recs[i+k].loc }, extentGap, maxExtent)
		exts = append(exts, extent{i: i, j: i + n, from: from, to: to})
		i += n
	}
	sc.extents = exts
	if len(exts) == 0 {
		return 0, nil
	}
	// One aligned buffer, cut into a block-aligned piece per extent.
	need := 0
	for k := range exts {
		need += extentBufSize(&exts[k])
	}
	if len(sc.buf) < need {
		sc.buf = vfs.AlignedBuffer(need)
	}
	read := func(k int, buf []byte) {
		e := &exts[k]
		start := time.Now()
		e.data, e.err = readAligned(recs[e.i].seg.f, buf, e.from, int(e.to-e.from))
		e.took = time.Since(start)
	}
	at := extentBufSize(&exts[0])
	for k := 1; k < len(exts); k++ {
		n := extentBufSize(&exts[k])
		buf := sc.buf[at : at+n]
		at += n
		sc.wg.Add(1)
		go func() {
			defer sc.wg.Done()
			read(k, buf)
		}()
	}
	read(0, sc.buf)
	sc.wg.Wait()
	for k := range exts {
		e := &exts[k]
		if e.err != nil {
			if err == nil {
				err = fmt.Errorf("pagestore: read %d pages: segment %s offset %d: %w", e.j-e.i, recs[e.i].seg.path, e.from, e.err)
			}
			continue
		}
		reads++
		s.stats.extentRead(e.took, e.j-e.i)
		for _, r := range recs[e.i:e.j] {
			h, payload, derr := s.checkPageRecord(e.data[int64(r.loc.off)-e.from:][:r.loc.len], r.id)
			if derr != nil {
				continue
			}
			fn(r.id, Image{Codec: h.codec, Seq: h.seq, Data: payload}, Stamp{r.loc})
		}
		e.data = nil
	}
	return reads, err
}

// IsCurrent reports whether at is still the newest record of page id: the
// page has not been written, relocated or freed since an extent read
// returned it.
func (s *Store) IsCurrent(id PageID, at Stamp) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return !s.closed && s.pmap.get(id) == at.loc
}

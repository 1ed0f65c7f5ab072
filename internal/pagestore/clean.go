package pagestore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"golang.org/x/time/rate"

	"github.com/stratadb/strata/internal/vfs"
)

// The cleaner reclaims the space of overwritten and freed records: it copies
// the live records of victim segments to the head of the cold stream,
// checkpoints, and deletes the victims.
//
// Victims are chosen by cost-benefit, as in Sprite LFS (Rosenblum and
// Ousterhout, 1992): a segment with live share u and age a scores
// (1-u)·a/(2u), the space it frees times how long that space is likely to
// stay free, over the cost of reading and writing its live records (see
// costBenefit). The age is the distance in sequence numbers to the newest
// record of the segment (its stamp): how long its data has gone without
// being overwritten. (Carrying a relocated record's original age over to its
// new segment, as LFS did, was measured to relocate more.) Relocated records
// go to the cold stream, never mixed with callers' fresh writes: data that
// survived a pass fills segments that stay mostly live, and callers'
// writes fill segments that empty themselves, which the cleaner takes
// nearly free.
//
// Locks: cleanMu serializes passes; a pass holds mu only to choose victims
// and to list their live records. Relocation goes through append.

// CleanResult describes one cleaning pass.
type CleanResult struct {
	SegmentsCleaned int
	PagesRelocated  int
	BytesRelocated  int64
	BytesReclaimed  int64 // segment bytes deleted
}

// Clean runs one cleaning pass now, if the store's share of garbage is
// above the cleaner threshold: it picks up to four sealed segments by
// cost-benefit, as many as bring the share back under the threshold,
// appends their live records to the cold stream, checkpoints, and deletes
// them. A crash at any point loses nothing: until the checkpoint the old
// copies are authoritative, after it the new ones are, and leftover segments
// are deleted by recovery.
func (s *Store) Clean() (CleanResult, error) {
	return s.clean(context.Background(), nil)
}

type victim struct {
	seg   *segment
	score float64
}

// costBenefit is the victim score of a segment with live bytes live of
// size, whose newest record is age records old: the share it frees, times
// its age, over the bytes cleaning it reads and writes per segment byte.
// That cost is 2u: this cleaner reads only the live records (LFS read the
// whole segment, a cost of 1+u). Measured both ways (docs/PAGESTORE.md),
// 2u relocates as little or less on every workload.
func costBenefit(live, size int64, age uint64) float64 {
	u := float64(live) / float64(size)
	return (1 - u) * float64(age) / (2 * max(u, 1e-9))
}

// chooseVictims returns the segments a pass should clean, best first.
// Called with mu held.
func (s *Store) chooseVictims() []*segment {
	t := s.opts.CleanerThreshold
	var segBytes, garbage int64
	var cands []victim
	for _, seg := range s.segs {
		segBytes += seg.size
		garbage += seg.size - seg.live
		// A victim must be at least half as empty as the store may be:
		// relocating nearly live segments reclaims little, and where the
		// garbage is in segments that cannot be cleaned yet (the heads)
		// it would never bring the share down.
		if !seg.cleanable() || s.isHead(seg) || float64(seg.size-seg.live) < t/2*float64(seg.size) {
			continue
		}
		age := uint64(1)
		if s.nextSeq > seg.stamp {
			age = s.nextSeq - seg.stamp
		}
		cands = append(cands, victim{seg, costBenefit(seg.live, seg.size, age)})
	}
	if segBytes == 0 || float64(garbage) <= t*float64(segBytes) {
		return nil
	}
	slices.SortFunc(cands, func(a, b victim) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return int(a.seg.num) - int(b.seg.num)
	})
	// Reclaiming R bytes brings the share to (garbage-R)/(segBytes-R):
	// under t once R >= (garbage - t·segBytes)/(1-t).
	need := (float64(garbage) - t*float64(segBytes)) / (1 - t)
	var out []*segment
	for _, c := range cands {
		if len(out) == defaultCleanerMaxVictims || need <= 0 {
			break
		}
		out = append(out, c.seg)
		need -= float64(c.seg.size - c.seg.live)
	}
	return out
}

// isHead says whether seg is a stream's head. Called with mu held.
func (s *Store) isHead(seg *segment) bool {
	for _, st := range s.streams {
		if st.head == seg {
			return true
		}
	}
	return false
}

func (s *Store) clean(ctx context.Context, limiter *rate.Limiter) (CleanResult, error) {
	var res CleanResult
	s.cleanMu.Lock()
	defer s.cleanMu.Unlock()
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return res, ErrClosed
	}
	victims := s.chooseVictims()
	// Which records of the victims are live: one scan of the page map.
	recs := make([][]liveRec, len(victims))
	if len(victims) > 0 {
		index := make(map[uint32]int, len(victims))
		for i, v := range victims {
			index[v.num] = i
			v.pin()
		}
		for id, e := range s.pmap.entries {
			if i, ok := index[e.seg]; ok && e.present() {
				recs[i] = append(recs[i], liveRec{PageID(id), e})
			}
		}
	}
	s.mu.RUnlock()
	if len(victims) == 0 {
		return res, nil
	}
	defer func() {
		for _, v := range victims {
			v.unpin()
		}
	}()

	for i, v := range victims {
		n, bytes, err := s.relocate(ctx, v, recs[i], limiter)
		res.PagesRelocated += n
		res.BytesRelocated += bytes
		s.stats.relocatedBytes.Add(bytes)
		if err != nil {
			return res, err
		}
	}
	if err := s.checkpoint(false); err != nil {
		return res, err
	}
	// Count what the checkpoint actually deleted.
	s.mu.RLock()
	for _, v := range victims {
		if s.segs[v.num] != v {
			res.SegmentsCleaned++
			res.BytesReclaimed += v.size
		}
	}
	s.mu.RUnlock()
	s.stats.cleanPasses.Add(1)
	s.stats.segsCleaned.Add(int64(res.SegmentsCleaned))
	return res, nil
}

// liveRec is a record the page map points to.
type liveRec struct {
	id  PageID
	loc location
}

// Cleaning reads live records in spans: runs of records sorted by offset
// whose gaps are at most spanGap bytes, up to spanMax bytes (and the rate
// limiter's burst) a read. A read costs a system call whatever its size
// (about 30 µs of kernel CPU for a direct 4 KiB read on the 2-vCPU virtio
// machine of docs/BENCHMARKS.md, as much as a whole 16 KiB decompression),
// and a cleaner reading record by record spent 18% of an I/O-bound update
// workload's CPU in those reads; reading a small gap costs little more than
// skipping it.
const (
	spanMax = 1 << 20
	spanGap = 64 << 10
)

// spanOf returns how many of n records, sorted by offset, one read
// starting at the first covers, and the bytes [from, to) it reads: each
// next record of the same segment joins while the gap before it is at
// most gap and the read stays within maxLen (the first always joins,
// whatever its length). Cleaning (spans) and extent reads use it.
func spanOf(n int, loc func(int) location, gap, maxLen int64) (k int, from, to int64) {
	first := loc(0)
	from, to = int64(first.off), int64(first.off)+int64(first.len)
	for k = 1; k < n; k++ {
		l := loc(k)
		off, end := int64(l.off), int64(l.off)+int64(l.len)
		if l.seg != first.seg || off-to > gap || end-from > maxLen {
			break
		}
		to = max(to, end)
	}
	return k, from, to
}

// relocate copies the live records recs of seg (pinned by the caller) to the
// head of the cold stream, with new sequence numbers and unchanged payloads
// (no recompression).
func (s *Store) relocate(ctx context.Context, seg *segment, recs []liveRec, limiter *rate.Limiter) (int, int64, error) {
	slices.SortFunc(recs, func(a, b liveRec) int { return int(a.loc.off) - int(b.loc.off) })
	maxSpan := spanMax
	if limiter != nil {
		maxSpan = min(maxSpan, limiter.Burst()-2*vfs.BlockSize)
	}
	// A span holds at least one record, whatever its size.
	maxSpan = max(maxSpan, s.pageSize+recordHeaderSize)
	scratch := vfs.AlignedBuffer(maxSpan + 2*vfs.BlockSize)
	var moved int
	var bytes int64
	for len(recs) > 0 {
		// The span: recs[:n], from the first record's start to the last's end.
		n, from, to := spanOf(len(recs), func(k int) location { return recs[k].loc }, spanGap, int64(maxSpan))
		if limiter != nil {
			if err := limiter.WaitN(ctx, int(to-from)); err != nil {
				return moved, bytes, err
			}
		}
		span, err := readAligned(seg.f, scratch, from, int(to-from))
		if err != nil {
			return moved, bytes, fmt.Errorf("pagestore: clean: read segment %s offsets %d-%d: %w", seg.path, from, to, err)
		}
		for _, r := range recs[:n] {
			rec := span[int64(r.loc.off)-from : int64(r.loc.off)-from+int64(r.loc.len)]
			h, payload, err := decodeRecord(rec, s.pageSize)
			if err == nil && (h.pageID != r.id || h.kind != kindPage) {
				err = fmt.Errorf("record belongs to page %d", h.pageID)
			}
			if err != nil {
				return moved, bytes, fmt.Errorf("pagestore: clean: segment %s offset %d: %w: %v", seg.path, r.loc.off, ErrCorrupt, err)
			}
			err = s.append(kindPage, r.id, h.codec, payload, h.rawLen, &r.loc)
			if errors.Is(err, errStale) {
				continue // overwritten or freed meanwhile
			}
			if err != nil {
				return moved, bytes, fmt.Errorf("pagestore: clean: relocate page %d: %w", r.id, err)
			}
			moved++
			bytes += int64(r.loc.len)
		}
		recs = recs[n:]
	}
	return moved, bytes, nil
}

// background runs the cleaner and the checkpointer until Close.
func (s *Store) background() {
	defer close(s.bgDone)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.bgStop
		cancel()
	}()
	limiter := rate.NewLimiter(rate.Limit(s.opts.CleanerRate), int(max(s.opts.CleanerRate/10, int64(2*(s.pageSize+recordHeaderSize)))))
	tick := time.NewTicker(DefaultBackgroundTick)
	defer tick.Stop()
	for {
		select {
		case <-s.bgStop:
			return
		case <-tick.C:
		case <-s.bgKick:
		}
		res, err := s.clean(ctx, limiter)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.log.Warn("pagestore: cleaner pass failed", "dir", s.dir, "err", err)
		} else if res.SegmentsCleaned > 0 {
			s.log.Debug("pagestore: cleaned", "segments", res.SegmentsCleaned, "relocated", res.BytesRelocated)
			continue
		}
		s.mu.RLock()
		due := s.sinceCkpt >= s.opts.CheckpointBytes && !s.closed
		s.mu.RUnlock()
		if due {
			if err := s.Checkpoint(); err != nil {
				s.log.Warn("pagestore: checkpoint failed", "dir", s.dir, "err", err)
			}
		}
	}
}

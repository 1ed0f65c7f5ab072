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

// Checkpoint writes the page map to the checkpoint file, after making the
// log it describes durable, and deletes segments no page lives in any more.
// Recovery then starts from this point: checkpoints bound recovery time.
func (s *Store) Checkpoint() error { return s.checkpoint(false) }

func (s *Store) checkpoint(clean bool) error {
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	c := &checkpoint{
		pageSize:   uint32(s.pageSize),
		nextSeq:    s.nextSeq,
		replaySeg:  s.head.num,
		replayOff:  uint32(s.head.size),
		nextSegNum: s.nextSegNum,
		entries:    s.pmap.clone(),
	}
	if clean {
		c.flags |= checkpointFlagClean
	}
	sinceCkpt := s.sinceCkpt
	s.mu.Unlock()

	// Everything the snapshot describes must be durable before the
	// checkpoint that refers to it.
	if err := s.Sync(); err != nil {
		return fmt.Errorf("pagestore: checkpoint: %w", err)
	}
	n, err := writeCheckpoint(s.fs, s.dir, c)
	if err != nil {
		s.mu.Lock()
		err = s.fail(err)
		s.mu.Unlock()
		return err
	}
	s.stats.fileBytes.Add(n)
	s.stats.checkpoints.Add(1)

	// Segments before the replay position that the checkpoint's map does
	// not reference hold nothing recovery will ever read again.
	referenced := make(map[uint32]bool)
	for _, e := range c.entries {
		if e.present() {
			referenced[e.seg] = true
		}
	}
	s.mu.Lock()
	s.ckptBytes = n
	s.sinceCkpt -= sinceCkpt
	var obsolete []*segment
	for num, seg := range s.segs {
		if num < c.replaySeg && !referenced[num] && seg.live == 0 {
			obsolete = append(obsolete, seg)
			delete(s.segs, num)
		}
	}
	s.mu.Unlock()
	var firstErr error
	for _, seg := range obsolete {
		if err := s.fs.Remove(seg.path); err != nil {
			// Keep it in the table (it holds no live page) so Stats
			// still counts its bytes; the next checkpoint or Open retries.
			s.mu.Lock()
			s.segs[seg.num] = seg
			s.mu.Unlock()
			if firstErr == nil {
				firstErr = fmt.Errorf("pagestore: remove segment %s: %w", seg.path, err)
			}
			continue
		}
		seg.unpin()
	}
	if len(obsolete) > 0 && firstErr == nil {
		// Not needed for correctness (recovery deletes leftovers), but
		// makes the space reclaim durable.
		if err := s.fs.SyncDir(s.dir); err != nil {
			firstErr = fmt.Errorf("pagestore: sync directory %s: %w", s.dir, err)
		}
	}
	return firstErr
}

// CleanResult describes one cleaning pass.
type CleanResult struct {
	SegmentsCleaned int
	PagesRelocated  int
	BytesRelocated  int64
	BytesReclaimed  int64 // segment bytes deleted
}

// Clean runs one cleaning pass now: it picks the sealed segments with the
// largest share of garbage (at least the cleaner threshold), appends their
// live records to the head of the log, checkpoints, and deletes them. A
// crash at any point loses nothing: until the checkpoint the old copies are
// authoritative, after it the new ones are, and leftover segments are
// deleted by recovery.
func (s *Store) Clean() (CleanResult, error) {
	return s.clean(context.Background(), nil)
}

type victim struct {
	seg     *segment
	garbage int64
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
	var victims []victim
	for _, seg := range s.segs {
		if seg == s.head || seg.size == 0 {
			continue
		}
		garbage := seg.size - seg.live
		if float64(garbage) >= s.opts.CleanerThreshold*float64(seg.size) {
			victims = append(victims, victim{seg, garbage})
		}
	}
	s.mu.RUnlock()
	if len(victims) == 0 {
		return res, nil
	}
	slices.SortFunc(victims, func(a, b victim) int { return int(b.garbage - a.garbage) })
	victims = victims[:min(len(victims), defaultCleanerMaxVictims)]

	for _, v := range victims {
		n, bytes, err := s.relocate(ctx, v.seg, limiter)
		res.PagesRelocated += n
		res.BytesRelocated += bytes
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
		if s.segs[v.seg.num] != v.seg {
			res.SegmentsCleaned++
			res.BytesReclaimed += v.seg.size
		}
	}
	s.mu.RUnlock()
	s.stats.cleanPasses.Add(1)
	s.stats.segsCleaned.Add(int64(res.SegmentsCleaned))
	s.stats.relocatedBytes.Add(res.BytesRelocated)
	return res, nil
}

// relocate copies the live records of seg to the head of the log, with new
// sequence numbers and unchanged payloads (no recompression).
func (s *Store) relocate(ctx context.Context, seg *segment, limiter *rate.Limiter) (int, int64, error) {
	// Which records of seg are live: one scan of the page map.
	type liveRec struct {
		id  PageID
		loc location
	}
	var recs []liveRec
	s.mu.RLock()
	if s.closed || s.segs[seg.num] != seg {
		s.mu.RUnlock()
		return 0, 0, nil // deleted meanwhile
	}
	for id, e := range s.pmap.entries {
		if e.seg == seg.num {
			recs = append(recs, liveRec{PageID(id), e})
		}
	}
	seg.pin()
	s.mu.RUnlock()
	defer seg.unpin()
	slices.SortFunc(recs, func(a, b liveRec) int { return int(a.loc.off) - int(b.loc.off) })

	scratch := vfs.AlignedBuffer(s.pageSize + recordHeaderSize + 2*vfs.BlockSize)
	var moved int
	var bytes int64
	for _, r := range recs {
		if limiter != nil {
			if err := limiter.WaitN(ctx, int(r.loc.len)); err != nil {
				return moved, bytes, err
			}
		}
		rec, err := readAligned(seg.f, scratch, int64(r.loc.off), int(r.loc.len))
		if err != nil {
			return moved, bytes, fmt.Errorf("pagestore: clean: read segment %s offset %d: %w", seg.path, r.loc.off, err)
		}
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

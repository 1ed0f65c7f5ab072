package pagestore

import (
	"fmt"
	"slices"
)

// Checkpoints. A checkpoint records the page map and the log position it
// describes, so that recovery replays only the log after it, and so that
// segments no page lives in any more can be deleted. It is either full (the
// whole map, CHECKPOINT, checkpointfile.go) or a delta (the entries changed
// since the previous checkpoint, appended to MAPLOG, maplog.go); see
// Options.MapLogRatio for the choice.
//
// Locks: ckptMu is held throughout (it guards mapLog and the generation
// counters); mu only while the map is snapshotted and while the results are
// installed. The file I/O runs without mu.

// Checkpoint writes the page map to the checkpoint files, after making the
// log it describes durable, and deletes segments no page lives in any more.
// Recovery then starts from this point: checkpoints bound recovery time.
func (s *Store) Checkpoint() error { return s.checkpoint(false) }

func (s *Store) checkpoint(clean bool) error {
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()

	s.mu.Lock()
	if s.closed || s.mapLog == nil {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.failed != nil {
		err := s.failed
		s.mu.Unlock()
		return err
	}
	state := ckptState{nextSeq: s.nextSeq, nextSegNum: s.nextSegNum}
	if clean {
		state.flags |= checkpointFlagClean
	}
	heads := map[*segment]bool{}
	for i, st := range s.streams {
		if st.head != nil {
			state.replay[i] = replayPos{seg: st.head.num, off: uint32(st.head.size)}
			heads[st.head] = true
		}
	}
	if state.replay[streamHot].seg == 0 {
		state.replay[streamHot] = replayPos{seg: state.nextSegNum}
	}

	fullSize := checkpointHeaderSize + len(s.segs)*segInfoSize + len(s.pmap.entries)*locationSize + 4
	var dirtySegs []segInfo
	for _, seg := range s.segs {
		if seg.stampDirty {
			dirtySegs = append(dirtySegs, segInfo{seg.num, seg.stamp})
		}
	}
	deltaSize := paddedSize(mapDeltaSize(len(dirtySegs), len(s.pmap.dirtyIDs)))
	full := s.needFull || deltaSize > maxMapDeltaBytes ||
		float64(s.mapLogBytes+int64(deltaSize)) > s.opts.MapLogRatio*float64(fullSize)
	var (
		fullCkpt *checkpoint
		delta    *mapDelta
	)
	if full {
		fullCkpt = &checkpoint{pageSize: uint32(s.pageSize), generation: s.generation + 1, ckptState: state, entries: s.pmap.clone()}
		for _, seg := range s.segs {
			fullCkpt.segs = append(fullCkpt.segs, segInfo{seg.num, seg.stamp})
		}
		slices.SortFunc(fullCkpt.segs, func(a, b segInfo) int { return int(a.num) - int(b.num) })
		s.pmap.forgetDirty()
	} else {
		slices.SortFunc(dirtySegs, func(a, b segInfo) int { return int(a.num) - int(b.num) })
		delta = &mapDelta{generation: s.generation, number: s.deltas + 1, ckptState: state, segs: dirtySegs, entries: s.pmap.takeDirty()}
	}
	for _, seg := range s.segs {
		seg.stampDirty = false
	}
	// Segments no page of the snapshot lives in, that recovery from this
	// checkpoint will not replay: deleted once it is durable.
	var obsolete []*segment
	for num, seg := range s.segs {
		if !heads[seg] && seg.sealed && seg.live == 0 && num < state.nextSegNum {
			obsolete = append(obsolete, seg)
		}
	}
	sinceCkpt := s.sinceCkpt
	s.mu.Unlock()

	// Everything the snapshot describes must be durable before the
	// checkpoint that refers to it.
	if err := s.Sync(); err != nil {
		return fmt.Errorf("pagestore: checkpoint: %w", err)
	}
	var n int64
	var err error
	if full {
		n, err = writeCheckpoint(s.fs, s.dir, fullCkpt)
		if err == nil {
			// The log's deltas extend the previous generation; a crash
			// before this truncation is durable leaves them, and
			// recovery ignores them.
			err = s.mapLog.Truncate(0)
			if err == nil {
				err = s.mapLog.Sync()
			}
			if err != nil {
				err = fmt.Errorf("pagestore: empty %s: %w", mapLogName, err)
			}
		}
	} else {
		b := delta.encode()
		n = int64(len(b))
		if _, err = s.mapLog.WriteAt(b, s.mapLogBytes); err == nil {
			err = s.mapLog.Sync()
		}
		if err != nil {
			err = fmt.Errorf("pagestore: append to %s: %w", mapLogName, err)
		}
	}
	if err != nil {
		s.mu.Lock()
		err = s.fail(err)
		s.mu.Unlock()
		return err
	}
	s.stats.fileBytes.Add(n)
	s.stats.mapBytes.Add(n)
	s.stats.checkpoints.Add(1)

	s.mu.Lock()
	if full {
		s.generation++
		s.deltas = 0
		s.needFull = false
		s.ckptBytes = n
		s.mapLogBytes = 0
		s.stats.fullCkpts.Add(1)
	} else {
		s.deltas++
		s.mapLogBytes += n
	}
	s.sinceCkpt -= sinceCkpt
	var remove []*segment
	for _, seg := range obsolete {
		if s.segs[seg.num] == seg && seg.live == 0 && seg.cleanable() {
			remove = append(remove, seg)
			delete(s.segs, seg.num)
		}
	}
	s.mu.Unlock()
	var firstErr error
	for _, seg := range remove {
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
		seg.freeing.Store(&s.freeing)
		seg.unpin()
	}
	if len(remove) > 0 && firstErr == nil {
		// Not needed for correctness (recovery deletes leftovers), but
		// makes the space reclaim durable.
		if err := s.fs.SyncDir(s.dir); err != nil {
			firstErr = fmt.Errorf("pagestore: sync directory %s: %w", s.dir, err)
		}
	}
	return firstErr
}

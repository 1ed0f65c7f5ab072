package pagestore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/stratadb/strata/internal/vfs"
)

// recover loads the checkpoint and replays the log after it. See
// docs/ARCHITECTURE.md ("Page store recovery") for the rules it enforces.
func (s *Store) recover() error {
	names, err := s.fs.List(s.dir)
	if err != nil {
		return fmt.Errorf("pagestore: list %s: %w", s.dir, err)
	}
	var nums []uint32
	for _, name := range names {
		if n, ok := parseSegmentFileName(name); ok {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)

	ckpt, err := readCheckpoint(s.fs, s.dir)
	if err != nil {
		return err
	}
	if ckpt == nil {
		if len(nums) > 0 {
			return fmt.Errorf("pagestore: %s: %w: segment files but no %s", s.dir, ErrCorrupt, checkpointName)
		}
		return s.create()
	}
	if s.opts.PageSize != 0 && s.opts.PageSize != int(ckpt.pageSize) {
		return fmt.Errorf("pagestore: %s: %w: store has %d-byte pages, options ask for %d", s.dir, ErrPageSize, ckpt.pageSize, s.opts.PageSize)
	}
	s.pageSize = int(ckpt.pageSize)
	if err := s.opts.checkSizes(s.pageSize); err != nil {
		return err
	}
	s.buf = vfs.AlignedBuffer(s.opts.WriteBufferSize)
	s.nextSeq = ckpt.nextSeq
	s.nextSegNum = ckpt.nextSegNum
	s.pmap.entries = ckpt.entries
	for _, e := range ckpt.entries {
		if e.present() {
			s.pmap.live++
		}
	}
	if st, err := s.fs.Stat(filepath.Join(s.dir, checkpointName)); err == nil {
		s.ckptBytes = st.Size()
	}
	// A crash during a checkpoint can leave its temporary file behind.
	_ = s.fs.Remove(filepath.Join(s.dir, checkpointTmpName))

	// Segments the checkpoint needs: those its map points into and every
	// one from the replay position on. Others are leftovers of a cleaning
	// pass that crashed after its checkpoint but before deleting them.
	referenced := make(map[uint32]bool)
	for _, e := range ckpt.entries {
		if e.present() {
			referenced[e.seg] = true
		}
	}
	onDisk := make(map[uint32]bool, len(nums))
	var replay []uint32
	for _, n := range nums {
		onDisk[n] = true
		switch {
		case n >= ckpt.replaySeg:
			if n >= ckpt.nextSegNum+1<<20 {
				return fmt.Errorf("pagestore: %s: %w: segment %d far beyond the checkpoint's next segment %d", s.dir, ErrCorrupt, n, ckpt.nextSegNum)
			}
			replay = append(replay, n)
		case referenced[n]:
		default:
			path := segmentPath(s.dir, n)
			s.log.Info("pagestore: removing obsolete segment", "file", path)
			if err := s.fs.Remove(path); err != nil {
				return fmt.Errorf("pagestore: remove obsolete segment %s: %w", path, err)
			}
		}
	}
	for n := range referenced {
		if !onDisk[n] {
			return fmt.Errorf("pagestore: %s: %w: checkpoint references missing segment %s", s.dir, ErrCorrupt, segmentFileName(n))
		}
		if err := s.openSegment(n); err != nil {
			return err
		}
	}
	// The replay segment was synced before the checkpoint named it, so it
	// must exist (unless nothing was ever written to the log), and the
	// replayed segments must be contiguous: a gap means a lost file.
	if (len(replay) == 0 || replay[0] != ckpt.replaySeg) && ckpt.replaySeg < ckpt.nextSegNum {
		return fmt.Errorf("pagestore: %s: %w: replay segment %s is missing", s.dir, ErrCorrupt, segmentFileName(ckpt.replaySeg))
	}
	for i, n := range replay {
		if n != ckpt.replaySeg+uint32(i) {
			return fmt.Errorf("pagestore: %s: %w: segment %s is missing", s.dir, ErrCorrupt, segmentFileName(ckpt.replaySeg+uint32(i)))
		}
	}
	for i, n := range replay {
		if _, ok := s.segs[n]; !ok {
			if err := s.openSegment(n); err != nil {
				return err
			}
		}
		from := int64(0)
		if n == ckpt.replaySeg {
			from = int64(ckpt.replayOff)
			if s.segs[n].size < from {
				return fmt.Errorf("pagestore: %s: %w: segment %s is %d bytes, the checkpoint replays it from %d", s.dir, ErrCorrupt, s.segs[n].path, s.segs[n].size, from)
			}
		}
		dropped, err := s.replaySegment(s.segs[n], from, i == len(replay)-1, referenced[n] || n < ckpt.nextSegNum)
		if err != nil {
			return err
		}
		if dropped {
			// Reuse the number: the next segment must follow the last
			// one on disk without a gap.
			s.nextSegNum = n
		} else if n >= s.nextSegNum {
			s.nextSegNum = n + 1
		}
	}
	// Live bytes per segment, from the recovered map.
	for id := len(s.pmap.entries) - 1; id >= 0; id-- { // Allocate pops from the end: lowest ids first
		e := s.pmap.entries[id]
		if !e.present() {
			s.pushFreeID(PageID(id))
			continue
		}
		seg, ok := s.segs[e.seg]
		if !ok {
			return fmt.Errorf("pagestore: %s: %w: page %d in missing segment %s", s.dir, ErrCorrupt, id, segmentFileName(e.seg))
		}
		if int64(e.off)+int64(e.len) > seg.size {
			return fmt.Errorf("pagestore: %s: %w: page %d at offset %d beyond the end of segment %s (%d bytes)", s.dir, ErrCorrupt, id, e.off, seg.path, seg.size)
		}
		seg.live += int64(e.len)
	}
	s.nextID = PageID(len(s.pmap.entries))
	if err := s.newHead(); err != nil {
		return fmt.Errorf("pagestore: %w", err)
	}
	return nil
}

// create initialises an empty store: an empty checkpoint, written before
// any segment exists, so that a directory with segments and no checkpoint is
// always an error.
func (s *Store) create() error {
	s.pageSize = s.opts.PageSize
	if s.pageSize == 0 {
		s.pageSize = DefaultPageSize
	}
	if err := s.opts.checkSizes(s.pageSize); err != nil {
		return err
	}
	s.buf = vfs.AlignedBuffer(s.opts.WriteBufferSize)
	s.nextSegNum = 1
	// The store's directory, and any of its ancestors, may have just been
	// created: make their entries durable, or a crash could lose the whole
	// store.
	if err := vfs.SyncAncestors(s.fs, s.dir); err != nil {
		return fmt.Errorf("pagestore: %w", err)
	}
	n, err := writeCheckpoint(s.fs, s.dir, &checkpoint{pageSize: uint32(s.pageSize), replaySeg: 1, nextSegNum: 1})
	if err != nil {
		return err
	}
	s.ckptBytes = n
	return s.newHead()
}

func (s *Store) openSegment(num uint32) error {
	path := segmentPath(s.dir, num)
	f, err := s.fs.OpenFile(path, os.O_RDWR, 0, vfs.OpenOptions{Direct: !s.opts.DisableDirectIO})
	if err != nil {
		return fmt.Errorf("pagestore: open segment %s: %w", path, err)
	}
	s.noteDirect(f)
	size, err := f.Size()
	if err != nil {
		f.Close()
		return fmt.Errorf("pagestore: size of segment %s: %w", path, err)
	}
	seg := &segment{num: num, path: path, f: f, size: size}
	seg.refs.Store(1)
	s.segs[num] = seg
	return nil
}

// replaySegment applies the records of seg from offset from to the page
// map. In the newest segment (last), the first invalid record is the torn
// tail of the log: the file is truncated there. Anywhere else an invalid
// record is corruption, because every older segment was synced whole
// before the next was created.
//
// A newest segment whose header is invalid was created but never synced
// (a crash between creating the file and the first sync): it is removed and
// dropped is true, so its number is reused. That is only allowed when
// nothing can have been synced in it: it is not needed by the checkpoint
// (needed) and no valid record follows the header; otherwise it is
// corruption, and the file is left alone.
func (s *Store) replaySegment(seg *segment, from int64, last, needed bool) (dropped bool, err error) {
	data := vfs.AlignedBuffer(int(seg.size))
	n, err := seg.f.ReadAt(data, 0) // whole blocks: the size may be unaligned after a truncation
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("pagestore: read segment %s: %w", seg.path, err)
	}
	data = data[:n]
	corrupt := func(off int64, why string) error {
		return fmt.Errorf("pagestore: segment %s offset %d: %w: %s", seg.path, off, ErrCorrupt, why)
	}
	if err := checkSegmentHeader(data, s.pageSize, seg.num); err != nil {
		if !last || needed {
			return false, corrupt(0, err.Error())
		}
		if len(data) > segmentHeaderSize {
			if _, _, rerr := decodeRecord(data[segmentHeaderSize:], s.pageSize); rerr == nil {
				return false, corrupt(0, err.Error()+" (but records follow)")
			}
		}
		s.log.Warn("pagestore: dropping empty torn segment", "file", seg.path, "reason", err)
		delete(s.segs, seg.num)
		seg.unpin()
		if err := s.fs.Remove(seg.path); err != nil {
			return false, fmt.Errorf("pagestore: remove torn segment %s: %w", seg.path, err)
		}
		if err := s.fs.SyncDir(s.dir); err != nil {
			return false, fmt.Errorf("pagestore: sync directory %s: %w", s.dir, err)
		}
		return true, nil
	}
	off := max(from, segmentHeaderSize)
	end := int64(len(data))
	var tornErr string
	for off < end {
		if data[off] == 0 {
			// Padding to the next block boundary, or (at a boundary) the
			// end of the written data.
			next := (off + vfs.BlockSize) &^ (vfs.BlockSize - 1)
			if off&(vfs.BlockSize-1) == 0 || !allZero(data[off:min(next, end)]) {
				if !allZero(data[off:end]) {
					tornErr = "nonzero bytes after padding"
				}
				break
			}
			off = next
			continue
		}
		h, _, err := decodeRecord(data[off:], s.pageSize)
		if err == nil && h.seq < s.nextSeq {
			err = fmt.Errorf("sequence number %d not above %d", h.seq, s.nextSeq-1)
		}
		if err != nil {
			tornErr = err.Error()
			break
		}
		loc := location{seg: seg.num, off: uint32(off), len: uint32(h.size())}
		if h.kind == kindPage {
			s.pmap.set(h.pageID, loc)
		} else {
			s.pmap.remove(h.pageID)
		}
		s.nextSeq = h.seq + 1
		off += int64(h.size())
	}
	if tornErr == "" {
		seg.size = int64(len(data))
		return false, nil
	}
	if !last {
		return false, corrupt(off, tornErr)
	}
	s.log.Warn("pagestore: dropping torn log tail", "file", seg.path, "offset", off, "bytes", end-off, "reason", tornErr)
	if err := seg.f.Truncate(off); err != nil {
		return false, fmt.Errorf("pagestore: truncate torn tail of %s at %d: %w", seg.path, off, err)
	}
	if err := seg.f.Sync(); err != nil {
		return false, fmt.Errorf("pagestore: sync %s: %w", seg.path, err)
	}
	seg.size = off
	return false, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

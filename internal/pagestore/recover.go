package pagestore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/stratadb/strata/internal/vfs"
)

// recover loads the checkpoint and the map log's deltas, and replays the
// log after them. See docs/ARCHITECTURE.md ("Page store recovery") for the
// rules it enforces.
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
	if st, err := s.fs.Stat(filepath.Join(s.dir, checkpointName)); err == nil {
		s.ckptBytes = st.Size()
	}
	// A crash during a checkpoint can leave its temporary file behind.
	_ = s.fs.Remove(filepath.Join(s.dir, checkpointTmpName))

	s.pmap.entries = ckpt.entries
	state := ckpt.ckptState
	stamps := map[uint32]uint64{}
	for _, si := range ckpt.segs {
		stamps[si.num] = si.stamp
	}
	s.generation = ckpt.generation
	s.needFull = ckpt.version != checkpointVersion
	if err := s.applyMapLog(&state, stamps); err != nil {
		return err
	}
	for _, e := range s.pmap.entries {
		if e.present() {
			s.pmap.live++
		}
	}
	s.nextSeq = state.nextSeq
	s.nextSegNum = state.nextSegNum

	// Segments the map points into, other than replay heads, are whole and
	// reflected in the map.
	referenced := make(map[uint32]bool)
	for _, e := range s.pmap.entries {
		if e.present() {
			referenced[e.seg] = true
		}
	}
	plan := planReplay(nums, state, referenced)
	if len(plan.problems) > 0 {
		return fmt.Errorf("pagestore: %s: %w: %s", s.dir, ErrCorrupt, plan.problems[0].msg)
	}
	for n := range referenced {
		if !state.isReplayHead(n) {
			if err := s.openSegment(n); err != nil {
				return err
			}
		}
	}
	if err := s.replay(plan.replay, state, referenced, stamps); err != nil {
		return err
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
	// Only now, with everything checked, the segments no page lives in
	// and none is replayed from: a store found corrupt keeps its segments
	// (replay may still have dropped a torn tail or a segment that never
	// got a header, which hold no record).
	for _, n := range plan.obsolete {
		path := segmentPath(s.dir, n)
		s.log.Info("pagestore: removing obsolete segment", "file", path)
		if err := s.fs.Remove(path); err != nil {
			return fmt.Errorf("pagestore: remove obsolete segment %s: %w", path, err)
		}
	}
	for _, seg := range s.segs {
		if st, ok := stamps[seg.num]; ok && st > seg.stamp {
			seg.stamp = st
		}
	}
	s.nextID = PageID(len(s.pmap.entries))
	if err := s.truncateMapLog(); err != nil {
		return err
	}
	if err := s.newHead(streamHot); err != nil {
		return fmt.Errorf("pagestore: %w", err)
	}
	return nil
}

// applyMapLog opens the map log (creating it if there is none) and applies
// its deltas of the checkpoint's generation to the map, the state and the
// stamps.
func (s *Store) applyMapLog(state *ckptState, stamps map[uint32]uint64) error {
	path := filepath.Join(s.dir, mapLogName)
	f, err := s.fs.OpenFile(path, os.O_RDWR, 0, vfs.OpenOptions{})
	if os.IsNotExist(err) {
		// A store of the previous format, or created by a version that
		// had no map log. The next checkpoint is full.
		s.needFull = true
		return s.createMapLog()
	}
	if err != nil {
		return fmt.Errorf("pagestore: open %s: %w", path, err)
	}
	s.mapLog = f
	// Deltas a crash left written but not synced are made durable before
	// recovery acts on them: it removes the segments they leave obsolete,
	// and the next session's syncs make those removals durable. Written
	// again first: after a failed fsync they may be only in the OS's
	// cache, marked clean (vfs.RewriteRange).
	size, err := f.Size()
	if err != nil {
		return fmt.Errorf("pagestore: size of %s: %w", path, err)
	}
	if err := vfs.RewriteRange(f, 0, size); err != nil {
		return fmt.Errorf("pagestore: %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("pagestore: sync %s: %w", path, err)
	}
	deltas, valid, err := readMapLog(f, s.generation, uint32(s.pageSize))
	if err != nil {
		if errors.Is(err, ErrCorrupt) {
			return fmt.Errorf("pagestore: %s: %w", path, err)
		}
		return fmt.Errorf("pagestore: read %s: %w", path, err)
	}
	if err := applyDeltas(&s.pmap, state, stamps, deltas, s.needFull); err != nil {
		return fmt.Errorf("pagestore: %s: %w: %v", path, ErrCorrupt, err)
	}
	// Entries point below their own record's next segment number, and
	// that only grows: below the final one.
	s.deltas = uint64(len(deltas))
	s.mapLogBytes = valid
	return nil
}

// applyDeltas applies the map log's deltas, in order, to the page map, the
// checkpoint state and the segments' stamps. fromV1 says the checkpoint is
// of version 1, which no delta can extend.
func applyDeltas(pm *pageMap, state *ckptState, stamps map[uint32]uint64, deltas []*mapDelta, fromV1 bool) error {
	if fromV1 && len(deltas) > 0 {
		return errors.New("deltas extend a checkpoint of version 1")
	}
	for _, d := range deltas {
		if d.nextSeq < state.nextSeq || d.nextSegNum < state.nextSegNum {
			return fmt.Errorf("delta %d goes back in the log", d.number)
		}
		*state = d.ckptState
		for _, e := range d.entries {
			if uint64(e.id) >= uint64(len(pm.entries)) {
				if !e.loc.present() {
					continue
				}
				pm.grow(uint64(e.id) + 1)
			}
			pm.entries[e.id] = e.loc
		}
		for _, si := range d.segs {
			stamps[si.num] = si.stamp
		}
	}
	return nil
}

// replayPlan is what recovery does with the segment files, decided from
// the checkpoint state (after the map log) and the segments the page map
// points into (referenced).
type replayPlan struct {
	// replay: the segments replayed, in increasing order: each stream's
	// head at the checkpoint (from its replay position) and every segment
	// created after it.
	replay []uint32
	// obsolete: segments neither referenced nor replayed, left by a
	// cleaning pass that crashed after its checkpoint but before deleting
	// them. Recovery deletes them.
	obsolete []uint32
	// problems: why recovery fails (each is corruption), in the order it
	// checks them.
	problems []segmentProblem
}

// segmentProblem is a reason recovery fails, about segment num.
type segmentProblem struct {
	num uint32
	msg string
}

// isReplayHead says whether segment n is a stream's replay segment.
// mustHold reports whether replayed segment n must hold data: the page
// map points into it, or it is a replay head that existed at the
// checkpoint. A replay head numbered as the checkpoint's next segment was
// created after it: its file may be all a crash left of it (its directory
// entry durable, its header not), as of any segment written since.
func (c *ckptState) mustHold(n uint32, referenced map[uint32]bool) bool {
	return c.isReplayHead(n) && n < c.nextSegNum || referenced[n]
}

func (c *ckptState) isReplayHead(n uint32) bool {
	for _, r := range c.replay {
		if r.seg != 0 && r.seg == n {
			return true
		}
	}
	return false
}

// planReplay decides, from the segment files on disk (nums, increasing),
// which segments recovery replays and which it deletes, and checks that no
// segment it needs is missing. It only reads its arguments.
func planReplay(nums []uint32, state ckptState, referenced map[uint32]bool) replayPlan {
	var p replayPlan
	onDisk := make(map[uint32]bool, len(nums))
	for _, n := range nums {
		onDisk[n] = true
		switch {
		case n >= state.nextSegNum:
			if n >= state.nextSegNum+1<<20 {
				p.problems = append(p.problems, segmentProblem{n, fmt.Sprintf("segment %d far beyond the checkpoint's next segment %d", n, state.nextSegNum)})
			}
			p.replay = append(p.replay, n)
		case state.isReplayHead(n):
			p.replay = append(p.replay, n)
		case referenced[n]:
		default:
			p.obsolete = append(p.obsolete, n)
		}
	}
	var missing []uint32
	for n := range referenced {
		if !onDisk[n] {
			missing = append(missing, n)
		}
	}
	slices.Sort(missing)
	for _, n := range missing {
		p.problems = append(p.problems, segmentProblem{n, "checkpoint references missing segment " + segmentFileName(n)})
	}
	// A replay head was synced before the checkpoint named it, so it must
	// exist (unless it is the segment to be created next: nothing was
	// written), and the segments created after the checkpoint are numbered
	// without a gap: a gap means a lost file.
	for _, r := range state.replay {
		if r.seg != 0 && r.seg < state.nextSegNum && !onDisk[r.seg] {
			p.problems = append(p.problems, segmentProblem{r.seg, fmt.Sprintf("replay segment %s is missing", segmentFileName(r.seg))})
		}
	}
	next := state.nextSegNum
	for _, n := range p.replay {
		if n < state.nextSegNum {
			continue
		}
		if n != next {
			p.problems = append(p.problems, segmentProblem{next, fmt.Sprintf("segment %s is missing", segmentFileName(next))})
			break
		}
		next++
	}
	return p
}

// truncateMapLog drops what follows the map log's valid records: a record
// torn by a crash, or records of an older generation. It runs once recovery
// has succeeded, so that a store it reports as corrupt keeps all its bytes.
func (s *Store) truncateMapLog() error {
	path := filepath.Join(s.dir, mapLogName)
	size, err := s.mapLog.Size()
	if err != nil {
		return fmt.Errorf("pagestore: size of %s: %w", path, err)
	}
	if size <= s.mapLogBytes {
		return nil
	}
	s.log.Warn("pagestore: dropping the torn or obsolete tail of the map log", "file", path, "offset", s.mapLogBytes, "bytes", size-s.mapLogBytes)
	if err := s.mapLog.Truncate(s.mapLogBytes); err != nil {
		return fmt.Errorf("pagestore: truncate %s at %d: %w", path, s.mapLogBytes, err)
	}
	if err := s.mapLog.Sync(); err != nil {
		return fmt.Errorf("pagestore: sync %s: %w", path, err)
	}
	return nil
}

// createMapLog creates an empty map log and makes its directory entry
// durable (deltas appended to a file whose name a crash can lose would be
// lost with it).
func (s *Store) createMapLog() error {
	path := filepath.Join(s.dir, mapLogName)
	f, err := s.fs.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644, vfs.OpenOptions{})
	if err != nil {
		return fmt.Errorf("pagestore: create %s: %w", path, err)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		f.Close()
		return fmt.Errorf("pagestore: sync directory %s: %w", s.dir, err)
	}
	s.mapLog = f
	s.mapLogBytes = 0
	return nil
}

// replay applies the records of the replayed segments (nums, increasing)
// to the page map. Both streams' records are newer than the checkpoint;
// between them the record with the higher sequence number wins (the cleaner
// relocates a page only if no newer record of it exists, so a relocation
// and a caller's write of the same page are ordered by their sequence
// numbers, not by their place in the log).
//
// In each stream only the newest segment may end in a torn record (every
// older one was fsynced whole before its successor got a byte): its file
// is truncated there. A segment whose header is invalid and that holds no
// valid record was created but never synced; it is removed if it is the
// newest segment, and otherwise rewritten as an empty segment so that the
// numbers stay without a gap. Any other invalid bytes are corruption.
func (s *Store) replay(nums []uint32, state ckptState, referenced map[uint32]bool, stamps map[uint32]uint64) error {
	type replayed struct {
		seg    *segment
		stream int
		empty  bool // invalid header, nothing valid after it
	}
	var segs []*replayed
	// One window reads every segment in turn: recovery holds a window's
	// worth of the log, however long the log after the checkpoint is.
	w := newSegmentWindow(s.pageSize)
	for _, n := range nums {
		if err := s.openSegment(n); err != nil {
			return err
		}
		seg := s.segs[n]
		// The header and the first record are all the header checks read.
		w.reset(seg.f, seg.size)
		var head []byte
		if seg.size > 0 {
			var err error
			if head, err = w.span(0, segmentHeaderSize+recordHeaderSize+int64(s.pageSize)); err != nil {
				return fmt.Errorf("pagestore: read segment %s: %w", seg.path, err)
			}
		}
		stream, empty, herr := checkReplayedHeader(head, s.pageSize, n, state.mustHold(n, referenced))
		if herr != nil {
			return fmt.Errorf("pagestore: segment %s offset 0: %w: %v", seg.path, ErrCorrupt, herr)
		}
		if !empty {
			seg.stream = stream
		}
		segs = append(segs, &replayed{seg: seg, stream: stream, empty: empty})
	}
	// Empty segments at the end are removed, their numbers reused.
	for len(segs) > 0 && segs[len(segs)-1].empty {
		r := segs[len(segs)-1]
		segs = segs[:len(segs)-1]
		s.log.Warn("pagestore: dropping empty torn segment", "file", r.seg.path)
		delete(s.segs, r.seg.num)
		r.seg.unpin()
		if err := s.fs.Remove(r.seg.path); err != nil {
			return fmt.Errorf("pagestore: remove torn segment %s: %w", r.seg.path, err)
		}
		if err := s.fs.SyncDir(s.dir); err != nil {
			return fmt.Errorf("pagestore: sync directory %s: %w", s.dir, err)
		}
	}
	var newest [numStreams]uint32
	for _, r := range segs {
		if !r.empty {
			newest[r.stream] = r.seg.num
		}
		if r.seg.num >= s.nextSegNum {
			s.nextSegNum = r.seg.num + 1
		}
	}
	rm := replayMap{pm: &s.pmap, seqs: map[PageID]uint64{}}
	var nextSeq [numStreams]uint64 // above the stream's last record
	maxSeq := state.nextSeq
	for _, r := range segs {
		seg := r.seg
		if r.empty {
			if err := s.rewriteEmptySegment(seg); err != nil {
				return err
			}
			continue
		}
		from, err := replayFrom(state, seg.num, r.stream, seg.size)
		if err != nil {
			return fmt.Errorf("pagestore: %s: %w: segment %s %v", s.dir, ErrCorrupt, seg.path, err)
		}
		w.reset(seg.f, seg.size)
		end, next, tornErr, err := replayRecords(w, from, s.pageSize, max(state.nextSeq, nextSeq[r.stream]),
			func(off int64, h recordHeader) { rm.apply(seg.num, off, h) })
		if err != nil {
			return fmt.Errorf("pagestore: read segment %s: %w", seg.path, err)
		}
		if next > 0 {
			nextSeq[r.stream] = next
			maxSeq = max(maxSeq, next)
			stamps[seg.num] = max(stamps[seg.num], next-1)
		}
		// What was replayed may be only in the OS's cache, marked clean
		// after a failed fsync: written again before it is synced below
		// (vfs.RewriteRange; direct segments too, in whole blocks).
		if err := vfs.RewriteRange(seg.f, from, end); err != nil {
			return fmt.Errorf("pagestore: segment %s: %w", seg.path, err)
		}
		if tornErr != "" {
			if seg.num != newest[r.stream] {
				return fmt.Errorf("pagestore: segment %s offset %d: %w: %s", seg.path, end, ErrCorrupt, tornErr)
			}
			s.log.Warn("pagestore: dropping torn log tail", "file", seg.path, "offset", end, "bytes", seg.size-end, "reason", tornErr)
			// A direct segment is cut on a block boundary, the rest of
			// the block zeroed (vfs.CutTail), so that the next recovery
			// can write every block it replays again.
			cut, err := vfs.CutTail(seg.f, end)
			if err != nil {
				return fmt.Errorf("pagestore: cut torn tail of %s at %d: %w", seg.path, end, err)
			}
			if err := seg.f.Sync(); err != nil {
				return fmt.Errorf("pagestore: sync %s: %w", seg.path, err)
			}
			seg.size = cut
		} else if err := seg.f.Sync(); err != nil {
			// What was replayed may be only in the OS's cache (the last
			// session died, or its fsync failed, before it was synced):
			// it is durable before anything the new session makes durable
			// (a checkpoint's map) points to it or is written after it.
			return fmt.Errorf("pagestore: sync %s: %w", seg.path, err)
		}
		seg.written, seg.synced = seg.size, seg.size
	}
	if len(segs) > 0 {
		// And their directory entries.
		if err := s.fs.SyncDir(s.dir); err != nil {
			return fmt.Errorf("pagestore: sync directory %s: %w", s.dir, err)
		}
	}
	s.nextSeq = maxSeq
	return nil
}

// The rest of this file's replay logic only reads: Inspect (inspect.go)
// uses it too, so that it rebuilds the page map exactly as Open does.

// checkReplayedHeader verifies the header of a segment that recovery
// replays and returns the segment's stream. A segment whose header is
// invalid and after which no valid record starts was created but never
// synced (empty), unless it must hold data (mustHold: it is a replay head
// or the page map points into it): then, as when records follow, the
// invalid header is an error.
func checkReplayedHeader(data []byte, pageSize int, num uint32, mustHold bool) (stream int, empty bool, err error) {
	stream, err = checkSegmentHeader(data, pageSize, num)
	if err == nil {
		return stream, false, nil
	}
	if mustHold {
		return 0, false, err
	}
	if len(data) > segmentHeaderSize {
		if _, _, rerr := decodeRecord(data[segmentHeaderSize:], pageSize); rerr == nil {
			return 0, false, fmt.Errorf("%v (but records follow)", err)
		}
	}
	return 0, true, nil
}

// replayFrom returns the offset from which recovery replays segment num of
// the given stream, size bytes long: its stream's replay offset if it is
// the stream's replay segment, else the start (a segment created after the
// checkpoint). The error says why the segment contradicts the checkpoint.
func replayFrom(state ckptState, num uint32, stream int, size int64) (int64, error) {
	if rp := state.replay[stream]; rp.seg == num {
		if size < int64(rp.off) {
			return 0, fmt.Errorf("is %d bytes, the checkpoint replays it from %d", size, rp.off)
		}
		return int64(rp.off), nil
	}
	if num < state.nextSegNum {
		return 0, fmt.Errorf("is stream %d's replay segment in the checkpoint but a segment of stream %d", 1-stream, stream)
	}
	return 0, nil
}

// replayMap applies replayed records to a page map: for each page the
// record with the highest sequence number wins, a free record deleting it.
type replayMap struct {
	pm   *pageMap
	seqs map[PageID]uint64 // per page id replayed: the winning record's sequence number plus one
}

func (r *replayMap) apply(seg uint32, off int64, h recordHeader) {
	if r.seqs[h.pageID] <= h.seq {
		r.seqs[h.pageID] = h.seq + 1
		if h.kind == kindPage {
			r.pm.set(h.pageID, location{seg: seg, off: uint32(off), len: uint32(h.size())})
		} else {
			r.pm.remove(h.pageID)
		}
	}
}

// replayRecords walks a segment's records in src from offset from on, as
// recovery replays them: each must have a sequence number of at least
// minSeq and above the previous one. It calls apply for each, and returns
// where it stopped, the last sequence number applied plus one (0: none),
// why it stopped before the end ("" if it did not), and the error that
// kept it from reading src (then the rest is meaningless).
func replayRecords(src segmentBytes, from int64, pageSize int, minSeq uint64, apply func(off int64, h recordHeader)) (int64, uint64, string, error) {
	var next uint64
	end, why, err := walkRecords(src, from, pageSize, func(off int64, h recordHeader) error {
		if h.seq < max(minSeq, next) {
			return fmt.Errorf("sequence number %d not above %d", h.seq, max(minSeq, next)-1)
		}
		apply(off, h)
		next = h.seq + 1
		return nil
	})
	return end, next, why, err
}

// walkRecords decodes the records of a segment's bytes from offset from on
// (at least the end of the header) and calls visit with each valid one; an
// error from visit makes the record invalid. A zero byte where a record
// would start is padding: the walk skips to the next block boundary. A zero
// byte at a block boundary (or zeros up to the end of the data) ends the
// data. It returns where the walk stopped and, if it stopped on an invalid
// record or on nonzero bytes after padding, why; "" means the data ended
// there: at the end of data, at a block boundary followed by nothing but
// zeros, or inside padding that the end of data cut short (the returned
// offset is then the padding's start, not block aligned). The error is one
// of reading src (never one of its bytes).
func walkRecords(src segmentBytes, from int64, pageSize int, visit func(off int64, h recordHeader) error) (int64, string, error) {
	off := max(from, segmentHeaderSize)
	end := src.size()
	// A span of the largest record (at least a block) holds any record
	// starting at off and the padding up to the next block boundary.
	maxRecord := int64(max(recordHeaderSize+pageSize, vfs.BlockSize))
	for off < end {
		b, err := src.span(off, maxRecord)
		if err != nil {
			return off, "", err
		}
		if b[0] == 0 {
			nextBlock := (off + vfs.BlockSize) &^ (vfs.BlockSize - 1)
			if off&(vfs.BlockSize-1) == 0 || !allZero(b[:min(nextBlock, end)-off]) {
				zero, err := allZeroFrom(src, off)
				if err != nil {
					return off, "", err
				}
				if !zero {
					return off, "nonzero bytes after padding", nil
				}
				return off, "", nil
			}
			if nextBlock > end {
				return off, "", nil
			}
			off = nextBlock
			continue
		}
		h, _, err := decodeRecord(b, pageSize)
		if err == nil {
			err = visit(off, h)
		}
		if err != nil {
			return off, err.Error(), nil
		}
		off += int64(h.size())
	}
	return off, "", nil
}

// rewriteEmptySegment turns a segment file that was created but never
// synced into a valid empty segment, so that the numbers of the segments
// after it stay without a gap. It holds no page; the next checkpoint deletes
// it.
func (s *Store) rewriteEmptySegment(seg *segment) error {
	s.log.Warn("pagestore: rewriting empty torn segment", "file", seg.path)
	b := vfs.AlignedBuffer(vfs.BlockSize)
	encodeSegmentHeader(b, s.pageSize, seg.num, streamHot)
	if err := seg.f.Truncate(0); err != nil {
		return fmt.Errorf("pagestore: truncate %s: %w", seg.path, err)
	}
	if _, err := seg.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("pagestore: write %s: %w", seg.path, err)
	}
	if err := seg.f.Sync(); err != nil {
		return fmt.Errorf("pagestore: sync %s: %w", seg.path, err)
	}
	seg.stream = streamHot
	seg.size, seg.written, seg.synced = vfs.BlockSize, vfs.BlockSize, vfs.BlockSize
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
	s.nextSegNum = 1
	// The store's directory, and any of its ancestors, may have just been
	// created: make their entries durable, or a crash could lose the whole
	// store.
	if err := vfs.SyncAncestors(s.fs, s.dir); err != nil {
		return fmt.Errorf("pagestore: %w", err)
	}
	// The map log first, so that the checkpoint's directory sync covers it.
	path := filepath.Join(s.dir, mapLogName)
	f, err := s.fs.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644, vfs.OpenOptions{})
	if err != nil {
		return fmt.Errorf("pagestore: create %s: %w", path, err)
	}
	s.mapLog = f
	s.generation = 1
	c := &checkpoint{pageSize: uint32(s.pageSize), generation: s.generation}
	c.nextSegNum = 1
	c.replay[streamHot] = replayPos{seg: 1}
	n, err := writeCheckpoint(s.fs, s.dir, c)
	if err != nil {
		return err
	}
	s.ckptBytes = n
	return s.newHead(streamHot)
}

func (s *Store) openSegment(num uint32) error {
	path := segmentPath(s.dir, num)
	f, err := s.fs.OpenFile(path, os.O_RDWR, 0, vfs.OpenOptions{Direct: !s.opts.DisableDirectIO, PollReads: !s.opts.DisableReadPolling})
	if err != nil {
		return fmt.Errorf("pagestore: open segment %s: %w", path, err)
	}
	s.noteDirect(f)
	size, err := f.Size()
	if err != nil {
		f.Close()
		return fmt.Errorf("pagestore: size of segment %s: %w", path, err)
	}
	seg := &segment{num: num, path: path, f: f, size: size, written: size, synced: size, sealed: true}
	seg.refs.Store(1)
	s.segs[num] = seg
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

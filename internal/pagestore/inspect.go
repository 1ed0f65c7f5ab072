package pagestore

// Inspection: a read-only view of a store's files, for `strata check` and
// `strata advise`. It never writes, truncates, removes or locks anything.
//
// It takes recovery's decisions with recovery's own code (recover.go:
// applyDeltas, planReplay, checkReplayedHeader, replayFrom, replayRecords,
// replayMap; maplog.go: readMapLog), so the page map it rebuilds is the one
// Open would rebuild, and it verifies more than recovery does:
//
//   - every record of every segment of both streams, not only those after
//     the replay positions, and the padding between them;
//   - sequence numbers: strictly increasing within each stream, below the
//     checkpoint's next sequence number before the replay positions and not
//     below it after them;
//   - the checkpoint's page map (the full map with the map log's deltas
//     applied) against the records it names, which must lie before the
//     replay positions;
//   - each segment's stamp (the sequence number of its newest record, as
//     the checkpoints recorded it) against its records, so that records cut
//     from the end of a sealed segment are found;
//   - the map log's tail: a torn record or records of an older generation
//     (repairable: Open truncates them), a record of a newer generation or
//     out of number order (corruption);
//   - after a clean close, that nothing follows the checkpoint's replay
//     positions in their segments.
//
// Findings are corruption unless a crash explains them and Open repairs them
// (Finding.Repairable). States that a crash leaves and that Open keeps as
// they are (a segment cut inside its padding, garbage a torn write left in
// the padding of the map log's last record) are not reported: no later
// inspection could tell them from the same bytes in a healthy store.
//
// An Inspection is not safe for concurrent use, and must not run on a
// store that another process has open (the caller holds the store's lock).

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/vfs"
)

// Finding is one problem an inspection found in a file.
type Finding struct {
	File   string // path of the file
	Offset int64  // byte offset in it, -1 for the file as a whole
	Msg    string
	// Repairable marks a state that a crash explains and Open repairs (a
	// torn tail, an interrupted segment creation, a leftover file); every
	// other finding is corruption.
	Repairable bool
}

func (f Finding) String() string {
	if f.Offset < 0 {
		return fmt.Sprintf("%s: %s", f.File, f.Msg)
	}
	return fmt.Sprintf("%s offset %d: %s", f.File, f.Offset, f.Msg)
}

// Streams of SegmentInfo.Stream.
const (
	StreamHot  = streamHot  // pages written by callers
	StreamCold = streamCold // records relocated by the cleaner
)

// SegmentInfo summarises one segment file.
type SegmentInfo struct {
	Num    uint32
	Path   string
	Stream int // StreamHot or StreamCold; -1 if the header is invalid or the file was not read
	Size   int64
	// Replayed: recovery replays the segment (a stream's replay segment,
	// or created after the checkpoint).
	Replayed         bool
	Records, Frees   int
	Obsolete         bool // neither replayed nor referenced by the map: Open deletes it
	FirstSeq, EndSeq uint64
}

// Inspection is the result of Inspect.
type Inspection struct {
	Dir      string
	PageSize int
	// Version of the checkpoint file (1 or 2) and, for version 2, its
	// generation; Deltas is the number of map log records applied to it.
	Version    uint32
	Generation uint64
	Deltas     int
	// CleanClose: the last checkpoint (full or delta) was written by a
	// clean Close.
	CleanClose bool
	Segments   []SegmentInfo
	Findings   []Finding
	// MapUsable: the checkpoint was read, so the page map below is the one
	// Open would rebuild (less whatever the findings say is damaged).
	MapUsable bool

	fs        vfs.FS
	pmap      []location
	files     map[uint32]vfs.File
	mapLogCut int64 // where the map log's valid records end before its end, or where it ends inside its last record's padding (-1: neither)
}

// Inspect verifies the store in dir read-only. The error is for failures to
// read (I/O) or a directory that is no store; damage goes to Findings.
func Inspect(fs vfs.FS, dir string) (*Inspection, error) {
	in := &Inspection{Dir: dir, fs: fs, files: map[uint32]vfs.File{}, mapLogCut: -1}
	names, err := fs.List(dir)
	if err != nil {
		return nil, fmt.Errorf("pagestore: list %s: %w", dir, err)
	}
	var nums []uint32
	hasMapLog := false
	for _, name := range names {
		if n, ok := parseSegmentFileName(name); ok {
			nums = append(nums, n)
		}
		if n, ok := parseDictFileName(name); ok {
			// Register the dictionary so that its pages decode; a bad
			// one is a finding, and its pages will fail to decode.
			if _, err := readDictFile(fs, filepath.Join(dir, dictFileName(n))); errors.Is(err, ErrCorrupt) {
				in.note(filepath.Join(dir, name), -1, err.Error(), false)
			} else if err != nil {
				return nil, err
			}
		} else if strings.HasPrefix(name, dictFilePrefix) && strings.HasSuffix(name, dictTmpSuffix) {
			in.note(filepath.Join(dir, name), -1, "a dictionary being written when the store stopped; Open deletes it", true)
		}
		switch name {
		case checkpointTmpName:
			in.note(filepath.Join(dir, name), -1, "a checkpoint being written when the store stopped; Open deletes it", true)
		case mapLogName:
			hasMapLog = true
		}
	}
	slices.Sort(nums)
	ckpt, err := readCheckpoint(fs, dir)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		in.note(filepath.Join(dir, checkpointName), -1, err.Error(), false)
		return in, nil
	}
	if ckpt == nil {
		return nil, fmt.Errorf("pagestore: %s: no %s: not a store", dir, checkpointName)
	}
	in.PageSize = int(ckpt.pageSize)
	in.Version, in.Generation = ckpt.version, ckpt.generation
	in.MapUsable = true

	// The checkpoint state and map as recovery loads them.
	pm := pageMap{entries: ckpt.entries}
	state := ckpt.ckptState
	stamps := map[uint32]uint64{}
	for _, si := range ckpt.segs {
		stamps[si.num] = si.stamp
	}
	if err := in.inspectMapLog(ckpt, hasMapLog, &pm, &state, stamps); err != nil {
		in.Close()
		return nil, err
	}
	in.CleanClose = state.flags&checkpointFlagClean != 0
	ckptMap := slices.Clone(pm.entries) // pm becomes the replayed map

	referenced := map[uint32]bool{}
	byseg := map[uint32][]PageID{}
	for id, e := range ckptMap {
		if e.present() {
			referenced[e.seg] = true
			byseg[e.seg] = append(byseg[e.seg], PageID(id))
		}
	}
	plan := planReplay(nums, state, referenced)
	for _, p := range plan.problems {
		msg := p.msg
		if in.mapLogCut >= 0 {
			// A map log cut short (damage that looks like a torn
			// append) loses the deltas after the cut, and with them
			// the segments they let the cleaner delete.
			msg += fmt.Sprintf(" (the map log %s is cut at offset %d: it may have lost deltas)", mapLogName, in.mapLogCut)
		}
		in.note(segmentPath(dir, p.num), -1, msg, false)
	}
	sc := &segmentScan{in: in, state: state, stamps: stamps, ckptMap: ckptMap, byseg: byseg,
		rm: replayMap{pm: &pm, seqs: map[PageID]uint64{}}}
	if err := sc.run(nums, plan, referenced); err != nil {
		in.Close()
		return nil, err
	}
	// The replayed map's pages must lie inside their segments (as recovery
	// leaves them: torn tails cut).
	for id, e := range pm.entries {
		if !e.present() {
			continue
		}
		if size, ok := sc.sizes[e.seg]; ok && int64(e.off)+int64(e.len) > size {
			in.note(segmentPath(dir, e.seg), int64(e.off), fmt.Sprintf("page %d's record runs past the end of the segment (%d bytes)", id, size), false)
		}
	}
	in.pmap = pm.entries
	return in, nil
}

func (in *Inspection) note(file string, off int64, msg string, repairable bool) {
	in.Findings = append(in.Findings, Finding{File: file, Offset: off, Msg: msg, Repairable: repairable})
}

// inspectMapLog applies the map log's deltas to the map, the state and the
// stamps, as recovery does, and verifies what follows them.
func (in *Inspection) inspectMapLog(ckpt *checkpoint, exists bool, pm *pageMap, state *ckptState, stamps map[uint32]uint64) error {
	path := filepath.Join(in.Dir, mapLogName)
	if !exists {
		// Open creates an empty one. A store of version 2 always has
		// one: create writes it before the checkpoint, and an upgrade
		// from version 1 before its first (full) checkpoint.
		if ckpt.version == checkpointVersion {
			in.note(path, -1, "missing: a store of format version 2 always has one; the deltas it held are lost", false)
		}
		return nil
	}
	f, err := in.fs.OpenFile(path, os.O_RDONLY, 0, vfs.OpenOptions{})
	if errors.Is(err, os.ErrNotExist) {
		in.note(path, -1, "removed while being read: the store is in use", true)
		return nil
	}
	if err != nil {
		return fmt.Errorf("pagestore: open %s: %w", path, err)
	}
	defer f.Close()
	deltas, valid, rerr := readMapLog(f, ckpt.generation, ckpt.pageSize)
	if rerr != nil && !errors.Is(rerr, ErrCorrupt) {
		return fmt.Errorf("pagestore: read %s: %w", path, rerr)
	}
	if rerr != nil {
		in.note(path, -1, rerr.Error(), false)
	}
	if err := applyDeltas(pm, state, stamps, deltas, ckpt.version != checkpointVersion); err != nil {
		in.note(path, -1, err.Error(), false)
	}
	in.Deltas = len(deltas)
	if rerr != nil {
		return nil
	}
	size, err := f.Size()
	if err != nil {
		return fmt.Errorf("pagestore: size of %s: %w", path, err)
	}
	// What follows the last valid record. (Its padding is not checked:
	// recovery never reads it, and a crash during the record's append can
	// leave there what the torn write left, even when the record is whole
	// and valid, and so applied.)
	block := make([]byte, vfs.BlockSize)
	if size < valid {
		in.mapLogCut = size // inside the last record's padding
	}
	if size <= valid {
		return nil
	}
	in.mapLogCut = valid
	d, err := readMapDeltaAt(f, valid, size, ckpt.pageSize, block)
	var re *recordError
	switch {
	case errors.As(err, &re):
		in.note(path, valid, fmt.Sprintf("%s: a record torn by a crash while it was appended; Open truncates the %d bytes from here", re.reason, size-valid), true)
	case err != nil:
		return fmt.Errorf("pagestore: read %s: %w", path, err)
	case d.generation < ckpt.generation:
		in.note(path, valid, fmt.Sprintf("map log records of generation %d, older than the checkpoint's %d: left by a crash between a full checkpoint and the emptying of the log; Open truncates the %d bytes from here", d.generation, ckpt.generation, size-valid), true)
	case d.generation > ckpt.generation:
		in.note(path, valid, fmt.Sprintf("map log record of generation %d, newer than the checkpoint's %d", d.generation, ckpt.generation), false)
	default:
		in.note(path, valid, fmt.Sprintf("map log record %d of generation %d where record %d should follow", d.number, d.generation, len(deltas)+1), false)
	}
	return nil
}

// segmentScan verifies the segments and replays them into the map.
type segmentScan struct {
	in      *Inspection
	state   ckptState
	stamps  map[uint32]uint64
	ckptMap []location          // the checkpoint's map, before replay
	byseg   map[uint32][]PageID // ids of ckptMap by segment
	rm      replayMap           // the map being replayed

	newest     [numStreams]uint32 // newest replayed segment of each stream
	prevSeq    [numStreams]uint64 // the stream's last sequence number seen plus one (0: none yet)
	replayNext [numStreams]uint64 // as recovery's: above the stream's last replayed record
	sizes      map[uint32]int64   // segment sizes as recovery leaves them
}

// segFile is one segment file to scan.
type segFile struct {
	info  SegmentInfo
	f     vfs.File
	ok    bool // header valid
	empty bool // created but never synced
}

func (sc *segmentScan) run(nums []uint32, plan replayPlan, referenced map[uint32]bool) error {
	in := sc.in
	obsolete := map[uint32]bool{}
	for _, n := range plan.obsolete {
		obsolete[n] = true
	}
	replayed := map[uint32]bool{}
	for _, n := range plan.replay {
		replayed[n] = true
	}
	// First the headers: which segments are empty and which is each
	// stream's newest decide how the others are judged.
	var files []*segFile
	for _, n := range nums {
		path := segmentPath(in.Dir, n)
		s := &segFile{info: SegmentInfo{Num: n, Path: path, Stream: -1, Replayed: replayed[n], Obsolete: obsolete[n]}}
		files = append(files, s)
		if s.info.Obsolete {
			in.note(path, -1, "obsolete (no live page, not replayed): Open deletes it", true)
			continue
		}
		f, err := in.fs.OpenFile(path, os.O_RDONLY, 0, vfs.OpenOptions{})
		if errors.Is(err, os.ErrNotExist) {
			// Only a store in use changes under us (advise may read one).
			in.note(path, -1, "removed while being read: the store is in use", true)
			continue
		}
		if err != nil {
			return fmt.Errorf("pagestore: open %s: %w", path, err)
		}
		in.files[n] = f
		s.f = f
		if s.info.Size, err = f.Size(); err != nil {
			return fmt.Errorf("pagestore: size of %s: %w", path, err)
		}
		// The header and the first record are all the header checks read.
		head, err := readRange(f, 0, min(s.info.Size, segmentHeaderSize+recordHeaderSize+int64(in.PageSize)))
		if err != nil {
			return fmt.Errorf("pagestore: read %s: %w", path, err)
		}
		var stream int
		var herr error
		if s.info.Replayed {
			stream, s.empty, herr = checkReplayedHeader(head, in.PageSize, n, sc.state.mustHold(n, referenced))
		} else {
			stream, herr = checkSegmentHeader(head, in.PageSize, n)
		}
		switch {
		case herr != nil:
			in.note(path, 0, herr.Error(), false)
		case s.empty:
		default:
			s.ok = true
			s.info.Stream = stream
			if s.info.Replayed {
				sc.newest[stream] = n
			}
			if !allZero(head[28:32]) {
				in.note(path, 28, "reserved header bytes are not zero", false)
			}
		}
	}
	// Replayed segments created but never synced: recovery removes those
	// at the end and rewrites the others as empty segments.
	trailing := true
	for i := len(files) - 1; i >= 0; i-- {
		s := files[i]
		if !s.info.Replayed {
			continue
		}
		switch {
		case s.empty && trailing:
			in.note(s.info.Path, 0, "invalid header, nothing valid after it: a segment whose creation a crash interrupted; Open removes it", true)
		case s.empty:
			in.note(s.info.Path, 0, "invalid header, nothing valid after it: a segment whose creation a crash interrupted; Open rewrites it as an empty segment", true)
		default:
			trailing = false
		}
	}
	sc.sizes = map[uint32]int64{}
	for _, s := range files {
		if s.ok {
			data, err := readRange(s.f, 0, s.info.Size)
			if err != nil {
				return fmt.Errorf("pagestore: read %s: %w", s.info.Path, err)
			}
			sc.scan(&s.info, data)
		}
		in.Segments = append(in.Segments, s.info)
	}
	return nil
}

// scan verifies one segment's records and padding, and replays the part
// that recovery replays.
func (sc *segmentScan) scan(info *SegmentInfo, data []byte) {
	in, state := sc.in, sc.state
	n, path, st := info.Num, info.Path, info.Stream
	ps := in.PageSize
	size := int64(len(data))
	sc.sizes[n] = size
	starts := map[int64]recordHeader{}
	stamp := sc.stamps[n]
	stampSeen := stamp == 0
	seen := func(off int64, h recordHeader) {
		starts[off] = h
		if info.Records+info.Frees == 0 {
			info.FirstSeq = h.seq
		}
		info.EndSeq = h.seq + 1
		if h.kind == kindPage {
			info.Records++
		} else {
			info.Frees++
		}
		stampSeen = stampSeen || h.seq == stamp
		sc.prevSeq[st] = h.seq + 1
	}

	// The part before the replay position (all of a segment recovery does
	// not replay): synced whole before the checkpoint was written, and
	// reflected in its map.
	from := int64(-1)
	limit := size
	belowNext := true // records here must be older than the checkpoint
	if info.Replayed {
		f, err := replayFrom(state, n, st, size)
		if err != nil {
			in.note(path, -1, "segment "+err.Error(), false)
			belowNext = false
		} else {
			from = f
			limit = max(f, segmentHeaderSize)
		}
	}
	clean := true // no corruption found before the replay position
	// (Bytes in memory never fail to read: no error to look at.)
	stop, why, _ := walkRecords(memBytes(data[:limit]), segmentHeaderSize, ps, func(off int64, h recordHeader) error {
		if h.seq < sc.prevSeq[st] {
			return fmt.Errorf("sequence number %d not above %d of the stream's previous record", h.seq, sc.prevSeq[st]-1)
		}
		if belowNext && h.seq >= state.nextSeq {
			return fmt.Errorf("sequence number %d before the replay position is not below the checkpoint's next %d", h.seq, state.nextSeq)
		}
		seen(off, h)
		return nil
	})
	switch {
	case why != "" && from >= 0 && limit < size:
		if _, _, err := decodeRecord(data[stop:], ps); err == nil {
			why = fmt.Sprintf("the record here runs past the replay position %d", from)
		}
		fallthrough
	case why != "":
		in.note(path, stop, why, false)
		clean = false
	case stop < limit && from >= 0:
		in.note(path, stop, fmt.Sprintf("the data ends here, before the checkpoint's replay position %d", from), false)
		clean = false
	}
	// stop < limit otherwise: the end of a segment that recovery cut
	// inside its padding or followed by zeros; nothing is missing that
	// the map or the stamps need (checked below).

	if from >= 0 {
		sc.replay(info, data, from, seen)
	}
	if clean && !stampSeen {
		in.note(path, -1, fmt.Sprintf("the checkpoint says the segment's newest record has sequence number %d, but no record has it: records are missing", stamp), false)
	}
	// The checkpoint's entries must name records of their page, before
	// the replay position.
	for _, id := range sc.byseg[n] {
		e := sc.ckptMap[id]
		h, ok := starts[int64(e.off)]
		switch {
		case from >= 0 && int64(e.off) >= from:
			in.note(path, int64(e.off), fmt.Sprintf("the checkpoint maps page %d here, at or after the segment's replay position %d", id, from), false)
		case !ok && int64(e.off) >= size:
			in.note(path, int64(e.off), fmt.Sprintf("page %d's record is beyond the end of the file", id), false)
		case !ok:
			// The walk of the segment's records did not reach it (damage
			// before it, reported above): the record may still be whole,
			// and then nothing is wrong with it (every later page of a
			// segment with one bad record was reported).
			why := "no valid record starts there"
			if int64(e.off)+int64(e.len) <= size {
				h, _, err := decodeRecord(data[e.off:int64(e.off)+int64(e.len)], ps)
				switch {
				case err != nil:
					why = err.Error()
				case h.pageID == id && h.kind == kindPage && uint32(h.size()) == e.len:
					why = ""
				default:
					why = fmt.Sprintf("the record there is page %d (kind %d, %d bytes, the map says %d)", h.pageID, h.kind, h.size(), e.len)
				}
			}
			if why != "" {
				in.note(path, int64(e.off), fmt.Sprintf("page %d's record: %s", id, why), false)
			}
		case h.pageID != id || h.kind != kindPage || uint32(h.size()) != e.len:
			in.note(path, int64(e.off), fmt.Sprintf("the checkpoint maps page %d here, but the record is page %d (kind %d, %d bytes, the map says %d)", id, h.pageID, h.kind, h.size(), e.len), false)
		}
	}
}

// replay replays the segment from from on as recovery does, and judges
// where that stops.
func (sc *segmentScan) replay(info *SegmentInfo, data []byte, from int64, seen func(int64, recordHeader)) {
	in, state := sc.in, sc.state
	n, path, st := info.Num, info.Path, info.Stream
	size := int64(len(data))
	first := int64(-1)
	end, next, torn, _ := replayRecords(memBytes(data), from, in.PageSize, max(state.nextSeq, sc.replayNext[st]), func(off int64, h recordHeader) {
		sc.rm.apply(n, off, h)
		seen(off, h)
		if first < 0 {
			first = off
		}
	})
	if next > 0 {
		sc.replayNext[st] = next
	}
	// A clean close checkpoints last: nothing but padding follows the
	// replay position in the heads it names.
	afterClean := in.CleanClose && n < state.nextSegNum
	if afterClean && first >= 0 {
		in.note(path, first, "a record after the replay position of a clean close's checkpoint", false)
	}
	switch {
	case torn != "" && n != sc.newest[st]:
		in.note(path, end, torn+" (not the stream's newest segment, which recovery alone may cut: this one was synced whole)", false)
	case torn != "" && afterClean:
		in.note(path, end, torn+" (after a clean close nothing follows the checkpoint)", false)
	case torn != "":
		in.note(path, end, fmt.Sprintf("%s: a torn write at the end of the stream's log; Open cuts the %d bytes from here (zeroing them to the end of their block, if the segment is written with direct I/O)", torn, size-end), true)
		sc.sizes[n] = end
	case afterClean && end < size && end%vfs.BlockSize != 0:
		in.note(path, end, "the file ends inside padding (a clean close syncs its padding)", false)
	}
}

// readRange reads bytes [from, to) of f (fewer at its end).
func readRange(f vfs.File, from, to int64) ([]byte, error) {
	if to <= from {
		return nil, nil
	}
	b := make([]byte, to-from)
	n, err := f.ReadAt(b, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:n], nil
}

// Pages returns the ids of the pages in the rebuilt map, in order.
func (in *Inspection) Pages() []PageID {
	var ids []PageID
	for id, e := range in.pmap {
		if e.present() {
			ids = append(ids, PageID(id))
		}
	}
	return ids
}

// Has reports whether page id is in the rebuilt map.
func (in *Inspection) Has(id PageID) bool {
	return uint64(id) < uint64(len(in.pmap)) && in.pmap[id].present()
}

// Where names the file and offset of page id's record.
func (in *Inspection) Where(id PageID) (string, int64) {
	if !in.Has(id) {
		return "", -1
	}
	e := in.pmap[id]
	return segmentPath(in.Dir, e.seg), int64(e.off)
}

// Record returns the file, offset and length of page id's record.
func (in *Inspection) Record(id PageID) (file string, off int64, n int) {
	if !in.Has(id) {
		return "", -1, 0
	}
	e := in.pmap[id]
	return segmentPath(in.Dir, e.seg), int64(e.off), int(e.len)
}

// ReadImage reads page id's stored image: its codec and the compressed
// bytes (appended to dst[:0]). Errors name the file and offset; bad bytes
// wrap ErrCorrupt.
func (in *Inspection) ReadImage(id PageID, dst []byte) (codec.ID, []byte, error) {
	if !in.Has(id) {
		return 0, nil, fmt.Errorf("pagestore: page %d: %w", id, ErrNotFound)
	}
	e := in.pmap[id]
	path := segmentPath(in.Dir, e.seg)
	f := in.files[e.seg]
	if f == nil {
		return 0, nil, fmt.Errorf("pagestore: page %d: %s: %w: segment missing", id, path, ErrCorrupt)
	}
	rec := make([]byte, e.len)
	if n, err := f.ReadAt(rec, int64(e.off)); n < len(rec) {
		if err == nil || errors.Is(err, io.EOF) {
			return 0, nil, fmt.Errorf("pagestore: page %d: %s offset %d: %w: record beyond the end of the file", id, path, e.off, ErrCorrupt)
		}
		return 0, nil, fmt.Errorf("pagestore: page %d: read %s: %w", id, path, err)
	}
	h, payload, err := decodeRecord(rec, in.PageSize)
	if err != nil {
		return 0, nil, fmt.Errorf("pagestore: page %d: %s offset %d: %w: %v", id, path, e.off, ErrCorrupt, err)
	}
	if h.pageID != id || h.kind != kindPage {
		return 0, nil, fmt.Errorf("pagestore: page %d: %s offset %d: %w: record of page %d, kind %d", id, path, e.off, ErrCorrupt, h.pageID, h.kind)
	}
	return h.codec, append(dst[:0], payload...), nil
}

// ReadPage reads and decompresses page id into dst (PageSize bytes).
func (in *Inspection) ReadPage(id PageID, dst []byte) error {
	c, img, err := in.ReadImage(id, nil)
	if err != nil {
		return err
	}
	if err := codec.Decompress(c, dst, img); err != nil {
		file, off := in.Where(id)
		return fmt.Errorf("pagestore: page %d: %s offset %d: %w: %w", id, file, off, ErrCorrupt, err)
	}
	return nil
}

// SegmentFiles opens the inspected segments for reading: advise times
// random reads on them. The files stay owned by the Inspection.
func (in *Inspection) SegmentFiles() []vfs.File {
	var out []vfs.File
	for _, s := range in.Segments {
		if f := in.files[s.Num]; f != nil {
			out = append(out, f)
		}
	}
	return out
}

// Close closes the files the inspection opened.
func (in *Inspection) Close() error {
	var first error
	for _, f := range in.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	in.files = nil
	return first
}

package pagestore

// Inspection: a read-only view of a store's files, for `strata check` and
// `strata advise`. It never writes, truncates, removes or locks anything:
// it verifies what recovery (recover.go) would verify, and more (every
// record of every segment, not only those after the replay position; the
// checkpoint's map entries against the records they name; sequence numbers
// across segments), and rebuilds the page map that Open would build.
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

// SegmentInfo summarises one segment file.
type SegmentInfo struct {
	Num              uint32
	Path             string
	Size             int64
	Records, Frees   int
	Obsolete         bool // below the replay position and unreferenced: Open deletes it
	FirstSeq, EndSeq uint64
}

// Inspection is the result of Inspect.
type Inspection struct {
	Dir      string
	PageSize int
	// CleanClose: the checkpoint was written by a clean Close.
	CleanClose bool
	Segments   []SegmentInfo
	Findings   []Finding
	// MapUsable: the checkpoint was read, so the page map below is the one
	// Open would rebuild (less whatever the findings say is damaged).
	MapUsable bool

	fs    vfs.FS
	pmap  []location
	files map[uint32]vfs.File
}

// Inspect verifies the store in dir read-only. The error is for failures to
// read (I/O) or a directory that is no store; damage goes to Findings.
func Inspect(fs vfs.FS, dir string) (*Inspection, error) {
	in := &Inspection{Dir: dir, fs: fs, files: map[uint32]vfs.File{}}
	names, err := fs.List(dir)
	if err != nil {
		return nil, fmt.Errorf("pagestore: list %s: %w", dir, err)
	}
	var nums []uint32
	for _, name := range names {
		if n, ok := parseSegmentFileName(name); ok {
			nums = append(nums, n)
		}
		if name == checkpointTmpName {
			in.note(filepath.Join(dir, name), -1, "a checkpoint being written when the store stopped; Open deletes it", true)
		}
	}
	slices.Sort(nums)
	ckptPath := filepath.Join(dir, checkpointName)
	ckpt, err := readCheckpoint(fs, dir)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		in.note(ckptPath, -1, err.Error(), false)
		return in, nil
	}
	if ckpt == nil {
		return nil, fmt.Errorf("pagestore: %s: no %s: not a store", dir, checkpointName)
	}
	in.PageSize = int(ckpt.pageSize)
	in.CleanClose = ckpt.flags&checkpointFlagClean != 0
	in.MapUsable = true
	in.pmap = slices.Clone(ckpt.entries)

	// Which segments recovery needs, as recover() decides.
	referenced := map[uint32]bool{}
	byseg := map[uint32][]PageID{}
	for id, e := range ckpt.entries {
		if e.present() {
			referenced[e.seg] = true
			byseg[e.seg] = append(byseg[e.seg], PageID(id))
		}
	}
	onDisk := map[uint32]bool{}
	var replay []uint32
	for _, n := range nums {
		onDisk[n] = true
		if n >= ckpt.replaySeg {
			replay = append(replay, n)
		}
	}
	for n := range referenced {
		if !onDisk[n] {
			in.note(segmentPath(dir, n), -1, "missing: the checkpoint's page map points into it", false)
		}
	}
	if (len(replay) == 0 || replay[0] != ckpt.replaySeg) && ckpt.replaySeg < ckpt.nextSegNum {
		in.note(segmentPath(dir, ckpt.replaySeg), -1, "missing: the checkpoint replays the log from it", false)
	}
	for i, n := range replay {
		if n != ckpt.replaySeg+uint32(i) {
			in.note(segmentPath(dir, ckpt.replaySeg+uint32(i)), -1, "missing: a gap in the segments after the replay position", false)
			break
		}
		if n >= ckpt.nextSegNum+1<<20 {
			in.note(segmentPath(dir, n), -1, fmt.Sprintf("far beyond the checkpoint's next segment %d", ckpt.nextSegNum), false)
		}
	}

	// Scan every segment in log order.
	var prev *SegmentInfo
	var lastSeq uint64
	newest := uint32(0)
	if len(nums) > 0 {
		newest = nums[len(nums)-1]
	}
	for _, n := range nums {
		path := segmentPath(dir, n)
		info := SegmentInfo{Num: n, Path: path, Obsolete: n < ckpt.replaySeg && !referenced[n]}
		if info.Obsolete {
			in.note(path, -1, "obsolete (below the replay position, no live page): Open deletes it", true)
			in.Segments = append(in.Segments, info)
			continue
		}
		data, err := readWhole(fs, path)
		if errors.Is(err, os.ErrNotExist) {
			// Only a store in use changes under us (advise may read one).
			in.note(path, -1, "removed while being read: the store is in use", true)
			continue
		}
		if err != nil {
			return nil, err
		}
		info.Size = int64(len(data))
		f, err := fs.OpenFile(path, os.O_RDONLY, 0, vfs.OpenOptions{})
		if errors.Is(err, os.ErrNotExist) {
			in.note(path, -1, "removed while being read: the store is in use", true)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("pagestore: open %s: %w", path, err)
		}
		in.files[n] = f
		from := int64(-1) // replay position in this segment, if any
		switch {
		case n == ckpt.replaySeg:
			from = int64(ckpt.replayOff)
			if int64(len(data)) < from {
				in.note(path, int64(len(data)), fmt.Sprintf("segment is %d bytes, the checkpoint replays it from %d (truncated)", len(data), from), false)
			}
		case n > ckpt.replaySeg:
			from = segmentHeaderSize
		}
		last := n == newest
		needed := referenced[n] || n < ckpt.nextSegNum
		in.scanSegment(&info, data, ckpt, from, last, needed, byseg[n])
		// Sequence numbers run on without a gap from one segment to the
		// next one written (numbers n and n+1); a deleted segment between
		// leaves a gap in the numbers, not in one file pair.
		if prev != nil && info.Records+info.Frees > 0 && prev.Records+prev.Frees > 0 {
			if prev.Num+1 == n && info.FirstSeq != prev.EndSeq {
				in.note(path, segmentHeaderSize, fmt.Sprintf("first sequence number %d, but segment %d ends at %d: records are missing at the end of %s", info.FirstSeq, prev.Num, prev.EndSeq-1, prev.Path), false)
			} else if info.FirstSeq < lastSeq {
				in.note(path, segmentHeaderSize, fmt.Sprintf("sequence number %d not above %d of an earlier segment", info.FirstSeq, lastSeq-1), false)
			}
		}
		if info.Records+info.Frees > 0 {
			prev, lastSeq = &info, info.EndSeq
		}
		in.Segments = append(in.Segments, info)
	}
	// Live pages must lie inside their segments.
	for id, e := range in.pmap {
		if !e.present() {
			continue
		}
		if f, ok := in.files[e.seg]; ok {
			if size, err := f.Size(); err == nil && int64(e.off)+int64(e.len) > size {
				in.note(segmentPath(dir, e.seg), int64(e.off), fmt.Sprintf("page %d's record runs past the end of the file (%d bytes)", id, size), false)
			}
		}
	}
	return in, nil
}

func (in *Inspection) note(file string, off int64, msg string, repairable bool) {
	in.Findings = append(in.Findings, Finding{File: file, Offset: off, Msg: msg, Repairable: repairable})
}

// scanSegment verifies one segment's bytes: header, every record, padding.
// Records from offset from on (from ≥ 0) are replayed into the page map as
// recovery does. pages are the checkpoint entries that point into it.
func (in *Inspection) scanSegment(info *SegmentInfo, data []byte, ckpt *checkpoint, from int64, last, needed bool, pages []PageID) {
	path := info.Path
	ps := int(ckpt.pageSize)
	if err := checkSegmentHeader(data, ps, info.Num); err != nil {
		if last && !needed {
			if len(data) > segmentHeaderSize {
				if _, _, rerr := decodeRecord(data[segmentHeaderSize:], ps); rerr == nil {
					in.note(path, 0, err.Error()+" (but records follow)", false)
					return
				}
			}
			in.note(path, 0, err.Error()+": a segment whose creation was interrupted; Open removes it", true)
			return
		}
		in.note(path, 0, err.Error(), false)
		return
	}
	if r := data[28:32]; r[0]|r[1]|r[2]|r[3] != 0 {
		in.note(path, 28, "reserved header bytes are not zero", false)
	}
	starts := map[int64]recordHeader{}
	off := int64(segmentHeaderSize)
	end := int64(len(data))
	for off < end {
		if data[off] == 0 {
			next := (off + vfs.BlockSize) &^ (vfs.BlockSize - 1)
			if off&(vfs.BlockSize-1) == 0 || !allZero(data[off:min(next, end)]) {
				if !allZero(data[off:end]) {
					in.badTail(info, off, "nonzero bytes after padding", from, last)
				}
				break
			}
			if next > end {
				// Padding runs to a block boundary; a file that ends
				// inside it was cut (recovery cuts only where the
				// padding starts).
				in.badTail(info, end, "the file ends inside padding (truncated)", from, last)
				break
			}
			off = next
			continue
		}
		h, _, err := decodeRecord(data[off:], ps)
		if err == nil && info.Records+info.Frees > 0 && h.seq != info.EndSeq {
			err = fmt.Errorf("sequence number %d, expected %d", h.seq, info.EndSeq)
		}
		if err == nil && from >= 0 && off >= from && h.seq < ckpt.nextSeq {
			err = fmt.Errorf("sequence number %d after the replay position is below the checkpoint's next %d", h.seq, ckpt.nextSeq)
		}
		if err == nil && (from < 0 || off < from) && h.seq >= ckpt.nextSeq {
			err = fmt.Errorf("sequence number %d before the replay position is not below the checkpoint's next %d", h.seq, ckpt.nextSeq)
		}
		if err != nil {
			in.badTail(info, off, err.Error(), from, last)
			break
		}
		if info.Records+info.Frees == 0 {
			info.FirstSeq = h.seq
		}
		info.EndSeq = h.seq + 1
		if h.kind == kindPage {
			info.Records++
		} else {
			info.Frees++
		}
		starts[off] = h
		if from >= 0 && off >= from {
			loc := location{seg: info.Num, off: uint32(off), len: uint32(h.size())}
			if h.kind == kindPage {
				setLoc(&in.pmap, h.pageID, loc)
			} else if uint64(h.pageID) < uint64(len(in.pmap)) {
				in.pmap[h.pageID] = location{}
			}
		}
		off += int64(h.size())
	}
	// The checkpoint's entries must name records of their page.
	for _, id := range pages {
		e := checkpointEntry(ckpt, id)
		h, ok := starts[int64(e.off)]
		switch {
		case !ok && int64(e.off) >= end:
			in.note(path, int64(e.off), fmt.Sprintf("page %d's record is beyond the end of the file", id), false)
		case !ok:
			why := "no valid record starts there"
			if int64(e.off)+int64(e.len) <= end {
				if _, _, err := decodeRecord(data[e.off:int64(e.off)+int64(e.len)], ps); err != nil {
					why = err.Error()
				}
			}
			in.note(path, int64(e.off), fmt.Sprintf("page %d's record: %s", id, why), false)
		case h.pageID != id || h.kind != kindPage || uint32(h.size()) != e.len:
			in.note(path, int64(e.off), fmt.Sprintf("the checkpoint maps page %d here, but the record is page %d (kind %d, %d bytes, the map says %d)", id, h.pageID, h.kind, h.size(), e.len), false)
		}
	}
}

// badTail reports an invalid record or padding at off: the torn tail of
// the log if it is in the newest segment after the replay position (and
// the store did not close cleanly), corruption anywhere else.
func (in *Inspection) badTail(info *SegmentInfo, off int64, why string, from int64, last bool) {
	if last && from >= 0 && off >= from && !in.CleanClose {
		in.note(info.Path, off, why+fmt.Sprintf(": a torn write at the end of the log; Open truncates the %d bytes from here", info.Size-off), true)
		return
	}
	if last && from >= 0 && off >= from {
		why += " (after a clean close nothing follows the checkpoint)"
	}
	in.note(info.Path, off, why, false)
}

func checkpointEntry(c *checkpoint, id PageID) location {
	if uint64(id) < uint64(len(c.entries)) {
		return c.entries[id]
	}
	return location{}
}

func setLoc(m *[]location, id PageID, loc location) {
	if uint64(id) >= uint64(len(*m)) {
		*m = append(*m, make([]location, uint64(id)+1-uint64(len(*m)))...)
	}
	(*m)[id] = loc
}

// readWhole reads a file into memory (buffered I/O; its size need not be
// aligned).
func readWhole(fs vfs.FS, path string) ([]byte, error) {
	f, err := fs.OpenFile(path, os.O_RDONLY, 0, vfs.OpenOptions{})
	if err != nil {
		return nil, fmt.Errorf("pagestore: open %s: %w", path, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, fmt.Errorf("pagestore: size of %s: %w", path, err)
	}
	b := make([]byte, size)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("pagestore: read %s: %w", path, err)
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

package pagestore

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/vfs"
)

// What Inspect reports about the segments of both streams: every record,
// the padding, the stamps, the heads after a clean close, segments whose
// creation a crash interrupted, and version-1 segments.

const streamPages = 240

// streamStore builds a cleanly closed store with sealed and head segments
// in both streams (the cleaner relocates into the cold one) and a map log of
// deltas. It returns the expected content.
func streamStore(t *testing.T, fs vfs.FS) model {
	t.Helper()
	opts := testOptions(fs, mustCodec(t, "lz4"))
	opts.MapLogRatio = 100
	opts.CleanerThreshold = 0.1
	s, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	m := model{}
	for round := 0; round < 6; round++ {
		for id := PageID(0); id < streamPages; id++ {
			if round == 0 || int(id)%(round+1) == 0 {
				ver := 2 + 5*round + int(id)%3 // compressible versions
				if _, _, err := s.WritePage(id, pageContent(id, ver, testPageSize)); err != nil {
					t.Fatal(err)
				}
				m[id] = ver
			}
		}
		if _, err := s.Clean(); err != nil {
			t.Fatal(err)
		}
		if err := s.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return m
}

// segmentsOf returns the names of the segments of a stream holding
// records.
func segmentsOf(in *Inspection, stream int) []string {
	var out []string
	for _, s := range in.Segments {
		if s.Stream == stream && s.Records > 0 {
			out = append(out, filepath.Base(s.Path))
		}
	}
	return out
}

func TestInspectStreamStore(t *testing.T) {
	fs := vfs.NewMem()
	m := streamStore(t, fs)
	in := mustInspect(t, fs)
	if len(in.Findings) != 0 || !in.CleanClose || in.Deltas < 2 {
		t.Fatalf("findings %v, clean %v, deltas %d", in.Findings, in.CleanClose, in.Deltas)
	}
	if hot, cold := segmentsOf(in, StreamHot), segmentsOf(in, StreamCold); len(hot) < 2 || len(cold) < 2 {
		t.Fatalf("hot segments %v, cold %v: want sealed segments and heads in both streams", hot, cold)
	}
	s := checkAgainstOpen(t, fs, testOptions(fs, nil), "stream store")
	defer s.Close()
	checkModel(t, s, m, streamPages)
}

// TestInspectFindsStreamCorruption flips bytes in, and truncates, the
// segments of both streams of a cleanly closed store. Every flip is
// corruption naming the segment (a record's checksum, padding, a header, or
// bytes after a clean close's replay position), including the many no read
// notices; so is every truncation that removes a nonzero byte. A truncation
// that removes only zeros (the end of a segment's padding) loses nothing
// and is what a crash during a write of that padding leaves, which Open
// keeps as it is: not reported.
func TestInspectFindsStreamCorruption(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	trials := 200
	if raceEnabled {
		trials = 40
	}
	base := vfs.NewMem()
	streamStore(t, base)
	in := mustInspect(t, base)
	segs := append(segmentsOf(in, StreamHot), segmentsOf(in, StreamCold)...)
	planted := map[string]int{}
	for trial := 0; trial < trials; trial++ {
		fs := base.CrashClone(vfs.CrashDropUnsynced, nil)
		name := filepath.Join("db", segs[rng.IntN(len(segs))])
		size := fileSize(t, fs, name)
		what, lostOnlyZeros := "", false
		if trial%4 == 3 {
			cut := rng.Int64N(size)
			f, _ := fs.OpenFile(name, os.O_RDWR, 0, vfs.OpenOptions{})
			rest, _ := readRange(f, cut, size)
			lostOnlyZeros = allZero(rest)
			f.Truncate(cut)
			f.Close()
			what = "truncated to " + itoa(cut)
		} else {
			off := rng.Int64N(size)
			flipByte(t, fs, name, off, byte(1+rng.IntN(255)))
			what = "flip at " + itoa(off)
		}
		planted[filepath.Base(name)]++
		in := mustInspect(t, fs)
		bad := corruptFindings(in)
		if lostOnlyZeros && len(bad) == 0 {
			// A sealed segment's padding (a head's is corruption:
			// a clean close synced it).
			if len(in.Findings) != 0 {
				t.Fatalf("trial %d: %s %s (only zeros): findings %v", trial, name, what, in.Findings)
			}
			continue
		}
		if len(bad) == 0 {
			t.Fatalf("trial %d: %s %s: no corruption reported (findings %v)", trial, name, what, in.Findings)
		}
		if !strings.Contains(bad[0].File, filepath.Base(name)) {
			t.Fatalf("trial %d: %s %s: finding names another file: %v", trial, name, what, bad[0])
		}
	}
	if len(planted) < 4 {
		t.Fatalf("damage planted in %v only", planted)
	}
}

// TestInspectStampFindsCutRecords: a sealed segment cut at a record
// boundary, losing records no page lives in any more, reads back and opens
// without error; only the segment's stamp in the checkpoint shows that
// records are missing.
func TestInspectStampFindsCutRecords(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs, mustCodec(t, "lz4"))
	opts.MapLogRatio = 100
	s, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	// Fill segment 1 until it is sealed, then overwrite its last pages.
	var ids []PageID
	for id := PageID(0); s.streams[streamHot].head.num == 1; id++ {
		if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	last := ids[len(ids)-2] // the last record of segment 1; ids[len-1] went to segment 2
	cut := s.pmap.get(last - 2).off
	for _, id := range ids[len(ids)-4:] {
		if _, _, err := s.WritePage(id, pageContent(id, 3, testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if in := mustInspect(t, fs); len(in.Findings) != 0 {
		t.Fatalf("before the cut: %v", in.Findings)
	}
	f, _ := fs.OpenFile(filepath.Join("db", segmentFileName(1)), os.O_RDWR, 0, vfs.OpenOptions{})
	f.Truncate(int64(cut))
	f.Close()
	in := mustInspect(t, fs)
	if bad := corruptFindings(in); len(bad) != 1 || !strings.Contains(bad[0].Msg, "records are missing") || filepath.Base(bad[0].File) != segmentFileName(1) {
		t.Fatalf("findings %v", in.Findings)
	}
	s, err = Open("db", testOptions(fs, nil))
	if err != nil {
		t.Fatalf("Open: %v (the test expects Open not to notice)", err)
	}
	s.Close()
}

// TestInspectCleanCloseHeads: after a clean close nothing but padding
// follows the replay positions in their segments, so a valid record there
// (which Open would replay) is corruption. After a reopen, the segments
// written since are a log like any other: a crash's torn tail there is
// repairable although the last checkpoint is still the clean close's.
func TestInspectCleanCloseHeads(t *testing.T) {
	fs := vfs.NewMem()
	buildStore(t, fs, 10)
	ck, err := readCheckpoint(fs, "db")
	if err != nil || ck.flags&checkpointFlagClean == 0 {
		t.Fatalf("checkpoint: %v, flags %d", err, ck.flags)
	}
	hot := ck.replay[streamHot]
	page := pageContent(3, 7, testPageSize)
	rec := make([]byte, recordHeaderSize+len(page))
	copy(rec[recordHeaderSize:], page)
	encodeRecordHeader(rec, &recordHeader{pageID: 3, seq: ck.nextSeq, rawLen: testPageSize, storedLen: testPageSize, codec: codec.None, kind: kindPage}, payloadCRC(page))
	img := fs.CrashClone(vfs.CrashDropUnsynced, nil)
	f, _ := img.OpenFile(filepath.Join("db", segmentFileName(hot.seg)), os.O_RDWR, 0, vfs.OpenOptions{})
	f.WriteAt(rec, int64(hot.off))
	f.Close()
	in := mustInspect(t, img)
	if bad := corruptFindings(in); len(bad) == 0 || !strings.Contains(bad[0].Msg, "clean close") {
		t.Fatalf("record after a clean close's position: %v", in.Findings)
	}

	opts := testOptions(fs, nil)
	s, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	for id := PageID(0); id < 40; id++ {
		s.WritePage(id, pageContent(id, 9, testPageSize))
		if id == 5 {
			s.Sync() // the new segment's name and first records are durable
		}
	}
	crashes := 0
	for seed := uint64(0); seed < 20; seed++ {
		img := fs.CrashClone(vfs.CrashTorn, rand.New(rand.NewPCG(seed, 1)))
		in := mustInspect(t, img)
		if !in.CleanClose {
			t.Fatal("the test needs the clean close's checkpoint to be the last")
		}
		if len(findingsAbout(in, segmentFileName(hot.seg+1), true)) > 0 {
			crashes++
		}
		checkAgainstOpen(t, img, opts, "crash after a reopen").Close()
	}
	s.Close()
	if crashes == 0 {
		t.Fatal("no crash image had a torn tail")
	}
}

// TestInspectEmptyTornSegments: segments created after the checkpoint whose
// header never reached the disk are repairable: Open removes the last one
// and rewrites one that others follow.
func TestInspectEmptyTornSegments(t *testing.T) {
	fs := vfs.NewMem()
	buildStore(t, fs, 10)
	ck, _ := readCheckpoint(fs, "db")
	write := func(num uint32, b []byte) {
		f, _ := fs.OpenFile(filepath.Join("db", segmentFileName(num)), os.O_CREATE|os.O_RDWR, 0o644, vfs.OpenOptions{})
		f.WriteAt(b, 0)
		f.Close()
	}
	garbage := make([]byte, vfs.BlockSize)
	copy(garbage, "STRATSEG torn")
	n := ck.nextSegNum
	write(n, garbage)
	in := mustInspect(t, fs)
	if rep := findingsAbout(in, segmentFileName(n), true); len(corruptFindings(in)) > 0 || len(rep) != 1 || !strings.Contains(rep[0].Msg, "removes") {
		t.Fatalf("torn last segment: %v", in.Findings)
	}
	// A valid empty segment after it: the torn one is rewritten.
	valid := make([]byte, vfs.BlockSize)
	encodeSegmentHeader(valid, testPageSize, n+1, streamHot)
	write(n+1, valid)
	in = mustInspect(t, fs)
	if rep := findingsAbout(in, segmentFileName(n), true); len(corruptFindings(in)) > 0 || len(rep) != 1 || !strings.Contains(rep[0].Msg, "rewrites") {
		t.Fatalf("torn segment before another: %v", in.Findings)
	}
	// Records after the torn header: corruption.
	enc := make([]byte, vfs.BlockSize)
	copy(enc, garbage[:segmentHeaderSize])
	page := pageContent(1, 1, testPageSize)
	rec := make([]byte, recordHeaderSize+len(page))
	copy(rec[recordHeaderSize:], page)
	encodeRecordHeader(rec, &recordHeader{pageID: 1, seq: ck.nextSeq, rawLen: testPageSize, storedLen: testPageSize, codec: codec.None, kind: kindPage}, payloadCRC(page))
	write(n, append(enc[:segmentHeaderSize], rec...))
	in = mustInspect(t, fs)
	if bad := corruptFindings(in); len(bad) != 1 || !strings.Contains(bad[0].Msg, "records follow") {
		t.Fatalf("records after a torn header: %v", in.Findings)
	}
	fs.Remove(filepath.Join("db", segmentFileName(n)))
	fs.Remove(filepath.Join("db", segmentFileName(n+1)))
	write(n, garbage)
	checkAgainstOpen(t, fs, testOptions(fs, nil), "torn segment").Close()
}

// TestInspectVersion1Store: TestOpenVersion1's store inspects as Open reads
// it, and a flip before its replay position is corruption.
func TestInspectVersion1Store(t *testing.T) {
	fs := vfs.NewMem()
	entries := version1Store(t, fs)
	in := mustInspect(t, fs)
	if len(in.Findings) != 0 || in.Version != 1 || len(in.Pages()) != 5 || segmentsOf(in, StreamHot)[0] != segmentFileName(1) {
		t.Fatalf("version %d, pages %v, findings %v", in.Version, in.Pages(), in.Findings)
	}
	rng := rand.New(rand.NewPCG(13, 13))
	for trial := 0; trial < 40; trial++ {
		img := vfs.NewMem()
		version1Store(t, img)
		off := rng.Int64N(int64(entries[3].off))
		flipByte(t, img, filepath.Join("db", segmentFileName(1)), off, byte(1+rng.IntN(255)))
		if bad := corruptFindings(mustInspect(t, img)); len(bad) == 0 {
			t.Fatalf("flip at %d: not found", off)
		}
	}
	checkAgainstOpen(t, fs, testOptions(fs, nil), "version 1").Close()
}

// setSeq rewrites the sequence number of the record at off of a segment,
// with a valid checksum.
func setSeq(t *testing.T, fs vfs.FS, num uint32, off int64, seq uint64) {
	t.Helper()
	f, err := fs.OpenFile(filepath.Join("db", segmentFileName(num)), os.O_RDWR, 0, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size, _ := f.Size()
	b, _ := readRange(f, off, size)
	h, payload, err := decodeRecord(b, testPageSize)
	if err != nil {
		t.Fatal(err)
	}
	h.seq = seq
	encodeRecordHeader(b, &h, payloadCRC(payload))
	f.WriteAt(b[:recordHeaderSize], off)
}

// TestInspectSequenceNumbers: records with valid checksums whose sequence
// numbers break the log's order, in sealed segments that recovery does not
// read, are corruption: one not above the previous record of its stream,
// one before the replay position but not below the checkpoint's next
// sequence number.
func TestInspectSequenceNumbers(t *testing.T) {
	build := func() (*vfs.MemFS, *Inspection) {
		fs := vfs.NewMem()
		streamStore(t, fs)
		return fs, mustInspect(t, fs)
	}
	_, in := build()
	var sealed []SegmentInfo // of the hot stream, not replayed
	var endSeq uint64        // above every record, so above the checkpoint's next sequence number
	for _, s := range in.Segments {
		endSeq = max(endSeq, s.EndSeq)
		if s.Stream == StreamHot && !s.Replayed && s.Records > 1 {
			sealed = append(sealed, s)
		}
	}
	if len(sealed) < 2 {
		t.Fatalf("sealed hot segments %v", sealed)
	}
	a, b := sealed[0], sealed[1]
	for _, c := range []struct {
		name string
		seq  uint64
		want string
	}{
		{"not above the stream's previous", b.FirstSeq, "not above"},
		{"not below the checkpoint's next", endSeq + 10, "not below the checkpoint's next"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs, _ := build()
			// a's first record (at the start of its data, after the
			// header).
			setSeq(t, fs, a.Num, segmentHeaderSize, c.seq)
			in := mustInspect(t, fs)
			bad := corruptFindings(in)
			if len(bad) == 0 || !strings.Contains(bad[0].Msg, c.want) || filepath.Base(bad[0].File) != filepath.Base(a.Path) && filepath.Base(bad[0].File) != filepath.Base(b.Path) {
				t.Fatalf("findings %v", in.Findings)
			}
			if s, err := Open("db", testOptions(fs, nil)); err != nil {
				t.Fatalf("Open: %v (the test expects Open not to notice)", err)
			} else {
				s.Close()
			}
		})
	}
}

// TestInspectHeaderAndMapPositions: damage no checksum covers and recovery
// does not look at: a segment header's reserved bytes, and a checkpoint (a
// valid file) whose map names records at or after its own replay position.
func TestInspectHeaderAndMapPositions(t *testing.T) {
	fs := vfs.NewMem()
	buildStore(t, fs, 40)
	flipByte(t, fs, filepath.Join("db", segmentFileName(1)), 29, 0x10)
	if bad := corruptFindings(mustInspect(t, fs)); len(bad) != 1 || !strings.Contains(bad[0].Msg, "reserved") {
		t.Fatalf("reserved header bytes: %v", bad)
	}

	fs = vfs.NewMem()
	buildStore(t, fs, 40)
	ck, err := readCheckpoint(fs, "db")
	if err != nil || len(ck.entries) != 40 {
		t.Fatalf("checkpoint: %v, %d entries", err, len(ck.entries))
	}
	last := ck.entries[39]
	ck.replay[streamHot] = replayPos{seg: last.seg, off: last.off}
	if _, err := writeCheckpoint(fs, "db", ck); err != nil {
		t.Fatal(err)
	}
	bad := corruptFindings(mustInspect(t, fs))
	found := false
	for _, f := range bad {
		found = found || strings.Contains(f.Msg, "at or after the segment's replay position")
	}
	if !found {
		t.Fatalf("map entry after the replay position: %v", bad)
	}
}

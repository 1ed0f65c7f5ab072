package pagestore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/vfs"
)

// mapSnapshot returns the page map's entries, trimmed of absent pages at
// the end.
func mapSnapshot(s *Store) []location {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.pmap.clone()
}

func diffMaps(got, want []location) string {
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w location
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("page %d: got %+v, want %+v (lengths %d, %d)", i, g, w, len(got), len(want))
		}
	}
	return ""
}

// TestMapModel runs random writes, frees, syncs, checkpoints, cleaning
// passes, reopens and crashes (after a sync, so nothing acknowledged as
// durable is lost) against a map of expected contents, and checks after
// every reopen that recovery rebuilt the page map exactly: every entry at
// the same segment, offset and length as before. Checkpoints alternate
// between deltas and full maps (MapLogRatio 8), or are always full.
func TestMapModel(t *testing.T) {
	seeds := uint64(3)
	if raceEnabled {
		seeds = 1
	}
	for _, ratio := range []float64{8, 1} {
		for seed := uint64(1); seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("ratio%v/seed%d", ratio, seed), func(t *testing.T) {
				testMapModel(t, seed, ratio)
			})
		}
	}
}

func testMapModel(t *testing.T, seed uint64, ratio float64) {
	rng := rand.New(rand.NewPCG(seed, 11))
	fs := vfs.NewMem()
	opts := testOptions(fs, mustCodec(t, "lz4"))
	opts.MapLogRatio = ratio
	opts.CleanerThreshold = 0.2
	s, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	// Enough pages that a delta (one 4 KiB block) is smaller than the map.
	const maxID = 400
	m := model{}
	ver := 0
	var deltas, fulls, reopens, crashes int64
	reopen := func(crash bool) {
		want := mapSnapshot(s)
		st := s.Stats()
		deltas += st.Checkpoints - st.FullCheckpoints
		fulls += st.FullCheckpoints
		if crash {
			// Everything is synced: a crash must recover exactly this map.
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			want = mapSnapshot(s)
			crashed := fs.CrashClone(vfs.CrashDropUnsynced, nil)
			s.Close()
			fs = crashed
			opts.FS = fs
			crashes++
		} else {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			reopens++
		}
		if s, err = Open("db", opts); err != nil {
			t.Fatalf("reopen (crash %v): %v", crash, err)
		}
		if d := diffMaps(mapSnapshot(s), want); d != "" {
			t.Fatalf("reopen (crash %v): recovered map differs: %s", crash, d)
		}
		checkModel(t, s, m, maxID)
	}
	for i := 0; i < 4000; i++ {
		id := PageID(rng.IntN(maxID))
		switch r := rng.IntN(1000); {
		case r < 700:
			ver++
			if _, _, err := s.WritePage(id, pageContent(id, ver, testPageSize)); err != nil {
				t.Fatal(err)
			}
			m[id] = ver
		case r < 850:
			err := s.Free(id)
			if _, ok := m[id]; ok != (err == nil) {
				t.Fatalf("free page %d (present %v): %v", id, ok, err)
			}
			delete(m, id)
		case r < 900:
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
		case r < 950:
			if err := s.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		case r < 990:
			if _, err := s.Clean(); err != nil {
				t.Fatal(err)
			}
		case r < 995:
			reopen(false)
		default:
			reopen(true)
		}
	}
	reopen(false)
	reopen(true)
	if ratio > 1 && (deltas == 0 || fulls < 2) {
		t.Errorf("%d delta and %d full checkpoints: both kinds should occur", deltas, fulls)
	}
	t.Logf("%d delta and %d full checkpoints, %d reopens, %d crashes", deltas, fulls, reopens, crashes)
}

// bigStore writes pages 0..n-1 with lz4 and checkpoints, so that the page
// map (12 bytes per page) is larger than a delta record.
func bigStore(t testing.TB, fs vfs.FS, n int, tune func(*Options)) (*Store, Options) {
	t.Helper()
	opts := testOptions(fs, mustCodec(t, "lz4"))
	opts.SegmentSize = 1 << 20
	opts.WriteBufferSize = 64 << 10
	if tune != nil {
		tune(&opts)
	}
	s, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	for id := PageID(0); id < PageID(n); id++ {
		if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	return s, opts
}

// TestCheckpointWritesDelta: a checkpoint after a few writes to a large
// store writes one block of map log, not the whole map; after enough deltas
// the next checkpoint rewrites the map and empties the log.
func TestCheckpointWritesDelta(t *testing.T) {
	const n = 4000 // map: 48 KB
	fs := vfs.NewMem()
	s, opts := bigStore(t, fs, n, nil)
	before := s.Stats()
	for id := PageID(0); id < 20; id++ {
		if _, _, err := s.WritePage(id, pageContent(id, 3, testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	after := s.Stats()
	if got := after.MapBytesWritten - before.MapBytesWritten; got != vfs.BlockSize || after.FullCheckpoints != before.FullCheckpoints {
		t.Fatalf("checkpoint of 20 changed pages wrote %d map bytes (full checkpoints %d -> %d); want one %d-byte delta",
			got, before.FullCheckpoints, after.FullCheckpoints, vfs.BlockSize)
	}
	full := fileSize(t, fs, filepath.Join("db", checkpointName))
	// Deltas until the log would outgrow the map (MapLogRatio 1), then a
	// full checkpoint.
	var k int
	for k = 0; k < 100 && s.Stats().FullCheckpoints == after.FullCheckpoints; k++ {
		if _, _, err := s.WritePage(PageID(k), pageContent(PageID(k), 4, testPageSize)); err != nil {
			t.Fatal(err)
		}
		if err := s.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	if want := int(full)/vfs.BlockSize - 1; k < want-1 || k > want+1 {
		t.Fatalf("full map of %d bytes rewritten after %d deltas of 4 KiB; want about %d", full, k, want)
	}
	if size := fileSize(t, fs, filepath.Join("db", mapLogName)); size != 0 {
		t.Fatalf("map log holds %d bytes after a full checkpoint", size)
	}
	want := mapSnapshot(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if d := diffMaps(mapSnapshot(s), want); d != "" {
		t.Fatal(d)
	}
}

const deltaPages = 800

// deltaStore builds a store whose map log holds several deltas and returns
// the expected content and the map log's record offsets.
func deltaStore(t *testing.T, fs *vfs.MemFS) (model, []int64) {
	t.Helper()
	s, _ := bigStore(t, fs, deltaPages, func(o *Options) { o.MapLogRatio = 100 })
	m := model{}
	for id := PageID(0); id < deltaPages; id++ {
		m[id] = 2
	}
	var offs []int64
	for round := 0; round < 5; round++ {
		offs = append(offs, s.mapLogBytes)
		for i := 0; i < 50; i++ {
			id := PageID(round*150 + i)
			if i%7 == 0 {
				if err := s.Free(id); err != nil {
					t.Fatal(err)
				}
				delete(m, id)
				continue
			}
			if _, _, err := s.WritePage(id, pageContent(id, 10+round, testPageSize)); err != nil {
				t.Fatal(err)
			}
			m[id] = 10 + round
		}
		if err := s.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	if s.deltas < 5 {
		t.Fatalf("%d deltas, want 5", s.deltas)
	}
	// Close without its checkpoint: crash with everything synced.
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	fs.Crash(vfs.CrashDropUnsynced, nil)
	return m, offs
}

func checkModelUpTo(t *testing.T, fs vfs.FS, m model, maxID PageID) {
	t.Helper()
	s, err := Open("db", testOptions(fs, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkModel(t, s, m, maxID)
}

// TestMapLogTornDelta: a crash while a delta was being appended leaves a
// partial record at the end of the map log. Recovery ignores it (the
// checkpoint had not returned), replays the log from the previous
// checkpoint instead, and truncates the torn record.
func TestMapLogTornDelta(t *testing.T) {
	for _, cut := range []int{1, 71, -2, -1} { // bytes kept; negative: from the record's end
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			fs := vfs.NewMem()
			m, offs := deltaStore(t, fs)
			name := filepath.Join("db", mapLogName)
			last := offs[len(offs)-1]
			f, err := fs.OpenFile(name, os.O_RDWR, 0, vfs.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			hdr := make([]byte, mapDeltaHeader+4)
			f.ReadAt(hdr, last)
			n, err := mapDeltaLength(hdr)
			if err != nil {
				t.Fatal(err)
			}
			if cut == -2 {
				cut = n / 2
			} else if cut < 0 {
				cut = n - 1
			}
			if err := f.Truncate(last + int64(cut)); err != nil {
				t.Fatal(err)
			}
			f.Close()
			s, err := Open("db", testOptions(fs, nil))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if size := fileSize(t, fs, name); size != last {
				t.Fatalf("map log is %d bytes after recovery; the torn record at %d should be gone", size, last)
			}
			checkModel(t, s, m, deltaPages)
		})
	}
}

// TestMapLogStaleGeneration: a crash after a full checkpoint was installed
// but before the map log was emptied leaves the previous generation's
// deltas. Recovery must not apply them to the new map.
func TestMapLogStaleGeneration(t *testing.T) {
	fs := vfs.NewMem()
	s, opts := bigStore(t, fs, 2000, func(o *Options) { o.MapLogRatio = 100 })
	for i := 0; i < 3; i++ {
		for id := PageID(0); id < 30; id++ {
			if _, _, err := s.WritePage(id, pageContent(id, 3+i, testPageSize)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	if s.deltas == 0 {
		t.Fatal("no deltas")
	}
	// The stale deltas say pages 0..29 are at version 5's locations. Free
	// them, write a full checkpoint, and let emptying the log fail.
	m := model{}
	for id := PageID(30); id < 2000; id++ {
		m[id] = 2
	}
	for id := PageID(0); id < 30; id++ {
		if err := s.Free(id); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	s.needFull = true
	s.mu.Unlock()
	fs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpTruncate && filepath.Base(path) == mapLogName {
			return vfs.ErrInjected
		}
		return nil
	})
	if err := s.Checkpoint(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("checkpoint: %v", err)
	}
	fs.SetInjector(nil)
	s.Close()
	fs.Crash(vfs.CrashDropUnsynced, nil)
	if size := fileSize(t, fs, filepath.Join("db", mapLogName)); size == 0 {
		t.Fatal("the map log was emptied: the test does not test anything")
	}
	s, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkModel(t, s, m, deltaPages)
}

// TestCorruptMapLog flips bytes in the map log of a store with several
// deltas: recovery either fails with ErrCorrupt or recovers exactly the
// synced state (a damaged last delta looks torn; the log it described is
// still there to replay). A damaged delta followed by a valid one is
// corruption.
func TestCorruptMapLog(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	name := filepath.Join("db", mapLogName)
	corrupt := 0
	trials := 30
	if raceEnabled {
		trials = 6
	}
	for trial := 0; trial < trials; trial++ {
		fs := vfs.NewMem()
		m, offs := deltaStore(t, fs)
		rec := rng.IntN(len(offs))
		// A byte of the record proper, not of its padding.
		b := make([]byte, mapDeltaHeader+4)
		f, _ := fs.OpenFile(name, os.O_RDONLY, 0, vfs.OpenOptions{})
		f.ReadAt(b, offs[rec])
		f.Close()
		n, err := mapDeltaLength(b)
		if err != nil {
			t.Fatal(err)
		}
		off := offs[rec] + rng.Int64N(int64(n))
		flipByte(t, fs, name, off, byte(1+rng.IntN(255)))
		s, err := Open("db", testOptions(fs, nil))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("trial %d: flip in delta %d: %v", trial, rec, err)
			}
			corrupt++
			continue
		}
		if rec < len(offs)-1 {
			s.Close()
			t.Fatalf("trial %d: flip in delta %d of %d accepted", trial, rec, len(offs))
		}
		checkModel(t, s, m, deltaPages)
		s.Close()
	}
	if corrupt == 0 {
		t.Fatal("no flip was reported as corruption")
	}
}

// TestOpenVersion1: a store written in the first format (checkpoint and
// segment headers of version 1, no map log) opens, and its first
// checkpoint rewrites it in the current format.
// version1Store writes a store in the first format (checkpoint and segment
// headers of version 1, no map log): pages 0..4 at version 2 in segment 1,
// the checkpoint's map holding 0..2 and its replay position at page 3's
// record. It returns the records' locations.
func version1Store(t *testing.T, fs vfs.FS) []location {
	t.Helper()
	if err := fs.MkdirAll("db", 0o755); err != nil {
		t.Fatal(err)
	}
	c := mustCodec(t, "lz4")
	seg := vfs.AlignedBuffer(64 << 10)
	encodeSegmentHeader(seg, testPageSize, 1, streamHot)
	binary.LittleEndian.PutUint32(seg[8:], 1) // version 1, same layout, stream 0
	binary.LittleEndian.PutUint32(seg[24:], crc32.Checksum(seg[:24], castagnoli))
	off := segmentHeaderSize
	var entries []location
	for id := PageID(0); id < 5; id++ {
		img, used, err := codec.EncodePage(c, nil, pageContent(id, 2, testPageSize))
		if err != nil {
			t.Fatal(err)
		}
		h := recordHeader{pageID: id, seq: uint64(id), rawLen: testPageSize, storedLen: uint32(len(img)), codec: used, kind: kindPage}
		encodeRecordHeader(seg[off:], &h, payloadCRC(img))
		copy(seg[off+recordHeaderSize:], img)
		entries = append(entries, location{1, uint32(off), uint32(h.size())})
		off += h.size()
	}
	end := (off + vfs.BlockSize - 1) &^ (vfs.BlockSize - 1)
	f, _ := fs.OpenFile(filepath.Join("db", segmentFileName(1)), os.O_CREATE|os.O_RDWR, 0o644, vfs.OpenOptions{})
	f.WriteAt(seg[:end], 0)
	f.Sync()
	f.Close()
	// A version-1 checkpoint whose map holds pages 0..2; 3 and 4 are in
	// the log after its replay position.
	cf, _ := fs.OpenFile(filepath.Join("db", checkpointName), os.O_CREATE|os.O_RDWR, 0o644, vfs.OpenOptions{})
	cf.WriteAt(encodeCheckpointV1(testPageSize, 3, 1, entries[3].off, 2, entries[:3]), 0)
	cf.Sync()
	cf.Close()
	fs.SyncDir("db")
	return entries
}

func TestOpenVersion1(t *testing.T) {
	fs := vfs.NewMem()
	version1Store(t, fs)
	m := model{0: 2, 1: 2, 2: 2, 3: 2, 4: 2}
	s, err := Open("db", testOptions(fs, nil))
	if err != nil {
		t.Fatal(err)
	}
	checkModel(t, s, m, 8)
	if err := s.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.FullCheckpoints != 1 {
		t.Fatalf("first checkpoint after a version-1 store: %d full", st.FullCheckpoints)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ck, err := readCheckpoint(fs, "db")
	if err != nil || ck.version != checkpointVersion {
		t.Fatalf("checkpoint after reopen: %v, version %d", err, ck.version)
	}
	checkModelUpTo(t, fs, m, 8)
}

// FuzzDecodeMapDelta: the map log record decoder never panics, and what it
// accepts re-encodes to the same bytes.
func FuzzDecodeMapDelta(f *testing.F) {
	d := &mapDelta{generation: 3, number: 2,
		ckptState: ckptState{nextSeq: 90, nextSegNum: 7, replay: [numStreams]replayPos{{6, 4100}, {5, 32}}},
		segs:      []segInfo{{5, 80}, {6, 89}},
		entries:   []mapEntry{{1, location{5, 32, 100}}, {9, location{}}, {4, location{6, 4096, 4132}}}}
	f.Add(d.encode())
	f.Add((&mapDelta{generation: 1, number: 1, ckptState: ckptState{nextSeq: 1, nextSegNum: 2, replay: [numStreams]replayPos{{1, 32}}}}).encode())
	f.Add([]byte("STRATMDL"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeMapDelta(b, testPageSize)
		if err != nil {
			return
		}
		n, _ := mapDeltaLength(b)
		if again := d.encode(); !bytes.Equal(again[:n], b[:n]) {
			t.Fatal("accepted record does not re-encode to the same bytes")
		}
	})
}

// FuzzRecoverMapLog opens a store whose map log holds arbitrary bytes after
// a valid delta: recovery must not panic, and must fail with ErrCorrupt or
// give a store whose pages read back cleanly.
func FuzzRecoverMapLog(f *testing.F) {
	base := vfs.NewMem()
	s, _ := bigStore(f, base, 400, func(o *Options) { o.MapLogRatio = 100 })
	for id := PageID(0); id < 10; id++ {
		s.WritePage(id, pageContent(id, 5, testPageSize))
	}
	s.Checkpoint()
	for id := PageID(10); id < 20; id++ {
		s.WritePage(id, pageContent(id, 6, testPageSize))
	}
	s.Sync()
	logBytes := make([]byte, s.mapLogBytes)
	s.mapLog.ReadAt(logBytes, 0)
	base.Crash(vfs.CrashDropUnsynced, nil)
	d := &mapDelta{generation: s.generation, number: s.deltas + 1, ckptState: ckptState{nextSeq: s.nextSeq, nextSegNum: s.nextSegNum, replay: [numStreams]replayPos{{s.nextSegNum - 1, 32}}},
		entries: []mapEntry{{3, location{}}, {11, location{1, 32, 200}}}}
	f.Add(d.encode())
	f.Add([]byte{})
	f.Add(logBytes)
	f.Fuzz(func(t *testing.T, tail []byte) {
		fs := base.CrashClone(vfs.CrashDropUnsynced, nil)
		name := filepath.Join("db", mapLogName)
		lf, err := fs.OpenFile(name, os.O_RDWR, 0, vfs.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		size, _ := lf.Size()
		lf.WriteAt(tail, size)
		lf.Close()
		s, err := Open("db", testOptions(fs, nil))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("recovery error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		defer s.Close()
		buf := make([]byte, testPageSize)
		for id := PageID(0); id < 420; id++ {
			if err := s.ReadPage(id, buf); err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("page %d: %v", id, err)
			}
		}
	})
}

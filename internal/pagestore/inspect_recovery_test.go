package pagestore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// Inspect agrees with recovery: on every state a crash can leave it finds no
// corruption and rebuilds exactly the page map Open rebuilds; whatever Open
// refuses as corrupt, it reports as corruption.

// inspectedMap returns the rebuilt map, trimmed like pageMap.clone.
func inspectedMap(in *Inspection) []location {
	n := len(in.pmap)
	for n > 0 && !in.pmap[n-1].present() {
		n--
	}
	return in.pmap[:n]
}

// checkAgainstOpen inspects the store in fs, then opens it (which repairs
// it): Inspect must report no corruption, its map must be Open's, and its
// pages must read back as Open reads them. After Open and a clean Close,
// Inspect must find nothing at all: every repairable finding was repaired,
// and nothing Open keeps is reported. It returns the open store.
func checkAgainstOpen(t *testing.T, fs vfs.FS, opts Options, what string) *Store {
	t.Helper()
	in := mustInspect(t, fs)
	if bad := corruptFindings(in); len(bad) > 0 {
		t.Fatalf("%s: Inspect reports corruption: %v", what, bad)
	}
	opts.FS = fs
	s, err := Open("db", opts)
	if err != nil {
		t.Fatalf("%s: Inspect found nothing wrong (%v), but Open fails: %v", what, in.Findings, err)
	}
	if d := diffMaps(inspectedMap(in), mapSnapshot(s)); d != "" {
		t.Fatalf("%s: Inspect's map differs from Open's: %s (findings %v)", what, d, in.Findings)
	}
	want, got := make([]byte, testPageSize), make([]byte, testPageSize)
	for _, id := range in.Pages() {
		if err := s.ReadPage(id, want); err != nil {
			t.Fatalf("%s: page %d: Open reads %v", what, id, err)
		}
		if err := in.ReadPage(id, got); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: page %d: Inspect reads %v (equal %v)", what, id, err, bytes.Equal(got, want))
		}
	}
	in.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if in := mustInspect(t, fs); len(in.Findings) > 0 {
		t.Fatalf("%s: after Open and Close: %v", what, in.Findings)
	}
	if s, err = Open("db", opts); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestInspectAgreesWithOpen runs random writes, frees, syncs, checkpoints
// (deltas and full maps), cleaning passes (the cold stream), reopens and
// torn crashes at random points; every crash image goes through
// checkAgainstOpen.
func TestInspectAgreesWithOpen(t *testing.T) {
	seeds, ops := uint64(4), 3000
	if raceEnabled {
		seeds, ops = 2, 1500
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 21))
			fs := vfs.NewMem()
			opts := testOptions(fs, mustCodec(t, "lz4"))
			opts.MapLogRatio = 4
			opts.CleanerThreshold = 0.2
			opts.SegmentSize = 64 << 10
			s, err := Open("db", opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { s.Close() }()
			crashes, cold := 0, 0
			for i := 0; i < ops; i++ {
				id := PageID(rng.IntN(300))
				switch r := rng.IntN(1000); {
				case r < 700:
					if _, _, err := s.WritePage(id, pageContent(id, i, testPageSize)); err != nil {
						t.Fatal(err)
					}
				case r < 850:
					s.Free(id)
				case r < 910:
					if err := s.Sync(); err != nil {
						t.Fatal(err)
					}
				case r < 950:
					if err := s.Checkpoint(); err != nil {
						t.Fatal(err)
					}
				case r < 985:
					if _, err := s.Clean(); err != nil {
						t.Fatal(err)
					}
				case r < 990:
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					s = checkAgainstOpen(t, fs, opts, fmt.Sprintf("op %d, clean close", i))
				default:
					crashed := fs.CrashClone(vfs.CrashTorn, rng)
					s.Close()
					fs = crashed
					opts.FS = fs
					crashes++
					s = checkAgainstOpen(t, fs, opts, fmt.Sprintf("op %d, crash", i))
				}
				if s.streams[streamCold].head != nil {
					cold++
				}
			}
			if crashes < 5 || cold == 0 {
				t.Fatalf("%d crashes, cold stream used in %d ops: the test tests too little", crashes, cold)
			}
		})
	}
}

// TestInspectCrashPoints crashes a store at every I/O operation of a run
// with checkpoints of both kinds and a cleaning pass, in every crash mode (vfs.CrashModes).
func TestInspectCrashPoints(t *testing.T) {
	run := func(s *Store) {
		for i := 0; i < 120; i++ {
			id := PageID(i % 50)
			if _, _, err := s.WritePage(id, pageContent(id, i, testPageSize)); err != nil {
				return
			}
			switch i % 30 {
			case 9:
				s.Sync()
			case 19:
				if s.Checkpoint() != nil {
					return
				}
			case 29:
				if _, err := s.Clean(); err != nil {
					return
				}
			}
		}
		s.Close()
	}
	opts := func(fs vfs.FS) Options {
		o := testOptions(fs, mustCodec(t, "lz4"))
		o.MapLogRatio = 8
		o.CleanerThreshold = 0.1
		o.SegmentSize = 64 << 10
		return o
	}
	// Count the operations of a whole run.
	base := vfs.NewMem()
	s, err := Open("db", opts(base))
	if err != nil {
		t.Fatal(err)
	}
	start := base.OpCount()
	run(s)
	total := base.OpCount() - start
	step := 1
	if raceEnabled {
		step = 5
	}
	for k := 1; k <= total; k += step {
		fs := vfs.NewMem()
		s, err := Open("db", opts(fs))
		if err != nil {
			t.Fatal(err)
		}
		fs.CrashAfterOps(k)
		run(s)
		for _, mode := range vfs.CrashModes {
			img := fs.CrashedClone(mode, rand.New(rand.NewPCG(uint64(k), 5)))
			checkAgainstOpen(t, img, opts(img), fmt.Sprintf("crash after %d of %d ops (%v)", k, total, mode)).Close()
		}
	}
}

// agreeWithOpen inspects the store in fs, then opens it: if Open refuses it
// as corrupt, Inspect must have reported corruption; if Inspect reported
// none, its map must be Open's.
func agreeWithOpen(t *testing.T, fs *vfs.MemFS) {
	in, err := Inspect(fs, "db")
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	defer in.Close()
	bad := corruptFindings(in)
	s, err := Open("db", testOptions(fs, nil))
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("open: %v", err)
		}
		if len(bad) == 0 {
			t.Fatalf("Open fails (%v), Inspect finds no corruption (findings %v)", err, in.Findings)
		}
		return
	}
	defer s.Close()
	if len(bad) > 0 {
		return // Inspect is stricter than Open
	}
	if d := diffMaps(inspectedMap(in), mapSnapshot(s)); d != "" {
		t.Fatalf("Inspect's map differs from Open's: %s", d)
	}
}

// FuzzInspect: a store whose newest segment holds arbitrary bytes after a
// valid header (FuzzRecover's store). Inspect must not panic and must agree
// with Open: corruption wherever Open fails, Open's map wherever it reports
// none.
func FuzzInspect(f *testing.F) {
	fs := vfs.NewMem()
	s, _ := Open("db", testOptions(fs, mustCodec(f, "lz4")))
	for id := PageID(0); id < 5; id++ {
		s.WritePage(id, pageContent(id, int(id)+2, testPageSize))
	}
	s.Free(2)
	s.Sync()
	seg := s.streams[streamHot].head
	data := make([]byte, seg.size)
	seg.f.ReadAt(data, 0)
	s.Close()
	f.Add(data[segmentHeaderSize:])
	f.Add([]byte{1, 2, 3})
	f.Add(make([]byte, 5000))
	f.Fuzz(func(t *testing.T, tail []byte) {
		fs := vfs.NewMem()
		fs.MkdirAll("db", 0o755)
		mf, _ := fs.OpenFile(filepath.Join("db", mapLogName), os.O_CREATE|os.O_RDWR, 0o644, vfs.OpenOptions{})
		mf.Close()
		c := &checkpoint{pageSize: testPageSize, generation: 1}
		c.nextSegNum = 2
		c.replay[streamHot] = replayPos{seg: 1}
		if _, err := writeCheckpoint(fs, "db", c); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, segmentHeaderSize, segmentHeaderSize+len(tail))
		encodeSegmentHeader(b, testPageSize, 1, streamHot)
		b = append(b, tail...)
		sf, _ := fs.OpenFile(filepath.Join("db", segmentFileName(1)), os.O_CREATE|os.O_RDWR, 0o644, vfs.OpenOptions{})
		sf.WriteAt(b, 0)
		sf.Close()
		agreeWithOpen(t, fs)
	})
}

// FuzzInspectMapLog: FuzzRecoverMapLog's store, whose map log holds
// arbitrary bytes after valid deltas.
func FuzzInspectMapLog(f *testing.F) {
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
	old := *d
	old.generation--
	f.Add(old.encode())
	f.Fuzz(func(t *testing.T, tail []byte) {
		fs := base.CrashClone(vfs.CrashDropUnsynced, nil)
		lf, err := fs.OpenFile(filepath.Join("db", mapLogName), os.O_RDWR, 0, vfs.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		size, _ := lf.Size()
		lf.WriteAt(tail, size)
		lf.Close()
		agreeWithOpen(t, fs)
	})
}

package pagestore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// What Inspect reports about the map log: the deltas recovery applies, its
// torn or stale tail (repairable), and every other damage (corruption).

// findingsAbout returns the findings about file name (a base name).
func findingsAbout(in *Inspection, name string, repairable bool) []Finding {
	var out []Finding
	for _, f := range in.Findings {
		if filepath.Base(f.File) == name && f.Repairable == repairable {
			out = append(out, f)
		}
	}
	return out
}

// appendToMapLog writes b at the end of the map log.
func appendToMapLog(t *testing.T, fs vfs.FS, b []byte) {
	t.Helper()
	f, err := fs.OpenFile(filepath.Join("db", mapLogName), os.O_RDWR, 0, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size, _ := f.Size()
	if _, err := f.WriteAt(b, size); err != nil {
		t.Fatal(err)
	}
}

// lastDelta decodes the map log's last record (deltaStore's offsets).
func lastDelta(t *testing.T, fs vfs.FS, offs []int64) *mapDelta {
	t.Helper()
	f, err := fs.OpenFile(filepath.Join("db", mapLogName), os.O_RDONLY, 0, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size, _ := f.Size()
	d, err := readMapDeltaAt(f, offs[len(offs)-1], size, testPageSize, make([]byte, vfs.BlockSize))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestInspectMapLogDeltas: a store whose map is spread over a full
// checkpoint and several deltas (and that crashed after a sync) has no
// problem, and Inspect applies the deltas as Open does.
func TestInspectMapLogDeltas(t *testing.T) {
	fs := vfs.NewMem()
	m, offs := deltaStore(t, fs)
	want := len(offs)
	if offs[0] > 0 { // bigStore's checkpoint was a delta too
		want++
	}
	in := mustInspect(t, fs)
	if in.Deltas != want || in.Version != checkpointVersion || in.CleanClose {
		t.Fatalf("deltas %d (want %d), version %d, clean %v", in.Deltas, want, in.Version, in.CleanClose)
	}
	s := checkAgainstOpen(t, fs, testOptions(fs, nil), "deltas")
	defer s.Close()
	checkModel(t, s, m, deltaPages)
}

// TestInspectMapLogTorn: TestMapLogTornDelta's torn last records are
// repairable findings at the record's offset, not corruption.
func TestInspectMapLogTorn(t *testing.T) {
	for _, cut := range []int{1, 71, -2, -1} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			fs := vfs.NewMem()
			m, offs := deltaStore(t, fs)
			last := offs[len(offs)-1]
			d := lastDelta(t, fs, offs)
			n := mapDeltaSize(len(d.segs), len(d.entries))
			switch cut {
			case -2:
				cut = n / 2
			case -1:
				cut = n - 1
			}
			f, _ := fs.OpenFile(filepath.Join("db", mapLogName), os.O_RDWR, 0, vfs.OpenOptions{})
			f.Truncate(last + int64(cut))
			f.Close()
			in := mustInspect(t, fs)
			rep := findingsAbout(in, mapLogName, true)
			if len(rep) != 1 || rep[0].Offset != last || !strings.Contains(rep[0].Msg, "torn") || in.Deltas != len(offs) {
				t.Fatalf("findings %v, deltas %d", in.Findings, in.Deltas)
			}
			s := checkAgainstOpen(t, fs, testOptions(fs, nil), "torn delta")
			defer s.Close()
			checkModel(t, s, m, deltaPages)
		})
	}
}

// TestInspectMapLogStaleGeneration: TestMapLogStaleGeneration's map log,
// left with the previous generation's records, is repairable.
func TestInspectMapLogStaleGeneration(t *testing.T) {
	fs := vfs.NewMem()
	s, _ := bigStore(t, fs, 2000, func(o *Options) { o.MapLogRatio = 100 })
	for i := 0; i < 3; i++ {
		for id := PageID(0); id < 30; id++ {
			s.WritePage(id, pageContent(id, 3+i, testPageSize))
		}
		if err := s.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	for id := PageID(0); id < 30; id++ {
		s.Free(id)
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
	in := mustInspect(t, fs)
	rep := findingsAbout(in, mapLogName, true)
	if len(rep) != 1 || rep[0].Offset != 0 || !strings.Contains(rep[0].Msg, "older than the checkpoint's") || in.Deltas != 0 {
		t.Fatalf("findings %v, deltas %d", in.Findings, in.Deltas)
	}
	checkAgainstOpen(t, fs, testOptions(fs, nil), "stale generation").Close()
}

// TestInspectFindsMapLogCorruption plants TestCorruptMapLog's flips (same
// seed, more trials) in the bytes of the map log's records: a damaged
// record followed by a valid one is corruption (Open fails too); damage to
// the last record is what a crash during its append leaves, which Open
// repairs without losing anything: a repairable finding.
func TestInspectFindsMapLogCorruption(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	name := filepath.Join("db", mapLogName)
	trials := 60
	if raceEnabled {
		trials = 12
	}
	var corrupt, repairable int
	for trial := 0; trial < trials; trial++ {
		fs := vfs.NewMem()
		m, offs := deltaStore(t, fs)
		rec := rng.IntN(len(offs))
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
		in := mustInspect(t, fs)
		bad := corruptFindings(in)
		if rec < len(offs)-1 {
			if len(bad) == 0 || filepath.Base(bad[0].File) != mapLogName {
				t.Fatalf("trial %d: flip at %d in delta %d of %d: findings %v", trial, off, rec, len(offs), in.Findings)
			}
			if s, err := Open("db", testOptions(fs, nil)); err == nil {
				s.Close()
				t.Fatalf("trial %d: Open accepts what Inspect reports: %v", trial, bad)
			}
			corrupt++
			continue
		}
		if len(bad) > 0 || len(findingsAbout(in, mapLogName, true)) != 1 {
			t.Fatalf("trial %d: flip at %d in the last delta: findings %v", trial, off, in.Findings)
		}
		s := checkAgainstOpen(t, fs, testOptions(fs, nil), fmt.Sprintf("trial %d", trial))
		checkModel(t, s, m, deltaPages)
		s.Close()
		repairable++
	}
	if corrupt == 0 || repairable == 0 {
		t.Fatalf("%d corrupt, %d repairable: the trials test too little", corrupt, repairable)
	}
}

// TestInspectMapLogOutOfOrder: valid records that no crash can leave where
// the log's valid prefix ends — one of a later generation than the
// checkpoint's, one of its generation but out of number order — are
// corruption, although Open, which stops at the first record that does not
// extend the log, drops them silently.
func TestInspectMapLogOutOfOrder(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(d *mapDelta)
	}{
		{"newer generation", func(d *mapDelta) { d.generation++; d.number = 1 }},
		{"number skipped", func(d *mapDelta) { d.number += 2 }},
		{"number repeated", func(d *mapDelta) {}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := vfs.NewMem()
			_, offs := deltaStore(t, fs)
			d := lastDelta(t, fs, offs)
			end := offs[len(offs)-1] + int64(paddedSize(mapDeltaSize(len(d.segs), len(d.entries))))
			c.change(d)
			appendToMapLog(t, fs, d.encode())
			in := mustInspect(t, fs)
			bad := corruptFindings(in)
			if len(bad) != 1 || filepath.Base(bad[0].File) != mapLogName || bad[0].Offset != end {
				t.Fatalf("findings %v", in.Findings)
			}
			s, err := Open("db", testOptions(fs, nil))
			if err != nil {
				t.Fatalf("Open: %v (the test expects Open to accept the store)", err)
			}
			s.Close()
		})
	}
}

// TestInspectMapLogMissing: a store of format version 2 without its map log
// lost the deltas (Open would start from the full checkpoint alone).
func TestInspectMapLogMissing(t *testing.T) {
	fs := vfs.NewMem()
	deltaStore(t, fs)
	if err := fs.Remove(filepath.Join("db", mapLogName)); err != nil {
		t.Fatal(err)
	}
	in := mustInspect(t, fs)
	if bad := corruptFindings(in); len(bad) == 0 || filepath.Base(bad[0].File) != mapLogName {
		t.Fatalf("findings %v", in.Findings)
	}
}

// TestInspectMapLogOnVersion1: a version-1 store has no map log (Open
// creates it); deltas extending its checkpoint are corruption, as Open says.
func TestInspectMapLogOnVersion1(t *testing.T) {
	fs := vfs.NewMem()
	version1Store(t, fs)
	in := mustInspect(t, fs)
	if len(in.Findings) != 0 || in.Version != 1 {
		t.Fatalf("version 1 store: version %d, findings %v", in.Version, in.Findings)
	}
	f, _ := fs.OpenFile(filepath.Join("db", mapLogName), os.O_CREATE|os.O_RDWR, 0o644, vfs.OpenOptions{})
	f.Close()
	d := &mapDelta{generation: 0, number: 1, ckptState: ckptState{nextSeq: 5, nextSegNum: 2, replay: [numStreams]replayPos{{1, 32}}}}
	appendToMapLog(t, fs, d.encode())
	in = mustInspect(t, fs)
	if bad := corruptFindings(in); len(bad) != 1 || !strings.Contains(bad[0].Msg, "version 1") {
		t.Fatalf("delta on a version-1 checkpoint: %v", in.Findings)
	}
	if _, err := Open("db", testOptions(fs, nil)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open: %v", err)
	}
}

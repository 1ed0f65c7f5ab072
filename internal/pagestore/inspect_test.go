package pagestore

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// corruptFindings returns the findings that are corruption.
func corruptFindings(in *Inspection) []Finding {
	var out []Finding
	for _, f := range in.Findings {
		if !f.Repairable {
			out = append(out, f)
		}
	}
	return out
}

func mustInspect(t *testing.T, fs vfs.FS) *Inspection {
	t.Helper()
	in, err := Inspect(fs, "db")
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	t.Cleanup(func() { in.Close() })
	return in
}

// TestInspectHealthy: stores that were closed cleanly, churned by
// overwrites, frees and the cleaner, or crashed have no corruption; the
// page map Inspect rebuilds is the one Open rebuilds.
func TestInspectHealthy(t *testing.T) {
	fs := vfs.NewMem()
	buildStore(t, fs, 40)
	if in := mustInspect(t, fs); len(in.Findings) != 0 || len(in.Pages()) != 40 {
		t.Fatalf("clean store: %d pages, findings %v", len(in.Pages()), in.Findings)
	}
	// Churn, with cleaning passes and checkpoints, then a crash.
	s, err := Open("db", testOptions(fs, mustCodec(t, "lz4")))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		id := PageID(rng.IntN(60))
		if rng.IntN(5) == 0 {
			s.Free(id)
		} else if _, _, err := s.WritePage(id, pageContent(id, i, testPageSize)); err != nil {
			t.Fatal(err)
		}
		switch i % 500 {
		case 100:
			s.Sync()
		case 200:
			if _, err := s.Clean(); err != nil {
				t.Fatal(err)
			}
		case 300:
			s.Checkpoint()
		}
	}
	s.Sync()
	for i := 0; i < 50; i++ { // unsynced: may be torn or lost
		s.WritePage(PageID(i), pageContent(PageID(i), 9999, testPageSize))
	}
	crashed := fs.CrashClone(vfs.CrashTorn, rand.New(rand.NewPCG(3, 4)))
	s.Close()
	for name, f := range map[string]*vfs.MemFS{"churned": fs, "crashed": crashed} {
		in := mustInspect(t, f)
		if bad := corruptFindings(in); len(bad) > 0 {
			t.Fatalf("%s store: %v", name, bad)
		}
		// Open's map must equal Inspect's.
		st, err := Open("db", testOptions(f.CrashClone(vfs.CrashDropUnsynced, nil), nil))
		if err != nil {
			t.Fatalf("%s store does not open: %v", name, err)
		}
		var open []PageID
		st.ForEachPage(func(id PageID) error { open = append(open, id); return nil })
		st.Close()
		if got := in.Pages(); !equalIDs(got, open) {
			t.Fatalf("%s store: Inspect sees pages %v, Open %v", name, got, open)
		}
		buf := make([]byte, testPageSize)
		for _, id := range in.Pages() {
			if err := in.ReadPage(id, buf); err != nil {
				t.Fatalf("%s store: %v", name, err)
			}
		}
	}
}

func equalIDs(a, b []PageID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestInspectFindsSegmentCorruption plants TestCorruptSegment's flips
// (same seed) and also truncations: Inspect must report every one as
// corruption naming the segment — including those no read of a live page
// would notice.
func TestInspectFindsSegmentCorruption(t *testing.T) {
	const n = 40
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 300; trial++ {
		fs := vfs.NewMem()
		buildStore(t, fs, n)
		names, _ := fs.List("db")
		var segs []string
		for _, name := range names {
			if _, ok := parseSegmentFileName(name); ok && fileSize(t, fs, filepath.Join("db", name)) > segmentHeaderSize {
				segs = append(segs, name)
			}
		}
		name := filepath.Join("db", segs[rng.IntN(len(segs))])
		size := fileSize(t, fs, name)
		what := ""
		if trial >= 200 {
			cut := rng.Int64N(size)
			f, _ := fs.OpenFile(name, os.O_RDWR, 0, vfs.OpenOptions{})
			f.Truncate(cut)
			f.Close()
			what = "truncated to " + itoa(cut)
		} else {
			off := rng.Int64N(size)
			flipByte(t, fs, name, off, byte(1+rng.IntN(255)))
			what = "flip at " + itoa(off)
		}
		in := mustInspect(t, fs)
		bad := corruptFindings(in)
		if len(bad) == 0 {
			t.Fatalf("trial %d: %s %s: no corruption reported (findings %v)", trial, name, what, in.Findings)
		}
		if !strings.Contains(bad[0].File, filepath.Base(name)) {
			t.Fatalf("trial %d: %s %s: finding names another file: %v", trial, name, what, bad[0])
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestInspectFindsCheckpointCorruption plants TestCorruptCheckpoint's
// damage: every one is reported as corruption of the checkpoint.
func TestInspectFindsCheckpointCorruption(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	name := filepath.Join("db", checkpointName)
	for trial := 0; trial < 100; trial++ {
		fs := vfs.NewMem()
		buildStore(t, fs, 30)
		size := fileSize(t, fs, name)
		if trial%4 == 3 {
			f, _ := fs.OpenFile(name, os.O_RDWR, 0, vfs.OpenOptions{})
			f.Truncate(rng.Int64N(size))
			f.Close()
		} else {
			flipByte(t, fs, name, rng.Int64N(size), byte(1+rng.IntN(255)))
		}
		in, err := Inspect(fs, "db")
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		bad := corruptFindings(in)
		in.Close()
		if len(bad) == 0 || bad[0].File != name || in.MapUsable {
			t.Fatalf("trial %d: findings %v", trial, in.Findings)
		}
	}
}

func TestInspectMissingSegmentAndForeignFiles(t *testing.T) {
	fs := vfs.NewMem()
	buildStore(t, fs, 40)
	if err := fs.Remove(filepath.Join("db", segmentFileName(1))); err != nil {
		t.Fatal(err)
	}
	in := mustInspect(t, fs)
	if bad := corruptFindings(in); len(bad) == 0 || !strings.Contains(bad[0].File, segmentFileName(1)) {
		t.Fatalf("missing segment: %v", in.Findings)
	}
	// TestNotAStore's directory.
	fs = vfs.NewMem()
	fs.MkdirAll("db", 0o755)
	f, _ := fs.OpenFile(filepath.Join("db", checkpointName), os.O_CREATE|os.O_RDWR, 0o644, vfs.OpenOptions{})
	f.WriteAt([]byte("hello, I am a text file, not a checkpoint at all......"), 0)
	f.Close()
	in = mustInspect(t, fs)
	if bad := corruptFindings(in); len(bad) == 0 || !bytes.Contains([]byte(bad[0].Msg), []byte("magic")) {
		t.Fatalf("foreign checkpoint: %v", in.Findings)
	}
}

package pagestore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// smallReplayWindow makes recovery read through the smallest window (a
// record and a block) for the rest of the test.
func smallReplayWindow(t *testing.T) {
	old := replayWindow
	replayWindow = 0
	t.Cleanup(func() { replayWindow = old })
}

// TestSegmentWindowSpans: a window over a file opened for direct I/O
// returns the same bytes as the file's contents, for spans in order (as a
// replay asks) and out of order, at the end of files whose size is not a
// multiple of the block size.
func TestSegmentWindowSpans(t *testing.T) {
	smallReplayWindow(t)
	rng := rand.New(rand.NewPCG(3, 3))
	fs := vfs.NewMem()
	w := newSegmentWindow(testPageSize)
	for _, size := range []int64{1, 31, vfs.BlockSize, vfs.BlockSize + 1, 12345, 3 << 16, 3<<16 + 700} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		name := fmt.Sprintf("f%d", size)
		f, err := fs.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644, vfs.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(data, 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if f, err = fs.OpenFile(name, os.O_RDWR, 0, vfs.OpenOptions{Direct: true}); err != nil {
			t.Fatal(err)
		}
		if !f.Direct() {
			t.Fatal("MemFS refused direct I/O")
		}
		w.reset(f, size)
		off := int64(0)
		for i := 0; i < 400; i++ {
			if rng.IntN(8) == 0 {
				off = rng.Int64N(size) // a jump, backwards too
			}
			n := 1 + rng.Int64N(w.maxSpan())
			got, err := w.span(off, n)
			if err != nil {
				t.Fatalf("size %d: span(%d, %d): %v", size, off, n, err)
			}
			if want := data[off:min(off+n, size)]; !bytes.Equal(got, want) {
				t.Fatalf("size %d: span(%d, %d): %d bytes differ from the file's %d", size, off, n, len(got), len(want))
			}
			off = (off + 1 + rng.Int64N(2*testPageSize)) % size
		}
		// A file shorter than the size the window was given is an error,
		// not a short span.
		w.reset(f, size+vfs.BlockSize)
		if _, err := w.span(size, 1); err == nil {
			t.Fatalf("size %d: a span past the file's end read nothing and reported no error", size)
		}
		f.Close()
	}
}

// TestReplayWindowAgreesWithMemory: walking the segments of crashed stores
// (torn tails, padding, rewritten and empty segments) through the smallest
// window visits the same records and stops at the same place, for the same
// reason, as walking them in memory.
func TestReplayWindowAgreesWithMemory(t *testing.T) {
	smallReplayWindow(t)
	type visit struct {
		off int64
		h   recordHeader
	}
	walk := func(src segmentBytes) ([]visit, int64, string, error) {
		var vs []visit
		stop, why, err := walkRecords(src, segmentHeaderSize, testPageSize, func(off int64, h recordHeader) error {
			vs = append(vs, visit{off, h})
			return nil
		})
		return vs, stop, why, err
	}
	w := newSegmentWindow(testPageSize)
	segs, stopped := 0, 0
	for seed := uint64(1); seed <= 6; seed++ {
		dry := vfs.NewMem()
		crashWorkload(t, dry, seed, 250, nil)
		total := dry.OpCount()
		rng := rand.New(rand.NewPCG(seed, 5))
		for i := 0; i < 6; i++ {
			fs := vfs.NewMem()
			fs.CrashAfterOps(rng.IntN(total))
			crashWorkload(t, fs, seed, 250, nil)
			after := fs.CrashedClone(vfs.CrashTorn, rand.New(rand.NewPCG(seed, uint64(i))))
			names, err := after.List("db")
			if err != nil {
				continue // crashed before the directory existed
			}
			for _, name := range names {
				if !strings.HasSuffix(name, segmentSuffix) {
					continue
				}
				data, err := readFile(after, "db/"+name)
				if err != nil {
					t.Fatal(err)
				}
				size := int64(len(data))
				f, err := after.OpenFile("db/"+name, os.O_RDONLY, 0, vfs.OpenOptions{Direct: true})
				if err != nil {
					t.Fatal(err)
				}
				wantV, wantStop, wantWhy, _ := walk(memBytes(data))
				w.reset(f, size)
				gotV, gotStop, gotWhy, err := walk(w)
				f.Close()
				if err != nil {
					t.Fatalf("seed %d %s: %v", seed, name, err)
				}
				if gotStop != wantStop || gotWhy != wantWhy || !reflect.DeepEqual(gotV, wantV) {
					t.Fatalf("seed %d %s (%d bytes): window walk stopped at %d (%q) after %d records, in memory at %d (%q) after %d",
						seed, name, size, gotStop, gotWhy, len(gotV), wantStop, wantWhy, len(wantV))
				}
				segs++
				if wantWhy != "" {
					stopped++
				}
			}
		}
	}
	t.Logf("%d segments compared, %d of them stopped on bad bytes", segs, stopped)
	if segs == 0 {
		t.Fatal("no segment compared")
	}
}

// TestCrashRecoverySmallReplayWindow is TestCrashRecovery (fewer seeds)
// with recovery reading segments through the smallest window: records
// straddle refills, and torn tails are found and cut beyond the first
// window.
func TestCrashRecoverySmallReplayWindow(t *testing.T) {
	smallReplayWindow(t)
	testCrashRecovery(t, 6, 72, nil)
}

// readFile returns the whole of file name.
func readFile(fs vfs.FS, name string) ([]byte, error) {
	f, err := fs.OpenFile(name, os.O_RDONLY, 0, vfs.OpenOptions{})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	data := make([]byte, size)
	if n, err := f.ReadAt(data, 0); n < len(data) {
		return nil, fmt.Errorf("read %s: %d of %d bytes: %w", name, n, size, err)
	}
	return data, nil
}

// TestRecoveryMemoryIndependentOfLogLength: recovering a store whose log
// after the checkpoint is 16 MiB long (four segments, crashed after a
// sync) allocates a small fraction of that: the segments are read through
// one window, not held whole. Open used to read every replayed segment
// into memory at once.
func TestRecoveryMemoryIndependentOfLogLength(t *testing.T) {
	const pages, logBytes = 4096, 4096 * testPageSize
	fs := vfs.NewMem()
	opts := testOptions(fs, mustCodec(t, "none"))
	opts.SegmentSize = 4 << 20
	s, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	page := make([]byte, testPageSize)
	for id := PageID(0); id < pages; id++ {
		for i := range page {
			page[i] = byte(rng.Uint32())
		}
		if _, _, err := s.WritePage(id, page); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	after := fs.CrashedClone(vfs.CrashDropUnsynced, rand.New(rand.NewPCG(4, 5)))
	s.Close()

	var before, done runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err = Open("db", testOptions(after, mustCodec(t, "none")))
	runtime.ReadMemStats(&done)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Stats().LivePages; got != pages {
		t.Fatalf("%d pages recovered, want %d", got, pages)
	}
	buf := make([]byte, testPageSize)
	if err := s.ReadPage(pages-1, buf); err != nil || !bytes.Equal(buf, page) {
		t.Fatalf("the last page written: %v", err)
	}
	alloc := done.TotalAlloc - before.TotalAlloc
	t.Logf("recovering a %d MiB log allocated %.2f MiB", logBytes>>20, float64(alloc)/(1<<20))
	if limit := uint64(replayWindow + logBytes/8); alloc > limit {
		t.Fatalf("recovering a %d MiB log allocated %.1f MiB, more than the %.1f MiB of the window and an eighth of the log", logBytes>>20, float64(alloc)/(1<<20), float64(limit)/(1<<20))
	}
}

package pagestore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/vfs"
)

const testPageSize = 4096

// pageContent returns the deterministic content of version ver of page id.
// Versions cycle through text-like compressible pages with zero-filled free
// space, incompressible pages and all-zero pages, so every path (compressed,
// stored raw) is exercised. The id and version are embedded so that a wrong
// page or an old version is recognised.
func pageContent(id PageID, ver int, size int) []byte {
	p := make([]byte, size)
	rng := rand.New(rand.NewPCG(uint64(id), uint64(ver)))
	switch ver % 5 {
	case 0: // incompressible
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
	case 1: // all zero but the stamp
	default: // sysbench-like digits, fill factor varies
		used := size * (40 + 15*(ver%4)) / 100
		for i := 0; i < used; i++ {
			if i%12 == 11 {
				p[i] = '-'
			} else {
				p[i] = '0' + byte(rng.IntN(10))
			}
		}
	}
	copy(p, fmt.Sprintf("page %d version %d|", id, ver))
	return p
}

func testOptions(fs vfs.FS, c codec.Codec) Options {
	return Options{
		FS:                fs,
		PageSize:          testPageSize,
		Codec:             c,
		SegmentSize:       64 << 10,
		WriteBufferSize:   16 << 10,
		DisableBackground: true,
	}
}

func mustCodec(t testing.TB, s string) codec.Codec {
	t.Helper()
	c, err := codec.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var allCodecs = []string{"none", "lz4", "lz4-9", "zstd", "zstd-19", "deflate", "snappy"}

func TestRoundTripEveryCodec(t *testing.T) {
	for _, name := range allCodecs {
		t.Run(name, func(t *testing.T) {
			fs := vfs.NewMem()
			s, err := Open("db", testOptions(fs, mustCodec(t, name)))
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, testPageSize)
			for id := PageID(0); id < 20; id++ {
				want := pageContent(id, int(id), testPageSize)
				used, stored, err := s.WritePage(id, want)
				if err != nil {
					t.Fatal(err)
				}
				if int(id)%5 == 0 && used != codec.None {
					t.Errorf("incompressible page %d stored with %v", id, used)
				}
				if name != "none" && int(id)%5 == 1 && stored > testPageSize/10 {
					t.Errorf("all-zero page %d stored in %d bytes", id, stored)
				}
				if err := s.ReadPage(id, buf); err != nil || !bytes.Equal(buf, want) {
					t.Fatalf("read page %d before sync: %v", id, err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s, err = Open("db", testOptions(fs, mustCodec(t, "zstd")))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for id := PageID(0); id < 20; id++ {
				if err := s.ReadPage(id, buf); err != nil || !bytes.Equal(buf, pageContent(id, int(id), testPageSize)) {
					t.Fatalf("read page %d after reopen with another codec: %v", id, err)
				}
				img, err := s.ReadImage(id, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.DecompressImage(img, buf); err != nil || !bytes.Equal(buf, pageContent(id, int(id), testPageSize)) {
					t.Fatalf("image of page %d: %v", id, err)
				}
			}
		})
	}
}

// model is the expected content of a store: page id → version.
type model map[PageID]int

func checkModel(t *testing.T, s *Store, m model, maxID PageID) {
	t.Helper()
	buf := make([]byte, testPageSize)
	for id := PageID(0); id <= maxID; id++ {
		err := s.ReadPage(id, buf)
		ver, ok := m[id]
		switch {
		case !ok && !errors.Is(err, ErrNotFound):
			t.Fatalf("page %d: want not found, got err %v", id, err)
		case ok && err != nil:
			t.Fatalf("page %d: %v", id, err)
		case ok && !bytes.Equal(buf, pageContent(id, ver, testPageSize)):
			t.Fatalf("page %d: wrong content (want version %d): %q", id, ver, buf[:32])
		}
	}
	if st := s.Stats(); st.LivePages != int64(len(m)) {
		t.Fatalf("stats: %d live pages, model has %d", st.LivePages, len(m))
	}
}

// TestModel runs random writes, overwrites, frees, syncs, checkpoints,
// cleaning passes and reopens against a map.
func TestModel(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0))
			fs := vfs.NewMem()
			codecName := allCodecs[rng.IntN(len(allCodecs))]
			opts := testOptions(fs, mustCodec(t, codecName))
			s, err := Open("db", opts)
			if err != nil {
				t.Fatal(err)
			}
			m := model{}
			const maxID = 60
			ver, cleaned := 0, 0
			for i := 0; i < 3000; i++ {
				id := PageID(rng.IntN(maxID))
				switch r := rng.IntN(100); {
				case r < 60:
					ver++
					if _, _, err := s.WritePage(id, pageContent(id, ver, testPageSize)); err != nil {
						t.Fatal(err)
					}
					m[id] = ver
				case r < 75:
					err := s.Free(id)
					if _, ok := m[id]; ok != (err == nil) {
						t.Fatalf("free page %d (present %v): %v", id, ok, err)
					}
					delete(m, id)
				case r < 85:
					buf := make([]byte, testPageSize)
					err := s.ReadPage(id, buf)
					if v, ok := m[id]; ok {
						if err != nil || !bytes.Equal(buf, pageContent(id, v, testPageSize)) {
							t.Fatalf("op %d: read page %d: %v", i, id, err)
						}
					} else if !errors.Is(err, ErrNotFound) {
						t.Fatalf("read freed page %d: %v", id, err)
					}
				case r < 90:
					if err := s.Sync(); err != nil {
						t.Fatal(err)
					}
				case r < 93:
					if err := s.Checkpoint(); err != nil {
						t.Fatal(err)
					}
				case r < 97:
					res, err := s.Clean()
					if err != nil {
						t.Fatal(err)
					}
					cleaned += res.SegmentsCleaned
				default:
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					opts.Codec = mustCodec(t, allCodecs[rng.IntN(len(allCodecs))])
					if s, err = Open("db", opts); err != nil {
						t.Fatal(err)
					}
					checkModel(t, s, m, maxID)
				}
			}
			checkModel(t, s, m, maxID)
			if cleaned == 0 {
				t.Errorf("cleaner never cleaned a segment")
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); !errors.Is(err, ErrClosed) {
				t.Fatalf("second close: %v", err)
			}
			if err := s.ReadPage(0, make([]byte, testPageSize)); !errors.Is(err, ErrClosed) {
				t.Fatalf("read after close: %v", err)
			}
		})
	}
}

func TestCleanerReclaimsSpace(t *testing.T) {
	fs := vfs.NewMem()
	s, err := Open("db", testOptions(fs, mustCodec(t, "lz4")))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Overwrite the same 10 pages many times: almost everything written
	// becomes garbage.
	for ver := 2; ver < 200; ver++ {
		for id := PageID(0); id < 10; id++ {
			if _, _, err := s.WritePage(id, pageContent(id, ver|2, testPageSize)); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := s.Stats()
	cleanUntilDone(t, s)
	after := s.Stats()
	if after.PhysicalBytes*4 > before.PhysicalBytes || after.SpaceAmplification > 3 {
		t.Fatalf("cleaning did not reclaim space: before %d bytes (amp %.2f), after %d (amp %.2f)",
			before.PhysicalBytes, before.SpaceAmplification, after.PhysicalBytes, after.SpaceAmplification)
	}
	m := model{}
	for id := PageID(0); id < 10; id++ {
		m[id] = 199 | 2
	}
	checkModel(t, s, m, 12)
}

func TestBadInput(t *testing.T) {
	fs := vfs.NewMem()
	s, err := Open("db", testOptions(fs, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.WritePage(1, make([]byte, 100)); !errors.Is(err, ErrPageSize) {
		t.Errorf("short page: %v", err)
	}
	if err := s.ReadPage(1, make([]byte, 100)); !errors.Is(err, ErrPageSize) {
		t.Errorf("short buffer: %v", err)
	}
	if _, _, err := s.WritePage(MaxPageID+1, make([]byte, testPageSize)); err == nil {
		t.Error("page id beyond MaxPageID accepted")
	}
	if err := s.Free(7); !errors.Is(err, ErrNotFound) {
		t.Errorf("free of absent page: %v", err)
	}
	if _, err := Open("db", testOptions(fs, nil)); !errors.Is(err, vfs.ErrLocked) {
		t.Errorf("second open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	opts := testOptions(fs, nil)
	opts.PageSize = 8192
	if _, err := Open("db", opts); !errors.Is(err, ErrPageSize) {
		t.Errorf("open with other page size: %v", err)
	}
	opts.PageSize = 5000
	if _, err := Open("db2", opts); err == nil {
		t.Error("page size 5000 accepted")
	}
}

func TestAllocate(t *testing.T) {
	fs := vfs.NewMem()
	s, err := Open("db", testOptions(fs, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	seen := map[PageID]bool{}
	for i := 0; i < 10; i++ {
		id, err := s.Allocate()
		if err != nil || seen[id] {
			t.Fatalf("allocate: %d %v", id, err)
		}
		seen[id] = true
		if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Free(3); err != nil {
		t.Fatal(err)
	}
	if id, _ := s.Allocate(); id != 3 {
		t.Fatalf("freed id not reused: got %d", id)
	}
}

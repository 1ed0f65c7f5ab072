package bufferpool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

const testPageSize = 4096

// fillPage writes deterministic, compressible content for (id, ver): a
// header with both, digits for half the page, zeros after.
func fillPage(p []byte, id PageID, ver uint64) {
	clear(p)
	binary.LittleEndian.PutUint64(p[0:], uint64(id))
	binary.LittleEndian.PutUint64(p[8:], ver)
	rng := rand.New(rand.NewPCG(uint64(id), ver))
	for i := 16; i < len(p)/2; i++ {
		p[i] = '0' + byte(rng.IntN(10))
	}
}

func pageVersion(t testing.TB, p []byte, id PageID) uint64 {
	t.Helper()
	ver, err := pageIntact(p, id)
	if err != nil {
		t.Fatal(err)
	}
	return ver
}

// pageIntact checks that p is page id's bytes as fillPage made them, whole,
// at one version, which it returns (for goroutines, which cannot t.Fatal).
func pageIntact(p []byte, id PageID) (uint64, error) {
	if got := PageID(binary.LittleEndian.Uint64(p)); got != id {
		return 0, fmt.Errorf("frame of page %d holds page %d", id, got)
	}
	ver := binary.LittleEndian.Uint64(p[8:])
	want := make([]byte, len(p))
	fillPage(want, id, ver)
	if !bytes.Equal(p, want) {
		return 0, fmt.Errorf("page %d version %d: content corrupt (torn)", id, ver)
	}
	return ver, nil
}

// newCleanPages creates n pages, each filled by fill (its index and its
// zeroed bytes), and writes them back, so that they are clean and can be
// evicted without the cleaner; it returns their ids in order.
func newCleanPages(t *testing.T, p *Pool, n int, fill func(i int, d []byte)) []PageID {
	t.Helper()
	ids := make([]PageID, 0, n)
	for i := range n {
		pg, err := p.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		d := pg.Data()
		clear(d)
		fill(i, d)
		ids = append(ids, pg.ID())
		pg.Release()
	}
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// readPages reads every page of ids, in order, rounds times.
func readPages(t *testing.T, p *Pool, ids []PageID, rounds int) {
	t.Helper()
	for range rounds {
		for _, id := range ids {
			pg, err := p.Get(id, Shared)
			if err != nil {
				t.Fatal(err)
			}
			pg.Release()
		}
	}
}

func openStore(t testing.TB, fs vfs.FS, c string) *pagestore.Store {
	t.Helper()
	cd, err := codec.Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	s, err := pagestore.Open("db", pagestore.Options{FS: fs, PageSize: testPageSize, Codec: cd, DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// populate creates n pages (ids 0..n-1, version 1) through the pool.
func populate(t testing.TB, p *Pool, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		pg, err := p.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		fillPage(pg.Data(), pg.ID(), 1)
		pg.Release()
	}
}

func TestBasic(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs, "zstd")
	p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	const n = 600 // ~5× the cache
	populate(t, p, n)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 5000; i++ {
		id := PageID(rng.IntN(n))
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatal(err)
		}
		if v := pageVersion(t, pg.Data(), id); v != 1 {
			t.Fatalf("page %d version %d", id, v)
		}
		pg.Release()
	}
	st := p.Stats()
	t.Logf("%+v", st)
	if st.HitsCompressed == 0 || st.Misses == 0 || st.HitsUncompressed == 0 || st.Demotions == 0 {
		t.Fatalf("expected all three outcomes and demotions: %+v", st)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(1, Shared); !errors.Is(err, ErrClosed) {
		t.Fatalf("get after close: %v", err)
	}
	s.Close()
}

// TestModel runs random reads, modifications, new pages, frees and
// flushes against a map, through a tiny pool (constant eviction and
// demotion), then reopens store and pool and checks nothing dirty was lost.
func TestModel(t *testing.T) {
	for _, share := range []float64{0, 0.3, 0.9, -1} {
		t.Run(fmt.Sprint(share), func(t *testing.T) {
			fs := vfs.NewMem()
			s := openStore(t, fs, "lz4")
			opts := Options{CacheSize: 256 << 10, Partitions: 2, ControllerInterval: 5e6}
			if share >= 0 {
				opts.FixedShare, opts.CompressedShare = true, share
			}
			p, err := New(s, opts)
			if err != nil {
				t.Fatal(err)
			}
			model := map[PageID]uint64{}
			rng := rand.New(rand.NewPCG(2, uint64(share*10+1)))
			var ids []PageID
			for i := 0; i < 6000; i++ {
				switch r := rng.IntN(100); {
				case r < 10 || len(ids) == 0:
					pg, err := p.NewPage()
					if err != nil {
						t.Fatal(err)
					}
					fillPage(pg.Data(), pg.ID(), 1)
					model[pg.ID()] = 1
					ids = append(ids, pg.ID())
					pg.Release()
				case r < 60:
					id := ids[rng.IntN(len(ids))]
					pg, err := p.Get(id, Shared)
					if err != nil {
						t.Fatal(err)
					}
					if v := pageVersion(t, pg.Data(), id); v != model[id] {
						t.Fatalf("op %d: page %d version %d, want %d", i, id, v, model[id])
					}
					pg.Release()
				case r < 90:
					id := ids[rng.IntN(len(ids))]
					pg, err := p.Get(id, Exclusive)
					if err != nil {
						t.Fatal(err)
					}
					model[id]++
					fillPage(pg.Data(), id, model[id])
					pg.MarkDirty()
					pg.Release()
				case r < 95:
					k := rng.IntN(len(ids))
					id := ids[k]
					if err := p.FreePage(id); err != nil {
						t.Fatal(err)
					}
					delete(model, id)
					ids[k] = ids[len(ids)-1]
					ids = ids[:len(ids)-1]
				default:
					if err := p.FlushAll(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, fs, "lz4")
			defer s.Close()
			buf := make([]byte, testPageSize)
			for id, ver := range model {
				if err := s.ReadPage(id, buf); err != nil {
					t.Fatalf("page %d lost: %v", id, err)
				}
				if v := pageVersion(t, buf, id); v != ver {
					t.Fatalf("page %d: version %d on disk, want %d", id, v, ver)
				}
			}
			if got := s.Stats().LivePages; got != int64(len(model)) {
				t.Fatalf("store has %d pages, model %d", got, len(model))
			}
		})
	}
}

// TestConcurrentStress: goroutines read and modify pages at once through a
// small pool. Each page carries a counter incremented under its exclusive
// latch; at the end every counter must equal the increments made to it.
func TestConcurrentStress(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs, "snappy")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 4, ControllerInterval: 2e6})
	if err != nil {
		t.Fatal(err)
	}
	const n = 400
	populate(t, p, n)
	var incs [n]int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			local := make(map[int]int64)
			for i := 0; i < 3000; i++ {
				id := PageID(rng.IntN(n))
				mode := Shared
				if rng.IntN(4) == 0 {
					mode = Exclusive
				}
				pg, err := p.Get(id, mode)
				if err != nil {
					errs <- err
					return
				}
				d := pg.Data()
				if PageID(binary.LittleEndian.Uint64(d)) != id {
					errs <- fmt.Errorf("page %d: frame holds page %d", id, binary.LittleEndian.Uint64(d))
					pg.Release()
					return
				}
				if mode == Exclusive {
					c := binary.LittleEndian.Uint64(d[testPageSize-8:])
					binary.LittleEndian.PutUint64(d[testPageSize-8:], c+1)
					pg.MarkDirty()
					local[int(id)]++
				}
				pg.Release()
			}
			mu.Lock()
			for k, v := range local {
				incs[k] += v
			}
			mu.Unlock()
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for id := PageID(0); id < n; id++ {
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatal(err)
		}
		if c := binary.LittleEndian.Uint64(pg.Data()[testPageSize-8:]); int64(c) != incs[id] {
			t.Fatalf("page %d: counter %d, want %d (an update was lost)", id, c, incs[id])
		}
		pg.Release()
	}
	st := p.Stats()
	t.Logf("hitsU %d hitsC %d misses %d demotions %d flushes %d fbwaits %d R %.2f",
		st.HitsUncompressed, st.HitsCompressed, st.Misses, st.Demotions, st.Flushes, st.FreeBufferWaits, st.Share)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestPinnedAndErrors(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs, "lz4")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 256 << 10, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	populate(t, p, 10)
	pg, err := p.Get(3, Shared)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.FreePage(3); !errors.Is(err, ErrPinned) {
		t.Fatalf("free of a pinned page: %v", err)
	}
	pg.Release()
	if err := p.FreePage(3); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(3, Shared); !errors.Is(err, pagestore.ErrNotFound) {
		t.Fatalf("get of a freed page: %v", err)
	}
	if _, err := p.Get(1000, Shared); !errors.Is(err, pagestore.ErrNotFound) {
		t.Fatalf("get of a missing page: %v", err)
	}
	if st := p.Stats(); st.LoadErrors != 2 {
		t.Fatalf("load errors %d", st.LoadErrors)
	}
	if _, err := New(s, Options{CacheSize: 1000}); err == nil {
		t.Fatal("tiny cache accepted")
	}
	if _, err := New(s, Options{Partitions: 3}); err == nil {
		t.Fatal("3 partitions accepted")
	}
}

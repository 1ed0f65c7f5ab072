package bufferpool

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// digitsLeaf is a page like a leaf of sysbench rows: its id, random digits
// over 70% of it, zeros after (free space). Entropy coding is all that
// compresses it.
func digitsLeaf(p []byte, id PageID) {
	clear(p)
	binary.LittleEndian.PutUint64(p, uint64(id))
	rng := rand.New(rand.NewPCG(uint64(id), 3))
	for i := 8; i < len(p)*7/10; i++ {
		p[i] = '0' + byte(rng.IntN(10))
	}
}

// jsonLeaf is a page of JSON documents that differ in a few values:
// matches are most of what compresses it.
func jsonLeaf(p []byte, id PageID) {
	clear(p)
	binary.LittleEndian.PutUint64(p, uint64(id))
	rng := rand.New(rand.NewPCG(uint64(id), 4))
	b := p[8:8]
	for {
		doc := fmt.Sprintf(`{"id":%d,"user":{"plan":"%s","country":"%s"},"event":"page_view","props":{"path":"/shop/item/%d","duration_ms":%d}}`,
			rng.IntN(1e6), []string{"free", "pro", "team"}[rng.IntN(3)], []string{"DE", "US", "FR"}[rng.IntN(3)], rng.IntN(1e4), rng.IntN(1e3))
		if 8+len(b)+len(doc) > len(p)*8/10 {
			return
		}
		b = append(b, doc...)
	}
}

// tableDictCodec is zstd-1 with a table dictionary trained on pages that
// fill makes.
func tableDictCodec(t *testing.T, fill func([]byte, PageID), seed uint64) codec.Codec {
	t.Helper()
	var train [][]byte
	for i := range 32 {
		p := make([]byte, testPageSize)
		fill(p, PageID(10_000+i))
		train = append(train, p)
	}
	raw, err := codec.TrainTableDict(train, 0, seed)
	if err != nil {
		t.Fatal(err)
	}
	d, err := codec.RegisterDict(raw)
	if err != nil {
		t.Fatal(err)
	}
	base, err := codec.New(codec.Zstd, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := codec.WithDict(base, d)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// dictStore is a store whose dictionary is a table dictionary trained on
// the test's pages: demotions compress with it (the store itself writes
// without one).
type dictStore struct {
	*pagestore.Store
	dict codec.Codec
}

func (s dictStore) WithDictionary(codec.Codec) codec.Codec { return s.dict }

// Demotions that compress code digits as frames of literals, and JSON
// with the codec: the pool measures which pays. Every page read back,
// through images of either coding, is the page written.
func TestDemotionCodingFollowsTheData(t *testing.T) {
	keepImages = false // every demotion compresses
	defer func() { keepImages = true }()
	for _, tc := range []struct {
		name     string
		fill     func([]byte, PageID)
		literals bool
	}{
		{"digits", digitsLeaf, true},
		{"json", jsonLeaf, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := dictStore{openStore(t, vfs.NewMem(), "zstd"), tableDictCodec(t, tc.fill, uint64(len(tc.name)))}
			p, err := New(s, Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			const n = 400
			for i := range n {
				pg, err := p.NewPage()
				if err != nil {
					t.Fatal(err)
				}
				if pg.ID() != PageID(i) {
					t.Fatalf("page %d has id %d", i, pg.ID())
				}
				tc.fill(pg.Data(), pg.ID())
				pg.Release()
			}
			want := make([]byte, testPageSize)
			rng := rand.New(rand.NewPCG(1, 2))
			for range 20_000 {
				id := PageID(rng.IntN(n))
				pg, err := p.Get(id, Shared)
				if err != nil {
					t.Fatal(err)
				}
				tc.fill(want, id)
				if !bytes.Equal(pg.Data(), want) {
					t.Fatalf("page %d read back wrong", id)
				}
				pg.Release()
			}
			st := p.Stats()
			compressed := st.Demotions - st.FreeDemotions
			t.Logf("demotions %d, compressed %d, as literals %d; images %d (%d bytes), hits %d/%d/%d",
				st.Demotions, compressed, st.LiteralDemotions, st.Images, st.ImageBytes, st.HitsUncompressed, st.HitsCompressed, st.Misses)
			if compressed < 20*codingSampleEvery*codingWindow {
				t.Fatalf("only %d demotions compressed", compressed)
			}
			if tc.literals && st.LiteralDemotions < compressed*3/4 {
				t.Errorf("%d of %d compressing demotions coded as literals, want most", st.LiteralDemotions, compressed)
			}
			if !tc.literals && st.LiteralDemotions != 0 {
				t.Errorf("%d of %d compressing demotions coded as literals, want none", st.LiteralDemotions, compressed)
			}
		})
	}
}

// The choice follows each window of samples, both ways.
func TestDemotionCodingWindow(t *testing.T) {
	var dc demoteCoding
	for range codingWindow {
		dc.record(1100, 1000)
	}
	if !dc.literals.Load() {
		t.Fatal("images 1.1× the codec's: literals not chosen")
	}
	for range codingWindow - 1 {
		dc.record(3000, 1000)
	}
	if !dc.literals.Load() {
		t.Fatal("chose before the window was full")
	}
	dc.record(3000, 1000)
	if dc.literals.Load() {
		t.Fatal("images 3× the codec's: literals still chosen")
	}
}

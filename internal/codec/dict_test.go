package codec

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// eventsPage returns a page of JSON event documents like the bench's
// events data set: the same field names and shapes in every document,
// varying values, zeroed free space at the end.
func eventsPage(size int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	kinds := []string{"page_view", "click", "purchase", "signup", "logout"}
	var b []byte
	for n := 0; ; n++ {
		doc := fmt.Sprintf(`{"id":%d,"user":{"id":"u%07d","plan":"%s","country":"%s"},"event":"%s","ts":"2026-12-%02dT%02d:%02d:%02dZ","props":{"path":"/shop/item/%d","referrer":"https://example.com/search?q=%d","duration_ms":%d,"items":[%d,%d]}}`,
			seed*1000+uint64(n), rng.IntN(1e7), []string{"free", "pro", "team"}[rng.IntN(3)],
			[]string{"DE", "US", "FR", "JP"}[rng.IntN(4)], kinds[rng.IntN(len(kinds))],
			1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60), rng.IntN(1e5), rng.IntN(1e6),
			rng.IntN(1e4), rng.IntN(1e3), rng.IntN(1e3))
		if len(b)+len(doc) > size*8/10 {
			break
		}
		b = append(b, doc...)
	}
	page := make([]byte, size)
	copy(page, b)
	return page
}

func mustDict(tb testing.TB, samples [][]byte, seed uint64) *Dict {
	tb.Helper()
	raw, err := TrainDict(samples, 0, 0, seed)
	return mustRegister(tb, raw, err)
}

// A dictionary trained on pages of JSON documents makes other such pages
// compress better, and its images decode back through Decompress.
func TestDictCompressesSmallPagesBetter(t *testing.T) {
	const size = 4 << 10
	var train [][]byte
	for i := range 64 {
		train = append(train, eventsPage(size, uint64(i)))
	}
	d := mustDict(t, train, 1)
	plain := mustParse(t, "zstd-1")
	withDict, err := WithDict(plain, d)
	if err != nil {
		t.Fatal(err)
	}
	if withDict.ID() != ZstdDict || DictOf(withDict) != d {
		t.Fatalf("WithDict: id %s dict %v", withDict.ID(), DictOf(withDict))
	}
	var rawBytes, plainBytes, dictBytes int
	got := make([]byte, size)
	for i := 100; i < 132; i++ {
		page := eventsPage(size, uint64(i))
		p, err := plain.Compress(nil, page)
		if err != nil {
			t.Fatal(err)
		}
		img, used, err := EncodePage(withDict, nil, page)
		if err != nil || used != ZstdDict {
			t.Fatalf("EncodePage: used %s, err %v", used, err)
		}
		if err := Decompress(ZstdDict, got, img); err != nil {
			t.Fatal(err)
		}
		if string(got) != string(page) {
			t.Fatal("round trip with dictionary changed the page")
		}
		rawBytes, plainBytes, dictBytes = rawBytes+size, plainBytes+len(p), dictBytes+len(img)
	}
	rPlain, rDict := float64(rawBytes)/float64(plainBytes), float64(rawBytes)/float64(dictBytes)
	t.Logf("4 KiB JSON pages: zstd-1 %.2f×, with dictionary %.2f×", rPlain, rDict)
	if rDict < 1.2*rPlain {
		t.Errorf("dictionary ratio %.2f× is not 1.2× the plain ratio %.2f×", rDict, rPlain)
	}
}

// An image whose dictionary is not registered is reported as corrupt and
// names the missing dictionary; other codecs are left alone by WithDict.
func TestDictMissingAndMisuse(t *testing.T) {
	const size = 4 << 10
	// A dictionary trained but never registered: its images cannot be read.
	// A fresh seed each run: the registry outlives a run (-count=2).
	raw, err := TrainDict([][]byte{eventsPage(size, 1), eventsPage(size, 2)}, 4<<10, 0, uint64(time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	unreg := &Dict{raw: raw, enc: make(map[encoderKey]*zstd.Encoder)}
	if unreg.id, err = DictID(raw); err != nil {
		t.Fatal(err)
	}
	enc, err := unreg.encoder(1, false)
	if err != nil {
		t.Fatal(err)
	}
	img := enc.EncodeAll(eventsPage(size, 3), nil)
	err = Decompress(ZstdDict, make([]byte, size), img)
	if !errors.Is(err, ErrCorrupt) || !errors.Is(err, ErrNoDict) {
		t.Fatalf("unregistered dictionary: err = %v, want ErrCorrupt and ErrNoDict", err)
	}
	// A plain zstd frame under the ZstdDict ID names no dictionary.
	plain, _ := mustParse(t, "zstd").Compress(nil, eventsPage(size, 3))
	if err := Decompress(ZstdDict, make([]byte, size), plain); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("frame without dictionary: err = %v, want ErrCorrupt", err)
	}
	// Registering the same bytes twice gives the same Dict; other bytes
	// under a registered ID are refused.
	d1, err := RegisterDict(raw)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := RegisterDict(raw)
	if err != nil || d1 != d2 {
		t.Fatalf("second registration: %p %p %v", d1, d2, err)
	}
	other, err := TrainDict([][]byte{sysbenchPage(size, 1), sysbenchPage(size, 2)}, 4<<10, d1.ID(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RegisterDict(other); err == nil {
		t.Fatal("a second dictionary under a registered ID was accepted")
	}
	if _, err := RegisterDict([]byte("not a dictionary")); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("garbage dictionary: err = %v, want ErrCorrupt", err)
	}
	// Now registered, the image decodes.
	if err := Decompress(ZstdDict, make([]byte, size), img); err != nil {
		t.Fatal(err)
	}
	// Only zstd takes a dictionary.
	lz := mustParse(t, "lz4")
	if c, err := WithDict(lz, d1); err != nil || c != lz {
		t.Fatalf("WithDict(lz4) = %v, %v; want lz4 itself", c, err)
	}
	if _, err := New(ZstdDict, 1); !errors.Is(err, ErrUnknown) {
		t.Fatalf("New(ZstdDict) err = %v, want ErrUnknown", err)
	}
}

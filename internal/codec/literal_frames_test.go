package codec

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// tableDictCodec returns zstd-1 with a table dictionary trained on pages
// made by gen, registered under an ID drawn from seed.
func tableDictCodec(tb testing.TB, gen func(int, uint64) []byte, size int, seed uint64) Codec {
	tb.Helper()
	var train [][]byte
	for i := range 32 {
		train = append(train, gen(size, seed*1000+uint64(i)))
	}
	raw, err := TrainTableDict(train, 0, seed)
	d := mustRegister(tb, raw, err)
	c, err := WithDict(mustParse(tb, "zstd-1"), d)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// Frames of literals decode back, through Decompress and through the zstd
// library given the dictionary, for pages of every size and with zero
// runs placed anywhere and of any length: their literal and match
// lengths take every code of the tables with extra bits or without.
func TestLiteralFramesDecodeBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, size := range []int{4 << 10, 16 << 10, 64 << 10} {
		c := tableDictCodec(t, sysbenchPage, size, uint64(size)+17)
		d := DictOf(c)
		dec, err := zstd.NewReader(nil, zstd.WithDecoderDicts(d.raw))
		if err != nil {
			t.Fatal(err)
		}
		check := func(page []byte, what string) []byte {
			t.Helper()
			img, ok := CompressLiterals(c, nil, page)
			if !ok {
				t.Fatalf("%d bytes, %s: not coded", len(page), what)
			}
			got := make([]byte, len(page))
			if err := Decompress(ZstdDict, got, img); err != nil || !bytes.Equal(got, page) {
				t.Fatalf("%d bytes, %s: Decompress: %v (equal %v)", len(page), what, err, bytes.Equal(got, page))
			}
			lib, err := dec.DecodeAll(img, nil)
			if err != nil || !bytes.Equal(lib, page) {
				t.Fatalf("%d bytes, %s: zstd library: %v", len(page), what, err)
			}
			return img
		}
		digits := func(n int) []byte {
			p := make([]byte, n)
			for i := range p {
				p[i] = '0' + byte(rng.IntN(10))
			}
			return p
		}
		// Every literal length code before the run, every match length
		// code for the run (within the page).
		var lens []int
		for _, b := range llBaselines {
			lens = append(lens, b.base, b.base+1, max(2*b.base-1, 0))
		}
		for _, start := range lens {
			if size > 16<<10 && start < 16<<10 {
				continue // the codes below are covered at 16 KiB
			}
			for _, b := range mlBaselines {
				for _, n := range []int{b.base + 1, b.base + 2} {
					if n < minZeroMatch || start+n > size {
						continue
					}
					page := digits(size)
					clear(page[start : start+n])
					check(page, "run")
				}
			}
		}
		// A run at the end (a leaf's free space), none, several.
		page := sysbenchPage(size, 5)
		img := check(page, "sysbench page")
		if _, zl := longestZeroRun(page); zl < minZeroMatch {
			t.Fatalf("test page has no zero run")
		}
		if plain, _ := c.Compress(nil, page); len(img) > 2*len(plain) {
			t.Errorf("%d bytes: frame of literals %d bytes, zstd %d", size, len(img), len(plain))
		}
		check(digits(size), "no zeros")
		page = digits(size)
		for range 20 {
			at := rng.IntN(size - 100)
			clear(page[at : at+rng.IntN(100)])
		}
		check(page, "scattered runs")
		dec.Close()
	}
}

// What is not coded is refused, not mangled: a codec without a literal
// table, tiny pages, and pages the table cannot code smaller.
func TestLiteralFramesRefuse(t *testing.T) {
	c := tableDictCodec(t, sysbenchPage, 4096, 99)
	page := sysbenchPage(4096, 1)
	if _, ok := CompressLiterals(mustParse(t, "zstd-1"), nil, page); ok {
		t.Error("coded without a dictionary")
	}
	if _, ok := CompressLiterals(c, nil, page[:20]); ok {
		t.Error("coded 20 bytes")
	}
	if _, ok := CompressLiterals(c, nil, make([]byte, 128<<10)); ok {
		t.Error("coded 128 KiB")
	}
	rnd := make([]byte, 4096)
	for i := range rnd {
		rnd[i] = byte(rand.Uint32())
	}
	if img, ok := CompressLiterals(c, []byte("kept"), rnd); ok || string(img) != "kept" {
		t.Errorf("random bytes: ok %v, dst %q", ok, img)
	}
}

func BenchmarkLiteralFrames(b *testing.B) {
	for _, ds := range []struct {
		name string
		gen  func(int, uint64) []byte
		seed uint64
	}{{"sysbench", sysbenchPage, 4242}, {"events", eventsPage, 4243}} {
		c := tableDictCodec(b, ds.gen, 4096, ds.seed)
		page := ds.gen(4096, 7)
		lit, _ := CompressLiterals(c, nil, page)
		full, _ := c.Compress(nil, page)
		out := make([]byte, len(page))
		b.Run(ds.name+"/compress-literals", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				lit, _ = CompressLiterals(c, lit, page)
			}
			b.ReportMetric(float64(len(page))/float64(len(lit)), "ratio")
		})
		b.Run(ds.name+"/compress-zstd", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				full, _ = c.Compress(full, page)
			}
			b.ReportMetric(float64(len(page))/float64(len(full)), "ratio")
		})
		b.Run(ds.name+"/decompress-literals", func(b *testing.B) {
			for b.Loop() {
				if err := Decompress(ZstdDict, out, lit); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(ds.name+"/decompress-zstd", func(b *testing.B) {
			for b.Loop() {
				if err := Decompress(ZstdDict, out, full); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

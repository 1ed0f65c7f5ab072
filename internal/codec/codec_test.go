package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// testCodecs names the codecs the tests cover: every algorithm at its
// default level, and the levels at which the libraries switch strategy.
var testCodecs = []string{
	"none",
	"lz4", "lz4hc-1", "lz4hc-9",
	"zstd", "zstd-1", "zstd-7", "zstd-19",
	"deflate", "deflate-1", "deflate-9",
	"snappy",
}

var pageSizes = []int{4 << 10, 16 << 10, 64 << 10}

func mustParse(tb testing.TB, name string) Codec {
	tb.Helper()
	c, err := Parse(name)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// sysbenchPage returns a page laid out like an InnoDB leaf of sysbench's
// sbtest table: records of (id INT, k INT, c CHAR(120), pad CHAR(60)), where
// c and pad are groups of 11 random digits joined by dashes, filling about
// 70% of the page, followed by zeroed free space.
func sysbenchPage(size int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 0))
	page := make([]byte, size)
	digits := func(b []byte, groups int) {
		for g := range groups {
			if g > 0 {
				b[0] = '-'
				b = b[1:]
			}
			for i := range 11 {
				b[i] = byte('0' + rng.IntN(10))
			}
			b = b[11:]
		}
		for i := range b {
			b[i] = ' '
		}
	}
	const header, record = 5 + 6 + 7, 5 + 6 + 7 + 4 + 4 + 120 + 60 // InnoDB-like record header, trx id, roll ptr
	for off, id := 120, uint32(seed%1000)*1000; off+record <= size*7/10; off, id = off+record, id+1 {
		r := page[off : off+record]
		binary.BigEndian.PutUint16(r[3:], uint16(off+record)) // next-record pointer
		binary.BigEndian.PutUint32(r[header:], id)
		binary.BigEndian.PutUint32(r[header+4:], rng.Uint32N(1<<20))
		digits(r[header+8:header+8+120], 10)
		digits(r[header+8+120:], 5)
	}
	return page
}

func randomPage(size int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	page := make([]byte, size)
	for i := 0; i < size; i += 8 {
		binary.LittleEndian.PutUint64(page[i:], rng.Uint64())
	}
	return page
}

// pageKinds are the page contents the tests round-trip.
var pageKinds = []struct {
	name string
	make func(size int, seed uint64) []byte
}{
	{"sysbench", sysbenchPage},
	{"random", randomPage},
	{"zero", func(size int, _ uint64) []byte { return make([]byte, size) }},
}

func TestRoundTrip(t *testing.T) {
	for _, name := range testCodecs {
		c := mustParse(t, name)
		for _, size := range pageSizes {
			for _, kind := range pageKinds {
				t.Run(fmt.Sprintf("%s/%d/%s", name, size, kind.name), func(t *testing.T) {
					page := kind.make(size, uint64(size))
					// Reuse a dirty buffer, as the page store does.
					dst := bytes.Repeat([]byte{0xAA}, 2*size)
					img, err := c.Compress(dst, page)
					if err != nil {
						t.Fatal(err)
					}
					got := bytes.Repeat([]byte{0x55}, size)
					if err := c.Decompress(got, img); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, page) {
						t.Fatal("Codec.Decompress returned a different page")
					}
					clear(got)
					if err := Decompress(c.ID(), got, img); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, page) {
						t.Fatal("Decompress returned a different page")
					}
					// The image is a function of the page alone, whatever
					// pooled state compressed it.
					img2, err := c.Compress(nil, page)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(img, img2) {
						t.Fatal("compressing the same page twice gave different images")
					}
				})
			}
		}
	}
}

// TestLevels checks that levels reach the compressors: on a page of random
// a's and b's, with long hash chains and room for entropy coding, a higher
// level must compress smaller.
func TestLevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	page := make([]byte, 64<<10)
	for i := range page {
		page[i] = "ab"[rng.IntN(2)]
	}
	for _, pair := range [][2]string{
		{"lz4", "lz4hc-1"}, {"lz4hc-1", "lz4hc-9"},
		{"zstd-1", "zstd"}, {"zstd", "zstd-7"}, {"zstd-7", "zstd-19"},
		{"deflate-1", "deflate"}, {"deflate-1", "deflate-9"},
	} {
		lo, err := mustParse(t, pair[0]).Compress(nil, page)
		if err != nil {
			t.Fatal(err)
		}
		hi, err := mustParse(t, pair[1]).Compress(nil, page)
		if err != nil {
			t.Fatal(err)
		}
		if len(hi) >= len(lo) {
			t.Errorf("%s: %d bytes, not smaller than %s: %d bytes", pair[1], len(hi), pair[0], len(lo))
		}
	}
}

func TestEmptyPage(t *testing.T) {
	for _, name := range testCodecs {
		c := mustParse(t, name)
		img, err := c.Compress(nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.Decompress(nil, img); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.Decompress(make([]byte, 1), img); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: empty image decoded into 1 byte: %v", name, err)
		}
	}
}

func TestEncodePage(t *testing.T) {
	for _, name := range testCodecs {
		c := mustParse(t, name)
		for _, size := range pageSizes {
			for _, kind := range pageKinds {
				page := kind.make(size, 7)
				out, used, err := EncodePage(c, nil, page)
				if err != nil {
					t.Fatal(err)
				}
				ratio := float64(len(page)) / float64(len(out))
				t.Logf("%s/%d/%s: %d bytes, ratio %.2f, stored as %s", name, size, kind.name, len(out), ratio, used)

				switch {
				case c.ID() == None, kind.name == "random":
					if used != None || !bytes.Equal(out, page) {
						t.Errorf("%s/%d/%s: stored as %s, want the raw page", name, size, kind.name, used)
					}
				case used != c.ID():
					t.Errorf("%s/%d/%s: stored as %s, want %s", name, size, kind.name, used, c.ID())
				case len(out) > len(page)*7/8:
					t.Errorf("%s/%d/%s: %d-byte image kept for a %d-byte page", name, size, kind.name, len(out), len(page))
				case kind.name == "zero" && ratio < 16:
					// Snappy, whose copies are at most 64 bytes long, is the
					// weakest here at about 20:1; the others exceed 100:1.
					t.Errorf("%s/%d/zero: ratio %.1f, want at least 16", name, size, ratio)
				}

				got := make([]byte, size)
				if err := Decompress(used, got, out); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, page) {
					t.Fatalf("%s/%d/%s: page changed through EncodePage", name, size, kind.name)
				}
			}
		}
	}
}

// TestEncodePageThreshold pins the 1/8 rule at its edge: an 800-byte page
// stays compressed only in an image of at most 700 bytes.
func TestEncodePageThreshold(t *testing.T) {
	page := make([]byte, 800)
	for _, tc := range []struct {
		imgLen int
		want   ID
	}{{700, Zstd}, {701, None}} {
		c := &fixedCodec{id: Zstd, img: make([]byte, tc.imgLen)}
		out, used, err := EncodePage(c, nil, page)
		if err != nil {
			t.Fatal(err)
		}
		if used != tc.want {
			t.Errorf("%d-byte image of an 800-byte page: stored as %s, want %s", tc.imgLen, used, tc.want)
		}
		if used == None && len(out) != len(page) {
			t.Errorf("raw page stored in %d bytes", len(out))
		}
	}
}

// fixedCodec compresses every page to img.
type fixedCodec struct {
	id  ID
	img []byte
}

func (f *fixedCodec) ID() ID                                 { return f.id }
func (f *fixedCodec) Level() int                             { return 0 }
func (f *fixedCodec) String() string                         { return "fixed" }
func (f *fixedCodec) Compress(dst, _ []byte) ([]byte, error) { return append(dst[:0], f.img...), nil }
func (f *fixedCodec) Decompress(_, _ []byte) error           { return errors.ErrUnsupported }

func TestDecompressWrongLength(t *testing.T) {
	for _, name := range testCodecs {
		c := mustParse(t, name)
		for _, kind := range pageKinds {
			page := kind.make(16<<10, 3)
			img, err := c.Compress(nil, page)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{0, 1, len(page) - 1, len(page) + 1, 2 * len(page)} {
				err := c.Decompress(make([]byte, n), img)
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("%s/%s: %d-byte page decoded into %d bytes: err = %v, want ErrCorrupt",
						name, kind.name, len(page), n, err)
				}
			}
		}
	}
}

func TestDecompressTruncated(t *testing.T) {
	for _, name := range testCodecs {
		c := mustParse(t, name)
		for _, kind := range pageKinds {
			page := kind.make(4<<10, 5)
			img, err := c.Compress(nil, page)
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]byte, len(page))
			for n := range len(img) {
				if err := c.Decompress(dst, img[:n]); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%s/%s: image cut to %d of %d bytes: err = %v, want ErrCorrupt",
						name, kind.name, n, len(img), err)
				}
			}
			// Trailing garbage is corruption too.
			long := append(img[:len(img):len(img)], 0)
			if err := c.Decompress(dst, long); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s/%s: image with a byte appended: err = %v, want ErrCorrupt", name, kind.name, err)
			}
		}
	}
}

// TestDecompressBitFlips damages every byte of an image in several ways.
// Decoding must fail with ErrCorrupt or, where the damage still decodes,
// fill the page exactly; it must never panic.
//
// Damage that decodes may yield a wrong page, even for Deflate: its Adler-32
// is weak over short spans, and flipping bit 0 of byte 462 of the Deflate
// image below turns "6-4" into "250", which has the same Adler-32. Only the
// page store's CRC32C catches such pages.
func TestDecompressBitFlips(t *testing.T) {
	for _, name := range testCodecs {
		c := mustParse(t, name)
		page := sysbenchPage(4<<10, 11)
		img, err := c.Compress(nil, page)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, len(page))
		bad := make([]byte, len(img))
		detected, wrong := 0, 0
		for i := range img {
			for _, mask := range []byte{0x01, 0x10, 0x80, 0xFF} {
				copy(bad, img)
				bad[i] ^= mask
				err := c.Decompress(dst, bad)
				switch {
				case err == nil:
					if !bytes.Equal(dst, page) {
						wrong++
					}
				case errors.Is(err, ErrCorrupt):
					detected++
				default:
					t.Fatalf("%s: byte %d ^ %#x: err = %v, want nil or ErrCorrupt", name, i, mask, err)
				}
			}
		}
		t.Logf("%s: of %d damaged images, %d rejected, %d decoded to a wrong page",
			name, 4*len(img), detected, wrong)
	}
}

// TestDecompressHostile feeds images that claim far more than a page, to
// check that decoders refuse them without allocating for the claim.
func TestDecompressHostile(t *testing.T) {
	zstdHeader := []byte{0x28, 0xB5, 0x2F, 0xFD}
	rleBlock := func(last bool) []byte {
		h := uint32(1)<<1 | uint32(128<<10-1)<<3 // RLE block of 128 KiB - 1 bytes
		if last {
			h |= 1
		}
		return []byte{byte(h), byte(h >> 8), byte(h >> 16), 'x'}
	}
	var manyRLE []byte
	manyRLE = append(manyRLE, zstdHeader...)
	manyRLE = append(manyRLE, 0x00, 10<<3) // no content size, 1 MiB window
	for i := range 64 {
		manyRLE = append(manyRLE, rleBlock(i == 63)...)
	}
	tests := []struct {
		name string
		id   ID
		img  []byte
	}{
		{"zstd 1 GiB content size", Zstd, append(append(zstdHeader[:4:4], 0xE0), // single segment, 8-byte content size
			0, 0, 0, 0x40, 0, 0, 0, 0, 0x01, 0, 0, 'x')},
		{"zstd 2 TiB window", Zstd, append(zstdHeader[:4:4], 0x00, 0xF8, 0x01, 0, 0, 'x')},
		{"zstd 8 MiB of RLE blocks", Zstd, manyRLE},
		{"zstd skippable frame only", Zstd, []byte{0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 1, 2, 3, 4}},
		{"snappy 4 GiB length", Snappy, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x00}},
		{"snappy overlong varint", Snappy, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}},
		{"lz4 endless literal length", LZ4, append([]byte{0xF0}, bytes.Repeat([]byte{0xFF}, 64)...)},
		{"lz4 offset before start", LZ4, []byte{0x1F, 'a', 0xFF, 0xFF, 0x00}},
		{"deflate preset dictionary", Deflate, []byte{0x78, 0xBB, 0x12, 0x34, 0x56, 0x78, 3, 0, 0, 0, 0, 1}},
		{"deflate stored block longer than page", Deflate, deflateStored(32 << 10)},
	}
	// Build the pooled decoder state first, so that only the hostile images
	// are measured.
	page := sysbenchPage(16<<10, 1)
	for _, name := range testCodecs {
		c := mustParse(t, name)
		img, err := c.Compress(nil, page)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Decompress(page, img); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := make([]byte, 16<<10)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := Decompress(tc.id, dst, tc.img)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
			t.Log(err)
			// A corrupt image may cost a block's worth of scratch space
			// (128 KiB for Zstandard), never what it claims.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
				t.Errorf("decoding allocated %d bytes", alloc)
			}
		})
	}
}

// deflateStored returns a zlib stream holding n zero bytes in stored blocks.
func deflateStored(n int) []byte {
	b := []byte{0x78, 0x01}
	for n > 0 {
		k := min(n, 0xFFFF)
		n -= k
		final := byte(0)
		if n == 0 {
			final = 1
		}
		b = append(b, final, byte(k), byte(k>>8), ^byte(k), ^byte(k>>8))
		b = append(b, make([]byte, k)...)
	}
	return append(b, 0, 0, 0, 1) // Adler-32 of n zeros is wrong for n > 0, but never reached
}

func TestDecompressUnknownID(t *testing.T) {
	for _, id := range []ID{6, 42, 255} {
		if err := Decompress(id, make([]byte, 16), make([]byte, 16)); !errors.Is(err, ErrUnknown) {
			t.Errorf("Decompress(%d): err = %v, want ErrUnknown", id, err)
		}
	}
}

func TestMaxPageSize(t *testing.T) {
	page := sysbenchPage(MaxPageSize, 1)
	for _, name := range testCodecs {
		c := mustParse(t, name)
		img, err := c.Compress(nil, page)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := make([]byte, len(page))
		if err := c.Decompress(got, img); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, page) {
			t.Fatalf("%s: page changed", name)
		}
		big := make([]byte, MaxPageSize+1)
		if _, err := c.Compress(nil, big); err == nil {
			t.Errorf("%s: compressed a page over MaxPageSize", name)
		}
		if _, _, err := EncodePage(c, nil, big); err == nil {
			t.Errorf("%s: EncodePage took a page over MaxPageSize", name)
		}
		if err := c.Decompress(big, img); err == nil || errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: decoding into a page over MaxPageSize: err = %v, want a size error", name, err)
		}
	}
}

// TestConcurrent compresses and decompresses with shared codecs from many
// goroutines at once; run it with -race.
func TestConcurrent(t *testing.T) {
	codecs := make([]Codec, len(testCodecs))
	for i, name := range testCodecs {
		codecs[i] = mustParse(t, name)
	}
	const workers, rounds = 16, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var img, got []byte
			for r := range rounds {
				c := codecs[(w+r)%len(codecs)]
				kind := pageKinds[(w*rounds+r)%len(pageKinds)]
				page := kind.make(pageSizes[r%len(pageSizes)], uint64(w*rounds+r))
				var used ID
				var err error
				img, used, err = EncodePage(c, img, page)
				if err != nil {
					t.Error(err)
					return
				}
				got = grow(got, len(page))
				if err := Decompress(used, got, img); err != nil {
					t.Errorf("%s: %v", c, err)
					return
				}
				if !bytes.Equal(got, page) {
					t.Errorf("%s: page changed", c)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in    string
		id    ID
		level int
		str   string
	}{
		{"none", None, 0, "none"},
		{"lz4", LZ4, 0, "lz4"},
		{"lz4hc", LZ4, 9, "lz4hc-9"},
		{"lz4hc-3", LZ4, 3, "lz4hc-3"},
		{"lz4-9", LZ4, 9, "lz4hc-9"},
		{"zstd", Zstd, 0, "zstd"},
		{"zstd-19", Zstd, 19, "zstd-19"},
		{"ZSTD-22", Zstd, 22, "zstd-22"},
		{"deflate", Deflate, 0, "deflate"},
		{"deflate-6", Deflate, 6, "deflate-6"},
		{"zlib-6", Deflate, 6, "deflate-6"},
		{"zlib", Deflate, 0, "deflate"},
		{"snappy", Snappy, 0, "snappy"},
	} {
		c, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if c.ID() != tc.id || c.Level() != tc.level || c.String() != tc.str {
			t.Errorf("Parse(%q) = %s (id %d, level %d), want %s (id %d, level %d)",
				tc.in, c, c.ID(), c.Level(), tc.str, tc.id, tc.level)
		}
	}

	for _, tc := range []struct {
		in   string
		want error
	}{
		{"", ErrUnknown},
		{"lz5", ErrUnknown},
		{"gzip-6", ErrUnknown},
		{"zstd-", ErrLevel},
		{"zstd-0", ErrLevel},
		{"zstd-23", ErrLevel},
		{"zstd--1", ErrLevel},
		{"zstd-+3", ErrLevel},
		{"zstd-3x", ErrLevel},
		{"zstd-99999999999999999999", ErrLevel},
		{"lz4hc-10", ErrLevel},
		{"lz4-0", ErrLevel},
		{"deflate-0", ErrLevel},
		{"deflate-10", ErrLevel},
		{"snappy-1", ErrLevel},
		{"none-1", ErrLevel},
	} {
		if c, err := Parse(tc.in); !errors.Is(err, tc.want) {
			t.Errorf("Parse(%q) = %v, %v; want an error wrapping %v", tc.in, c, err, tc.want)
		}
	}
}

// TestNameRoundTrip checks that Parse reads back every codec's String.
func TestNameRoundTrip(t *testing.T) {
	for id := range ID(10) {
		maxLevel := maxLevel(id)
		for level := -1; level <= maxLevel+1; level++ {
			c, err := New(id, level)
			switch {
			case maxLevel < 0:
				if !errors.Is(err, ErrUnknown) {
					t.Errorf("New(%d, %d): err = %v, want ErrUnknown", id, level, err)
				}
				continue
			case level < 0 || level > maxLevel:
				if !errors.Is(err, ErrLevel) {
					t.Errorf("New(%s, %d): err = %v, want ErrLevel", id, level, err)
				}
				continue
			case err != nil:
				t.Fatalf("New(%s, %d): %v", id, level, err)
			}
			p, err := Parse(c.String())
			if err != nil {
				t.Fatalf("Parse(%q): %v", c, err)
			}
			if p.ID() != id || p.Level() != level || p.String() != c.String() {
				t.Errorf("Parse(%q) = %s level %d, want %s level %d", c, p, p.Level(), c, level)
			}
		}
	}
	if got := ID(9).String(); got != "ID(9)" {
		t.Errorf("ID(9).String() = %q", got)
	}
}

// TestAllocs checks that compressing and decompressing a page allocates
// nothing once the pools are warm and dst has room.
func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under -race")
	}
	page := sysbenchPage(16<<10, 1)
	for _, name := range testCodecs {
		c := mustParse(t, name)
		img := make([]byte, 0, 2*len(page))
		got := make([]byte, len(page))
		roundTrip := func() {
			var err error
			if img, err = c.Compress(img, page); err != nil {
				t.Fatal(err)
			}
			if err := c.Decompress(got, img); err != nil {
				t.Fatal(err)
			}
		}
		// The zstd library hands out its GOMAXPROCS internal encoders and
		// decoders in turn, and each allocates its buffers on first use.
		for range 2 * runtime.GOMAXPROCS(0) {
			roundTrip()
		}
		allocs := testing.AllocsPerRun(100, roundTrip)
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per page, want 0", name, allocs)
		}
	}
}

// FuzzDecompress feeds arbitrary images to Decompress for a 16 KiB page. It
// must return nil or an error wrapping ErrCorrupt (ErrUnknown for an
// unknown ID), and never panic.
func FuzzDecompress(f *testing.F) {
	// The seeds are images of a mostly empty page, a few hundred bytes
	// long: the fuzzer minimizes each new input it finds for up to a
	// minute, and on an input of several KiB that takes the whole minute.
	// For the same reason None, whose only valid image is the 16 KiB page,
	// has no seed; mutating the other seeds' ID byte covers it.
	page := make([]byte, 16<<10)
	copy(page, sysbenchPage(2<<10, 1))
	for _, name := range testCodecs {
		c := mustParse(f, name)
		if c.ID() == None {
			continue
		}
		img, err := c.Compress(nil, page)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(byte(c.ID()), img)
	}
	// A dictionary image: its dictionary is registered, so mutations
	// reach the dictionary decoder.
	d := mustDict(f, [][]byte{eventsPage(4<<10, 1), eventsPage(4<<10, 2)}, 3)
	dc, err := WithDict(mustParse(f, "zstd-1"), d)
	if err != nil {
		f.Fatal(err)
	}
	small := make([]byte, 16<<10)
	copy(small, eventsPage(1<<10, 4))
	dimg, err := dc.Compress(nil, small)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(byte(ZstdDict), dimg)
	// A table dictionary's image: treeless literals coded with its table,
	// so that mutations reach the decoder's treeless path.
	traw, err := TrainTableDict(pagesOf(sysbenchPage, 4<<10, 0, 8), 0, 107)
	if err != nil {
		f.Fatal(err)
	}
	td, err := RegisterDict(traw)
	if err != nil {
		f.Fatal(err)
	}
	tc, err := WithDict(mustParse(f, "zstd-1"), td)
	if err != nil {
		f.Fatal(err)
	}
	small = make([]byte, 16<<10)
	copy(small, sysbenchPage(1<<10, 5))
	timg, err := tc.Compress(nil, small)
	if err != nil {
		f.Fatal(err)
	}
	if literalsType(f, timg) != 3 {
		f.Fatal("the table dictionary's seed image has no treeless literals")
	}
	f.Add(byte(ZstdDict), timg)
	f.Add(byte(Zstd), []byte{0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x50, 0x01, 0x00, 0x00})
	f.Add(byte(Snappy), []byte{0x80, 0x80, 0x01, 0x00})
	f.Add(byte(7), []byte{})
	dst := make([]byte, 16<<10)
	f.Fuzz(func(t *testing.T, id byte, img []byte) {
		err := Decompress(ID(id), dst, img)
		if maxLevel(ID(id)) < 0 && ID(id) != ZstdDict {
			if !errors.Is(err, ErrUnknown) {
				t.Fatalf("unknown id %d: err = %v, want ErrUnknown", id, err)
			}
			return
		}
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: err = %v, want nil or ErrCorrupt", ID(id), err)
		}
	})
}

// benchCodecs are the codecs the benchmarks compare.
var benchCodecs = []string{
	"none", "lz4", "lz4hc-9", "zstd-1", "zstd", "zstd-19", "deflate-1", "deflate", "snappy",
}

func BenchmarkCompress(b *testing.B) {
	page := sysbenchPage(16<<10, 1)
	for _, name := range benchCodecs {
		b.Run(name, func(b *testing.B) {
			c := mustParse(b, name)
			img := make([]byte, 0, 2*len(page))
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if img, err = c.Compress(img, page); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(page))/float64(len(img)), "ratio")
		})
	}
}

func BenchmarkDecompress(b *testing.B) {
	page := sysbenchPage(16<<10, 1)
	for _, name := range benchCodecs {
		b.Run(name, func(b *testing.B) {
			c := mustParse(b, name)
			img, err := c.Compress(nil, page)
			if err != nil {
				b.Fatal(err)
			}
			got := make([]byte, len(page))
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Decompress(got, img); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(page))/float64(len(img)), "ratio")
		})
	}
}

// TestZstdFastLevelsEntropyCodeLiterals: a page of random decimal digits
// (a sysbench leaf filled to the end: no repeated substring, 3.3 bits of
// entropy per byte) has no match for zstd to find, only literals to
// Huffman-code. Every zstd level must do so and compress it about 2×;
// klauspost's fastest levels left such literals raw by default (1.02×).
func TestZstdFastLevelsEntropyCodeLiterals(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	page := make([]byte, 16<<10)
	for i := range page {
		page[i] = '0' + byte(rng.IntN(10))
	}
	for _, name := range []string{"zstd-1", "zstd-2", "zstd", "zstd-9"} {
		out, err := mustParse(t, name).Compress(nil, page)
		if err != nil {
			t.Fatal(err)
		}
		if r := float64(len(page)) / float64(len(out)); r < 1.9 {
			t.Errorf("%s: %d bytes of random digits compressed to %d (%.2f×), want about 2×", name, len(page), len(out), r)
		}
	}
}

package codec

import (
	"bytes"
	"errors"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func BenchmarkDictDecompress(b *testing.B) {
	for _, size := range []int{4 << 10, 16 << 10} {
		var train [][]byte
		for i := range 32 {
			train = append(train, eventsPage(size, uint64(i)))
		}
		d := mustDict(b, train, uint64(size))
		c, err := WithDict(mustParse(b, "zstd-1"), d)
		if err != nil {
			b.Fatal(err)
		}
		page := eventsPage(size, 77)
		img, _ := c.Compress(nil, page)
		dst := make([]byte, size)
		b.Run(map[int]string{4096: "4KiB", 16384: "16KiB"}[size], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := Decompress(ZstdDict, dst, img); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FrameDict agrees with the library's header decoder, on every frame the
// tests make and on mutations of them.
func TestFrameDictMatchesLibrary(t *testing.T) {
	d := mustDict(t, [][]byte{eventsPage(4096, 1), eventsPage(4096, 2)}, 777)
	dc, err := WithDict(mustParse(t, "zstd-1"), d)
	if err != nil {
		t.Fatal(err)
	}
	var frames [][]byte
	for _, size := range []int{0, 100, 4096, 16384} {
		p := eventsPage(max(size, 1), 5)[:size]
		a, _ := dc.Compress(nil, p)
		b, _ := mustParse(t, "zstd").Compress(nil, p)
		frames = append(frames, a, b)
	}
	for _, f := range frames {
		for i := range min(len(f), 12) {
			for bit := range 8 {
				g := bytes.Clone(f)
				g[i] ^= 1 << bit
				frames = append(frames, g)
			}
		}
	}
	for _, f := range frames {
		var h zstd.Header
		herr := h.Decode(f)
		id, err := FrameDict(f)
		if herr == nil && (err != nil || id != h.DictionaryID) {
			t.Fatalf("frame % x: FrameDict %08x, %v; library %08x", f[:min(len(f), 12)], id, err, h.DictionaryID)
		}
	}
	img, _ := dc.Compress(nil, eventsPage(4096, 3))
	if a := testing.AllocsPerRun(100, func() { FrameDict(img) }); a != 0 {
		t.Errorf("FrameDict: %.0f allocations", a)
	}
}

// An empty page compressed with a dictionary decodes back: the encoder
// names no dictionary in the frame of an empty input.
func TestDictEmptyPage(t *testing.T) {
	d := mustDict(t, [][]byte{eventsPage(4096, 8), eventsPage(4096, 9)}, 4242)
	dc, err := WithDict(mustParse(t, "zstd-1"), d)
	if err != nil {
		t.Fatal(err)
	}
	img, err := dc.Compress(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := Decompress(ZstdDict, []byte{}, img); err != nil {
		t.Fatalf("empty page: %v", err)
	}
	if err := Decompress(ZstdDict, make([]byte, 16), img); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("empty frame for a 16-byte page: err = %v, want ErrCorrupt", err)
	}
}

// DictGain measures what a dictionary does: JSON event pages come out
// much smaller with it, random digits not, and both decode times are
// measured.
func TestDictGain(t *testing.T) {
	var train, judge [][]byte
	for i := range 64 {
		p := eventsPage(4096, uint64(1000+i))
		if i%2 == 0 {
			train = append(train, p)
		} else {
			judge = append(judge, p)
		}
	}
	raw, err := TrainDict(train, 0, 0, 31337)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := DictGain(raw, 1, judge)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("events: %.2f× smaller, %.2f× the decode time", tr.SizeRatio(), tr.DecodeRatio())
	if tr.SizeRatio() < 1.15 || tr.PlainDecode <= 0 || tr.DictDecode <= 0 {
		t.Errorf("events trial %+v", tr)
	}
	var digits [][]byte
	for i := range 16 {
		digits = append(digits, sysbenchPage(4096, uint64(i)))
	}
	if tr, err = DictGain(raw, 1, digits); err != nil {
		t.Fatal(err)
	}
	if r := tr.SizeRatio(); r > 1.05 {
		t.Errorf("sysbench pages %.2f× smaller with a dictionary of events", r)
	}
	if _, err := DictGain(raw, 1, [][]byte{make([]byte, MaxPageSize+1)}); err == nil {
		t.Error("a page over MaxPageSize was accepted")
	}
}

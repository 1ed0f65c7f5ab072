package codec

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// CompressLiterals accepts pages from 32 bytes (minCodedLiterals) up; a
// page shorter than 256 bytes got a 2-byte Frame_Content_Size field
// written as uint16(n-256), which wrapped: the header claims 65536+n bytes,
// and every decoder given the frame refused it (a reviewer of 5e5786c).
func TestLiteralFramesShortPagesDecodeBack(t *testing.T) {
	c := tableDictCodec(t, sysbenchPage, 4096, 4711)
	dec, err := zstd.NewReader(nil, zstd.WithDecoderDicts(DictOf(c).raw))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{32, 64, 200, 255, 256, 300} {
		page := make([]byte, n)
		for i := range page {
			page[i] = '0' + byte(rng.IntN(10))
		}
		img, ok := CompressLiterals(c, nil, page)
		if !ok {
			t.Errorf("%d bytes: not coded", n)
			continue
		}
		got := make([]byte, n)
		if err := Decompress(ZstdDict, got, img); err != nil || !bytes.Equal(got, page) {
			t.Errorf("%d bytes: Decompress: %v (header % x)", n, err, img[:min(len(img), 12)])
		}
		if lib, err := dec.DecodeAll(img, nil); err != nil || !bytes.Equal(lib, page) {
			t.Errorf("%d bytes: zstd library: %v (%d bytes)", n, err, len(lib))
		}
	}
}

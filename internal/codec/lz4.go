package codec

import (
	"sync"

	"github.com/pierrec/lz4/v4"
)

// LZ4 compressors carry their hash tables (128 KiB for the fast one, 256 KiB
// for HC, 768 KiB for HC on pages over 64 KiB), too big to allocate per page
// and not safe for concurrent use, so they are pooled. One HC pool serves
// every level: the level is a per-call setting, not part of the state.
var (
	lz4Fast sync.Pool // *lz4.Compressor
	lz4HC   sync.Pool // *lz4.CompressorHC
)

// lz4HCDepth maps levels 1..9 to the LZ4HC search depth.
var lz4HCDepth = [...]lz4.CompressionLevel{
	1: lz4.Level1, lz4.Level2, lz4.Level3, lz4.Level4, lz4.Level5,
	lz4.Level6, lz4.Level7, lz4.Level8, lz4.Level9,
}

// compressLZ4 compresses src as one LZ4 block: with the fast compressor at
// level 0, with LZ4HC otherwise.
func compressLZ4(dst, src []byte, level int) ([]byte, error) {
	// With room for the worst case, the compressors always succeed and
	// never report incompressible input by returning 0.
	dst = grow(dst, lz4.CompressBlockBound(len(src)))
	var n int
	var err error
	if level == 0 {
		c, _ := lz4Fast.Get().(*lz4.Compressor)
		if c == nil {
			c = new(lz4.Compressor)
		}
		n, err = c.CompressBlock(src, dst)
		lz4Fast.Put(c)
	} else {
		c, _ := lz4HC.Get().(*lz4.CompressorHC)
		if c == nil {
			c = new(lz4.CompressorHC)
		}
		c.Level = lz4HCDepth[level]
		n, err = c.CompressBlock(src, dst)
		lz4HC.Put(c)
	}
	if err != nil {
		return nil, err
	}
	return dst[:n], nil
}

// decodeLZ4 decodes an LZ4 block into dst. The block format records no
// length, so the decoder is bounded by dst and must fill it exactly.
func decodeLZ4(dst, src []byte) error {
	n, err := lz4.UncompressBlock(src, dst)
	if err != nil {
		return corrupt(LZ4, "%v", err)
	}
	if n != len(dst) {
		return corrupt(LZ4, "decoded %d bytes, want %d", n, len(dst))
	}
	return nil
}

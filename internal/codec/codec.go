// Package codec compresses and decompresses fixed-size logical pages.
//
// A Codec turns a page into the image that the page store keeps on disk and
// back. Every stored page records the ID of the codec that produced it, so a
// database can change codec and still read its old pages: decoding goes
// through Decompress, which looks the codec up by ID.
//
// Codecs are safe for concurrent use. They keep their encoder and decoder
// state in pools so that compressing or decompressing a page allocates
// nothing in steady state.
package codec

import (
	"errors"
	"fmt"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// ID identifies a compression algorithm on disk. The values are part of the
// on-disk format (docs/FORMAT.md) and must never change.
type ID uint8

// Codec IDs, as stored in every page record.
const (
	None    ID = 0 // stored raw
	LZ4     ID = 1 // LZ4 block format; level > 0 selects LZ4HC
	Zstd    ID = 2 // Zstandard (single frame, no dictionary)
	Deflate ID = 3 // zlib stream (RFC 1950 around RFC 1951), as InnoDB uses
	Snappy  ID = 4 // Snappy block format
	// ZstdDict (5): Zstandard with a dictionary, dict.go.
)

// ErrCorrupt is returned (wrapped) when compressed bytes cannot be decoded
// or decode to the wrong length.
var ErrCorrupt = errors.New("codec: corrupt compressed data")

// ErrUnknown is returned (wrapped) for a codec ID or name this build does not know.
var ErrUnknown = errors.New("codec: unknown codec")

// ErrLevel is returned (wrapped) by New and Parse for a compression level
// that the codec does not support.
var ErrLevel = errors.New("codec: compression level out of range")

// MaxPageSize is the largest page a codec compresses or decompresses.
//
// The bound is there for the decoders: a corrupt image may claim any decoded
// size or window, and the Zstandard decoder would allocate for the claim.
// With pages capped, it refuses such claims up front, and the Zstd encoder
// needs no window larger than a page.
const MaxPageSize = 1 << 20

// Codec compresses pages with one algorithm at one level.
type Codec interface {
	// ID is the algorithm's on-disk identifier.
	ID() ID
	// Level is the compression level the codec was built with (0 = default).
	Level() int
	// String names the codec and its level, e.g. "zstd-3".
	String() string
	// Compress appends the compressed form of src to dst[:0] and returns it.
	// It never fails for valid input; the error exists for codec libraries
	// that report one.
	Compress(dst, src []byte) ([]byte, error)
	// Decompress decodes src into dst, which must be exactly the raw
	// length. It returns an error wrapping ErrCorrupt if src does not
	// decode to exactly len(dst) bytes.
	Decompress(dst, src []byte) error
}

// New returns the codec for id at the given level. Level 0 selects the
// library's default; otherwise the accepted levels are 1..9 for LZ4 (which
// then means LZ4HC with that search depth), 1..22 for Zstd and 1..9 for
// Deflate, while None and Snappy take no level. An unknown id yields an error
// wrapping ErrUnknown, a bad level one wrapping ErrLevel.
//
// Codecs are cheap to create: all codecs of one algorithm share their pooled
// encoder and decoder state. That state is built on first use and is small
// except for Zstd at high levels, which keeps GOMAXPROCS encoders of about
// 5 MiB each at levels 6-9 and 35 MiB at levels 10-22.
func New(id ID, level int) (Codec, error) {
	maxLevel := maxLevel(id)
	switch {
	case id == ZstdDict:
		return nil, fmt.Errorf("%w: %s needs a dictionary: use WithDict on a zstd codec", ErrUnknown, id)
	case maxLevel < 0:
		return nil, errUnknownID(id)
	case maxLevel == 0 && level != 0:
		return nil, fmt.Errorf("%w: %s takes no level, got %d", ErrLevel, id, level)
	case level < 0 || level > maxLevel:
		return nil, fmt.Errorf("%w: %s level %d, want 1..%d (or 0 for the default)",
			ErrLevel, id, level, maxLevel)
	}
	c := &codec{id: id, level: level, name: name(id, level)}
	if id == Zstd {
		var err error
		if c.zstd, err = zstdEncoder(level); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// maxLevel returns the highest level New accepts for id: 0 if the algorithm
// has no levels, -1 if the id is unknown or, for ZstdDict, New cannot make
// it (WithDict does).
func maxLevel(id ID) int {
	switch id {
	case None, Snappy:
		return 0
	case LZ4, Deflate:
		return 9
	case Zstd:
		return 22
	}
	return -1
}

// Decompress decodes src, an image made by a codec with the given id at any
// level, into dst, which must be exactly the raw page length. It returns an
// error wrapping ErrUnknown for an id this build does not know and one
// wrapping ErrCorrupt if src does not decode to exactly len(dst) bytes.
//
// Decoding never depends on the level, so Decompress reads pages written
// with any codec configuration.
func Decompress(id ID, dst, src []byte) error {
	if err := checkPageSize(id, len(dst)); err != nil {
		return err
	}
	switch id {
	case None:
		if len(src) != len(dst) {
			return corrupt(None, "image of %d bytes, want %d", len(src), len(dst))
		}
		copy(dst, src)
		return nil
	case LZ4:
		return decodeLZ4(dst, src)
	case Zstd:
		return decodeZstd(dst, src)
	case ZstdDict:
		return decodeZstdDict(dst, src)
	case Deflate:
		return decodeDeflate(dst, src)
	case Snappy:
		return decodeSnappy(dst, src)
	}
	return errUnknownID(id)
}

// EncodePage compresses page with c into dst (reusing its storage) and
// returns the image and the ID of the codec that produced it, which the
// caller records for Decompress. If c saves less than an eighth of the page,
// EncodePage stores the page raw instead and reports None.
//
// A page that compresses this poorly is better stored raw: the few bytes
// given up cost little space, while every read of a compressed page pays for
// decompression. ZFS (for records) and Pebble (for sstable blocks) apply the
// same 12.5% threshold for the same reason.
func EncodePage(c Codec, dst, page []byte) (out []byte, used ID, err error) {
	if c.ID() != None {
		out, err = c.Compress(dst, page)
		if err != nil {
			return nil, None, err
		}
		if len(out) <= len(page)-len(page)/8 {
			return out, c.ID(), nil
		}
		// Compress may have outgrown dst; keep the larger buffer.
		dst = out
	}
	if err := checkPageSize(None, len(page)); err != nil {
		return nil, None, err
	}
	return append(dst[:0], page...), None, nil
}

// codec implements Codec for every algorithm. The algorithms differ only in
// how they compress: their decoders are reached by ID, through Decompress.
type codec struct {
	id    ID
	level int
	name  string
	zstd  *zstd.Encoder // shared by all Zstd codecs of the same encoder level
}

// ID implements Codec.
func (c *codec) ID() ID { return c.id }

// Level implements Codec.
func (c *codec) Level() int { return c.level }

// String implements Codec.
func (c *codec) String() string { return c.name }

// Compress implements Codec.
func (c *codec) Compress(dst, src []byte) ([]byte, error) {
	if err := checkPageSize(c.id, len(src)); err != nil {
		return nil, err
	}
	switch c.id {
	case None:
		return append(dst[:0], src...), nil
	case LZ4:
		return compressLZ4(dst, src, c.level)
	case Zstd:
		return c.zstd.EncodeAll(src, dst[:0]), nil
	case Deflate:
		return compressDeflate(dst, src, c.level)
	case Snappy:
		return snappy.Encode(dst, src), nil
	}
	return nil, errUnknownID(c.id)
}

// Decompress implements Codec.
func (c *codec) Decompress(dst, src []byte) error {
	return Decompress(c.id, dst, src)
}

// checkPageSize rejects pages larger than MaxPageSize. Such a page is a
// caller's mistake, not corruption, so the error does not wrap ErrCorrupt.
func checkPageSize(id ID, n int) error {
	if n > MaxPageSize {
		return fmt.Errorf("codec: %s: page of %d bytes exceeds MaxPageSize (%d)", id, n, MaxPageSize)
	}
	return nil
}

// errUnknownID reports an ID this build has no codec for.
func errUnknownID(id ID) error {
	return fmt.Errorf("%w: id %d", ErrUnknown, uint8(id))
}

// corrupt returns an error wrapping ErrCorrupt that names the codec and
// says what was wrong with the image.
func corrupt(id ID, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrCorrupt, id, fmt.Sprintf(format, args...))
}

// checkDecoded verifies that a decoder which appends to dst[:0] produced
// exactly len(dst) bytes, and copies them into dst should the decoder have
// reallocated after all: the libraries reuse a buffer that is large enough,
// but the page must end up in the caller's memory whatever they do.
func checkDecoded(id ID, dst, out []byte) error {
	if len(out) != len(dst) {
		return corrupt(id, "decoded %d bytes, want %d", len(out), len(dst))
	}
	if len(out) > 0 && &out[0] != &dst[0] {
		copy(dst, out)
	}
	return nil
}

// grow returns dst resliced to n bytes, allocating only if its capacity is
// too small.
func grow(dst []byte, n int) []byte {
	if cap(dst) < n {
		return make([]byte, n)
	}
	return dst[:n]
}

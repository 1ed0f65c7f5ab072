package codec

import (
	"sync"

	"github.com/klauspost/compress/zstd"
)

// zstdEncoders holds one encoder per encoder level. The library maps zstd's
// 22 levels onto four encoder levels, so codecs whose levels map alike share
// an encoder and its memory: once used, each of its GOMAXPROCS internal
// encoders holds about 0.6 MiB at levels 1-2, 1.3 MiB at 3-5, 5 MiB at 6-9
// and 35 MiB at 10-22. rawLitEncoders are the same for the literal
// rewrite (literals.go): their frames keep their literals raw.
var zstdEncoders, rawLitEncoders sharedEncoders

// sharedEncoders are encoders by encoder level, made on first use.
type sharedEncoders struct {
	sync.Mutex
	m map[zstd.EncoderLevel]*zstd.Encoder
}

// zstdEncoder returns the shared encoder for a zstd level, 0 meaning the
// default level 3.
func zstdEncoder(level int) (*zstd.Encoder, error) { return zstdEncoders.get(level, false) }

// rawLitEncoder returns the shared encoder for a zstd level (0: 3) whose
// frames keep their literals raw, for the literal rewrite to code.
func rawLitEncoder(level int) (*zstd.Encoder, error) { return rawLitEncoders.get(level, true) }

func (se *sharedEncoders) get(level int, rawLits bool) (*zstd.Encoder, error) {
	if level == 0 {
		level = 3
	}
	l := zstd.EncoderLevelFromZstd(level)
	se.Lock()
	defer se.Unlock()
	if e := se.m[l]; e != nil {
		return e, nil
	}
	// EncodeAll is safe for concurrent use and runs each call on one of
	// the encoder's internal encoders. There is one per P, as for the
	// decoder, so that pages compressed in parallel do not queue for one.
	opts := encoderOptions(l, 0, nil)
	if rawLits {
		opts = withRawLiterals(opts)
	}
	e, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		return nil, err
	}
	if se.m == nil {
		se.m = make(map[zstd.EncoderLevel]*zstd.Encoder)
	}
	se.m[l] = e
	return e, nil
}

// encoderOptions are the options of every page encoder at level l, with
// concurrency internal encoders (0: one per P) and, if dict is not nil,
// that dictionary.
func encoderOptions(l zstd.EncoderLevel, concurrency int, dict []byte) []zstd.EOption {
	window := MaxPageSize
	if dict != nil {
		window = dictWindow
	}
	opts := []zstd.EOption{
		zstd.WithEncoderLevel(l),
		zstd.WithEncoderConcurrency(concurrency),
		// The page store checksums every page record (CRC32C); a second
		// checksum would cost 4 bytes and a hash per page for nothing.
		zstd.WithEncoderCRC(false),
		// A window larger than a page is never used, but each encoder
		// would still allocate its history buffer to the window size
		// (8 MiB by default); with a dictionary, see dictWindow.
		zstd.WithWindowSize(window),
		zstd.WithLowerEncoderMem(true),
		// Keep the image well-formed even for an empty page.
		zstd.WithZeroFrames(true),
		// Entropy-code the literals of a block in which no match was
		// found. The library's default for its fastest levels (1-2) is to
		// store such literals raw, which leaves a page of random digits
		// (a sysbench leaf filled to the end, with no zero tail to match)
		// at 1.02× instead of 2.0×; Huffman coding them is what zstd-3
		// does too, and costs about 10 µs per 16 KiB page (docs/PAGESTORE.md).
		zstd.WithAllLitEntropyCompression(true),
	}
	if dict != nil {
		opts = append(opts, zstd.WithEncoderDict(dict))
	}
	return opts
}

// zstdDecoder is the decoder shared by all Zstd codecs; decoding does not
// depend on the level. DecodeAll is safe for concurrent use.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, decoderOptions(0, nil)...)
})

// withRawLiterals adds to encoder options what makes the encoder leave
// every block's literals raw, for the literal rewrite (literals.go) to
// code: blocks with matches (NoEntropyCompression) and without
// (AllLitEntropyCompression off, which encoderOptions turns on).
func withRawLiterals(opts []zstd.EOption) []zstd.EOption {
	return append(opts, zstd.WithNoEntropyCompression(true), zstd.WithAllLitEntropyCompression(false))
}

// decoderOptions are the options of every page decoder, with concurrency
// internal decoders (0: one per P, so concurrent reads do not queue) and,
// if dict is not nil, that dictionary.
func decoderOptions(concurrency int, dict []byte) []zstd.DOption {
	opts := []zstd.DOption{
		zstd.WithDecoderConcurrency(concurrency),
		// DecodeAll writes into the page itself, so low-memory mode would
		// save nothing and cost speed.
		zstd.WithDecoderLowmem(false),
		// Refuse frames claiming more than a page or a larger window
		// before allocating for them.
		zstd.WithDecoderMaxMemory(MaxPageSize),
		// And never decode past the capacity we pass, dst[:0:len(dst)]:
		// a corrupt frame then fails instead of growing the buffer.
		zstd.WithDecodeAllCapLimit(true),
	}
	if dict != nil {
		opts = append(opts, zstd.WithDecoderDicts(dict))
	}
	return opts
}

// decodeZstd decodes a Zstandard frame into dst.
func decodeZstd(dst, src []byte) error {
	d, err := zstdDecoder()
	if err != nil {
		return err
	}
	out, err := d.DecodeAll(src, dst[:0:len(dst)])
	if err != nil {
		return corrupt(Zstd, "%v", err)
	}
	return checkDecoded(Zstd, dst, out)
}

package codec

import "github.com/klauspost/compress/snappy"

// decodeSnappy decodes a Snappy block into dst.
func decodeSnappy(dst, src []byte) error {
	// The block starts with its decoded length. Checking it first means
	// the decoder never allocates for a corrupt, huge claim.
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return corrupt(Snappy, "%v", err)
	}
	if n != len(dst) {
		return corrupt(Snappy, "block holds %d bytes, want %d", n, len(dst))
	}
	// Decode also accepts S2's extensions to the block format, which
	// snappy.Encode never emits. DecodeStrict would reject them, but it
	// is a slower, pure-Go decoder and gains nothing on our own images.
	out, err := snappy.Decode(dst, src)
	if err != nil {
		return corrupt(Snappy, "%v", err)
	}
	return checkDecoded(Snappy, dst, out)
}

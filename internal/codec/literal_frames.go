package codec

import (
	"encoding/binary"
)

// Frames of literals: a page coded with the dictionary's literal table
// alone, without looking for matches.
//
// Compressing a 4 KiB leaf of sysbench rows with zstd-1 and the store's
// table dictionary takes about 19 µs: 13 µs in the encoder (matching, and
// fitting entropy tables to the few sequences it finds) and 6 µs coding
// its literals (rewrite). Those rows are random digits: their compression
// is entropy coding, and the matches zstd finds save about a sixth of the
// image. A frame of literals codes the whole page with the dictionary's
// Huffman table in about 5.5 µs and decodes in 0.85× the time (no
// sequences to execute); on JSON documents, whose compression is matches,
// it is several times larger than zstd's. The buffer pool chooses between
// them by measurement (bufferpool, demote_coding.go).
//
// The frame is a standard Zstandard frame (RFC 8878) of one compressed
// block: its header names the dictionary and the content size (single
// segment, no checksum); the block's literals section is treeless (the
// dictionary's table), four streams from 1 KiB up; its sequences section
// has none, or one for the page's longest run of zero bytes if it is at
// least minZeroMatch long (a leaf's free space): the run's first zero is a literal and the rest a match at
// offset 1, its three codes in RLE mode so that the bitstream holds only
// their extra bits. Any zstd decoder given the dictionary decodes it.
//
// Locks: none; the scratch space comes from the table's pool.

// minZeroMatch is the shortest run of zero bytes coded as a match: a
// sequence costs about eight bytes, a zero coded as a literal at most
// eleven bits.
const minZeroMatch = 24

// CompressLiterals compresses src as a frame of literals (above) with c's
// dictionary, appending to dst[:0]. ok is false, and dst returned as it
// is, if c is not a codec with a dictionary that has a literal table, src
// is shorter than 32 bytes or larger than 64 KiB, or its literals do not
// code smaller than src.
func CompressLiterals(c Codec, dst, src []byte) (out []byte, ok bool) {
	dc, isDict := c.(*dictCodec)
	if !isDict || dc.dict.lit == nil || len(src) < minCodedLiterals || len(src) > maxRewritePage {
		return dst, false
	}
	return dc.dict.lit.literalFrame(dst, src, dc.dict.id)
}

// literalFrame is CompressLiterals with t's table, naming dictID.
func (t *litTable) literalFrame(dst, src []byte, dictID uint32) ([]byte, bool) {
	s := t.pool.Get().(*litScratch)
	defer t.pool.Put(s)
	lits := src
	zs, zl := longestZeroRun(src)
	if zl >= minZeroMatch {
		s.lits = append(append(s.lits[:0], src[:zs+1]...), src[zs+zl:]...)
		lits = s.lits
	} else {
		zl = 0
	}
	streams := 4
	if len(lits) < 1024 {
		streams = 1
	}
	section, ok := s.codeWith(s.enc, 3, streams, lits, nil)
	if !ok {
		return dst, false
	}
	var seqs [16]byte
	seq := append(seqs[:0], 0)
	if zl > 0 {
		seq = zeroRunSequence(seqs[:0], zs+1, zl-1)
	}
	blockLen := len(section) + len(seq)
	if blockLen >= len(src) {
		return dst, false
	}
	out := binary.LittleEndian.AppendUint32(dst[:0], zstdFrameMagic)
	// Frame header descriptor: single segment, a 4-byte dictionary ID,
	// and a content size of 1 byte, 2 bytes (less 256) or 4.
	if n := len(src); n < 256 {
		out = append(out, 1<<5|3) // a 1-byte content size
		out = binary.LittleEndian.AppendUint32(out, dictID)
		out = append(out, byte(n))
	} else if n < 256+1<<16 {
		out = append(out, 1<<6|1<<5|3)
		out = binary.LittleEndian.AppendUint32(out, dictID)
		out = binary.LittleEndian.AppendUint16(out, uint16(n-256))
	} else {
		out = append(out, 2<<6|1<<5|3)
		out = binary.LittleEndian.AppendUint32(out, dictID)
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
	}
	bh := uint32(1) | 2<<1 | uint32(blockLen)<<3 // last, compressed
	out = append(out, byte(bh), byte(bh>>8), byte(bh>>16))
	out = append(out, section...)
	return append(out, seq...), true
}

// longestZeroRun returns the start and length of the longest run of zero
// bytes in b (the first of equal ones).
func longestZeroRun(b []byte) (start, n int) {
	for i := 0; i < len(b); {
		if b[i] != 0 {
			i++
			continue
		}
		j := i + 1
		for j < len(b) && b[j] == 0 {
			j++
		}
		if j-i > n {
			start, n = i, j-i
		}
		i = j
	}
	return start, n
}

// zeroRunSequence appends a sequences section of one sequence: ll
// literals (at least one, the last a zero), then a match of ml bytes (at
// least 3) at offset 1.
func zeroRunSequence(dst []byte, ll, ml int) []byte {
	llCode, llBits, llExtra := lengthCode(llBaselines[:], ll)
	mlCode, mlBits, mlExtra := lengthCode(mlBaselines[:], ml)
	// Offset 1 is Offset_Value 4: code 2, two extra bits of 0 (a value
	// above 3 is a new offset, not a repeat).
	const ofCode, ofBits = 2, 2
	// One sequence; all three codes in RLE mode (1), each given by a
	// byte, in the order literal length, offset, match length.
	dst = append(dst, 1, 1<<6|1<<4|1<<2, llCode, ofCode, mlCode)
	// The bitstream is read backwards: the states (no bits in RLE mode),
	// then the offset's extra bits, the match length's, the literal
	// length's. So they are written in the reverse order, then the end
	// mark.
	acc := uint64(llExtra)
	n := llBits
	acc |= uint64(mlExtra) << n
	n += mlBits
	n += ofBits // value 0
	acc |= 1 << n
	n++
	for i := 0; i < n; i += 8 {
		dst = append(dst, byte(acc>>i))
	}
	return dst
}

// lengthCode returns the code of length v in a baseline table (RFC 8878
// 3.1.1.3.2.1.1), its number of extra bits and their value.
func lengthCode(baselines []lengthBaseline, v int) (code byte, bits int, extra uint32) {
	c := len(baselines) - 1
	for c > 0 && baselines[c].base > v {
		c--
	}
	b := baselines[c]
	return byte(c), int(b.bits), uint32(v - b.base)
}

// lengthBaseline is one code of a length table: the least length it codes
// and the number of extra bits that follow.
type lengthBaseline struct {
	base int
	bits uint8
}

// llBaselines are the literal length codes (Literals_Length_Code 0-35).
var llBaselines = [36]lengthBaseline{
	{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}, {6, 0}, {7, 0},
	{8, 0}, {9, 0}, {10, 0}, {11, 0}, {12, 0}, {13, 0}, {14, 0}, {15, 0},
	{16, 1}, {18, 1}, {20, 1}, {22, 1}, {24, 2}, {28, 2}, {32, 3}, {40, 3},
	{48, 4}, {64, 6}, {128, 7}, {256, 8}, {512, 9}, {1024, 10}, {2048, 11}, {4096, 12},
	{8192, 13}, {16384, 14}, {32768, 15}, {65536, 16},
}

// mlBaselines are the match length codes (Match_Length_Code 0-52).
var mlBaselines = [53]lengthBaseline{
	{3, 0}, {4, 0}, {5, 0}, {6, 0}, {7, 0}, {8, 0}, {9, 0}, {10, 0},
	{11, 0}, {12, 0}, {13, 0}, {14, 0}, {15, 0}, {16, 0}, {17, 0}, {18, 0},
	{19, 0}, {20, 0}, {21, 0}, {22, 0}, {23, 0}, {24, 0}, {25, 0}, {26, 0},
	{27, 0}, {28, 0}, {29, 0}, {30, 0}, {31, 0}, {32, 0}, {33, 0}, {34, 0},
	{35, 1}, {37, 1}, {39, 1}, {41, 1}, {43, 2}, {47, 2}, {51, 3}, {59, 3},
	{67, 4}, {83, 4}, {99, 5}, {131, 7}, {259, 8}, {515, 9}, {1027, 10}, {2051, 11},
	{4099, 12}, {8195, 13}, {16387, 14}, {32771, 15}, {65539, 16},
}

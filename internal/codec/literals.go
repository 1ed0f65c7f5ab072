package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/klauspost/compress/fse"
	"github.com/klauspost/compress/huff0"
	"github.com/klauspost/compress/zstd"
)

// Store-wide literal tables.
//
// A zstd block codes its literals (the bytes no match covers) with a
// Huffman table it describes first. Decoding a 4 KiB page spends about a
// third of its time reading that description: decompressing the weights
// (FSE) and building the decoding table (huff0.ReadTable; docs/BENCHMARKS.md,
// "A store-wide literal table"). Zstandard lets the first block of a frame
// compressed with a dictionary use the dictionary's table instead
// ("treeless" literals, RFC 8878 3.1.1.3.1.1), so a page whose literals
// that table can code is decoded without building one.
//
// The zstd encoder this package uses never writes treeless literals with a
// dictionary (it cannot code with a table it only read). So a dictionary
// codec with a literal table compresses with encoders that leave every
// block's literals raw and codes them itself, once (rewrite): treeless
// with the dictionary's table where that comes within 1/32 of the best a
// table of their own could do (their entropy plus a description, or such
// a table built and measured), else with a table fitted to them, else raw
// (RLE if they are one value). The sequences are kept byte for byte; a raw
// block becomes a compressed block without sequences. The result is a
// standard frame; any zstd decoder given the dictionary decodes it. The
// rewrite codes frames of one block (pages up to maxRewritePage); larger
// pages keep the encoder's own literal coding.
//
// Dictionaries trained here (TrainDict, TrainTableDict) carry a literal
// table in which every byte value has a code, fitted to the literals of
// the sample pages, so that the rewrite applies to nearly every page. A
// table dictionary (TrainTableDict) has no history worth matching (8
// bytes) and the default repeat offsets 1, 4, 8: a frame made without any
// dictionary decodes the same under it, so its codec compresses with the
// plain encoder (no dictionary match tables to copy per page), names the
// dictionary in the frame header and codes the literals.
//
// Every table is verified when a dictionary is registered: the encoding
// table is rebuilt from the dictionary's own description, every symbol's
// code length must be the described one, and a probe of every symbol must
// decode through the description; a dictionary whose table fails is used
// without the rewrite.
//
// Locks: a litTable is immutable once built; its scratch space comes from
// a sync.Pool, one per rewrite in progress.

// zstdDictMagic starts a dictionary in Zstandard's format (little endian).
const zstdDictMagic = 0xEC30A437

// tableDictContent is the history of a table dictionary: the least the
// format allows, and as long as the largest default repeat offset.
const tableDictContent = 8

// defaultRepeatOffsets are the repeat offsets a frame without a dictionary
// starts with (RFC 8878 3.1.2.5).
var defaultRepeatOffsets = [3]int{1, 4, 8}

// litSlack is the share by which a treeless literals section may be
// larger than the best a table of its own could do and still be written:
// a page decoded without building a table costs about a third less time
// to decode.
const litSlack = 32

// litTable is a dictionary's literal table, ready to code with.
type litTable struct {
	enc  huff0.Scratch // holds the table (prevTable); never coded with itself
	pool sync.Pool     // of *litScratch
}

// litScratch is the scratch space of one rewrite.
type litScratch struct {
	enc  *huff0.Scratch // the dictionary's table (ReusePolicyMust)
	own  *huff0.Scratch // a table fitted to the literals at hand
	desc []byte         // own's description
	out  []byte         // the coded section
	lits []byte         // a frame of literals' literals (literal_frames.go)
}

// newLitTable returns the literal table of raw, a dictionary in
// Zstandard's format, or an error if it has none this package can code
// with.
func newLitTable(raw []byte) (*litTable, error) {
	if len(raw) < 9 || binary.LittleEndian.Uint32(raw) != zstdDictMagic {
		return nil, errors.New("not a zstd dictionary")
	}
	desc, err := huffDescription(raw[8:])
	if err != nil {
		return nil, err
	}
	counts, err := dyadicCounts(desc)
	if err != nil {
		return nil, err
	}
	t := &litTable{}
	t.enc.TableLog = huffMaxTableLog
	if err := t.enc.BuildCTable(&counts); err != nil {
		return nil, fmt.Errorf("literal table: %w", err)
	}
	if err := t.verify(desc, &counts); err != nil {
		return nil, err
	}
	t.pool.New = func() any {
		s := &litScratch{enc: &huff0.Scratch{Reuse: huff0.ReusePolicyMust},
			own: &huff0.Scratch{Reuse: huff0.ReusePolicyMust, TableLog: huffMaxTableLog}}
		s.enc.TransferCTable(&t.enc)
		return s
	}
	return t, nil
}

// huffMaxTableLog is the longest Huffman code zstd allows for literals.
const huffMaxTableLog = 11

// huffDescription returns the Huffman table description that b starts
// with (RFC 8878 4.2.1).
func huffDescription(b []byte) ([]byte, error) {
	_, rest, err := huff0.ReadTable(b, nil)
	if err != nil {
		return nil, fmt.Errorf("literal table: %w", err)
	}
	return b[:len(b)-len(rest)], nil
}

// dyadicScale scales dyadic counts up to 2^17 in all (2^11 × 2^6): huff0
// limits the code lengths of a table it builds from fewer counts (a table
// log of 9 from 2048 counts), which would rebuild other lengths.
const dyadicScale = 6

// dyadicCounts returns symbol counts from which a Huffman code gets
// exactly the code lengths a table description gives: 2^(weight-1) for
// each symbol (scaled by 2^dyadicScale), the last symbol's weight implied
// (RFC 8878 4.2.1.1).
func dyadicCounts(desc []byte) ([256]uint32, error) {
	var counts [256]uint32
	var weights []byte
	if hb := int(desc[0]); hb >= 128 {
		n := hb - 127
		if len(desc) < 1+(n+1)/2 {
			return counts, errors.New("literal table: description cut short")
		}
		for i := range n {
			v := desc[1+i/2]
			if i%2 == 0 {
				weights = append(weights, v>>4)
			} else {
				weights = append(weights, v&15)
			}
		}
	} else {
		if len(desc) < 1+hb {
			return counts, errors.New("literal table: description cut short")
		}
		var s fse.Scratch
		s.DecompressLimit = 255
		w, err := fse.Decompress(desc[1:1+hb], &s)
		if err != nil {
			return counts, fmt.Errorf("literal table: weights: %w", err)
		}
		weights = w
	}
	if len(weights) == 0 || len(weights) > 255 {
		return counts, errors.New("literal table: bad number of weights")
	}
	var total uint32 // in units of 2^dyadicScale
	for i, w := range weights {
		if w > huffMaxTableLog {
			return counts, errors.New("literal table: weight too large")
		}
		if w > 0 {
			counts[i] = 1 << (w - 1 + dyadicScale)
			total += 1 << (w - 1)
		}
	}
	if total == 0 {
		return counts, errors.New("literal table: no symbol")
	}
	log := bits.Len32(total) // 2^log > total
	rest := uint32(1)<<log - total
	if log > huffMaxTableLog || rest&(rest-1) != 0 {
		return counts, errors.New("literal table: weights do not complete a code")
	}
	counts[len(weights)] = rest << dyadicScale
	return counts, nil
}

// verify checks that t's code is the one desc describes: the same code
// length for every symbol (read back from t with EstimateSize: 8 of a
// symbol cost exactly 8 × its length in bits, plus 7 rounding bits), which
// fixes the code itself, both sides assigning codes canonically from the
// lengths (RFC 8878 4.2.1.1); then a probe of every symbol coded with t
// must decode through desc. counts are the dyadic counts t was built from.
func (t *litTable) verify(desc []byte, counts *[256]uint32) error {
	// The counts add up to 2^(tableLog+dyadicScale) (dyadicCounts), and
	// a symbol's count is 2^(weight-1+dyadicScale).
	var sum uint32
	for _, c := range counts {
		sum += c
	}
	tableLog := bits.Len32(sum>>dyadicScale) - 1
	for v, c := range counts {
		var h [256]uint32
		h[v] = 8
		got := t.enc.EstimateSize(&h)
		// The description's length for v: tableLog+1-weight, where
		// tableLog is the longest code's length (weight 1).
		want := -1
		if c != 0 {
			want = tableLog + 1 - (bits.Len32(c) - dyadicScale)
		}
		if got != want {
			return fmt.Errorf("literal table: symbol %d coded in %d bits, described as %d", v, got, want)
		}
	}
	var symbols []byte
	for v := range 256 {
		var h [256]uint32
		h[v] = 1
		if t.enc.CanUseTable(&h) {
			symbols = append(symbols, byte(v))
		}
	}
	if len(symbols) < 2 {
		return errors.New("literal table: fewer than two symbols")
	}
	var probe []byte
	for round := range 3 {
		for i := range symbols {
			probe = append(probe, symbols[(i*(round+1)+round)%len(symbols)])
		}
	}
	// Mostly the symbol with the shortest code, so that the probe codes
	// smaller than itself (huff0 refuses to code it otherwise); a table
	// whose codes are all 8 bits or longer fails here, and would save
	// nothing.
	top := 0
	for v, c := range counts {
		if c > counts[top] {
			top = v
		}
	}
	probe = append(probe, bytes.Repeat([]byte{byte(top)}, 64*len(probe))...)
	enc := &huff0.Scratch{Reuse: huff0.ReusePolicyMust}
	enc.TransferCTable(&t.enc)
	out, reused, err := huff0.Compress4X(probe, enc)
	if err != nil || !reused {
		return fmt.Errorf("literal table: probe not coded with the table: %v", err)
	}
	dec, _, err := huff0.ReadTable(desc, nil)
	if err != nil {
		return fmt.Errorf("literal table: %w", err)
	}
	got, err := dec.Decoder().Decompress4X(make([]byte, 0, len(probe)), out)
	if err != nil || !bytes.Equal(got, probe) {
		return fmt.Errorf("literal table: coded probe does not decode back (%v)", err)
	}
	return nil
}

// frameHeaderLen returns the length of the zstd frame header img starts
// with, and its descriptor byte.
func frameHeaderLen(img []byte) (int, byte, error) {
	if len(img) < 6 || binary.LittleEndian.Uint32(img) != zstdFrameMagic {
		return 0, 0, errors.New("not a zstd frame")
	}
	fhd := img[4]
	n := 5
	single := fhd&0x20 != 0
	if !single {
		n++ // window descriptor
	}
	n += [4]int{0, 1, 2, 4}[fhd&3]
	fcs := [4]int{0, 2, 4, 8}[fhd>>6]
	if fhd>>6 == 0 && single {
		fcs = 1
	}
	n += fcs
	if n > len(img) {
		return 0, 0, errors.New("frame header cut short")
	}
	return n, fhd, nil
}

// block is the one block of a frame the raw-literals encoder made, with
// its literals ready to code: a compressed block whose literals are raw,
// or a raw block (all literals, no sequences).
type block struct {
	start int    // offset of the block header (the frame header's length)
	lits  []byte // the literals (aliasing the frame)
	seqs  []byte // the sequences section, copied as it is
}

// noSequences is the sequences section of a block without any.
var noSequences = []byte{0}

// findBlock returns the single block of img, a frame without a checksum,
// if its literals are raw: ok false for anything else (several blocks, an
// RLE block, literals the encoder coded itself).
func findBlock(img []byte) (b block, ok bool) {
	hl, fhd, err := frameHeaderLen(img)
	if err != nil || fhd&0x04 != 0 || hl+3 > len(img) {
		return b, false
	}
	bh := uint32(img[hl]) | uint32(img[hl+1])<<8 | uint32(img[hl+2])<<16
	size := int(bh >> 3)
	if bh&1 == 0 || hl+3+size != len(img) {
		return b, false
	}
	b.start = hl
	content := img[hl+3:]
	switch (bh >> 1) & 3 {
	case 0: // raw block
		b.lits, b.seqs = content, noSequences
		return b, true
	case 2: // compressed block
	default:
		return b, false
	}
	if len(content) < 1 || content[0]&3 != 0 {
		return b, false
	}
	// Raw_Literals_Block header (RFC 8878 3.1.1.3.1.1): 1, 2 or 3 bytes.
	var n, hdr int
	switch (content[0] >> 2) & 3 {
	case 0, 2:
		n, hdr = int(content[0]>>3), 1
	case 1:
		if len(content) < 2 {
			return b, false
		}
		n, hdr = int(content[0]>>4)|int(content[1])<<4, 2
	case 3:
		if len(content) < 3 {
			return b, false
		}
		n, hdr = int(content[0]>>4)|int(content[1])<<4|int(content[2])<<12, 3
	}
	if hdr+n > len(content) {
		return b, false
	}
	b.lits, b.seqs = content[hdr:hdr+n], content[hdr+n:]
	return b, true
}

// literalsHeader appends the header of a Huffman-coded literals section of
// type typ (2: with its table, 3: treeless) in streams (1 or 4).
func literalsHeader(dst []byte, typ, streams, regen, size int) ([]byte, bool) {
	switch {
	case streams == 1:
		if regen >= 1024 || size >= 1024 {
			return dst, false
		}
		v := uint32(typ) | uint32(regen)<<4 | uint32(size)<<14
		return append(dst, byte(v), byte(v>>8), byte(v>>16)), true
	case regen < 1024 && size < 1024:
		v := uint32(typ) | 1<<2 | uint32(regen)<<4 | uint32(size)<<14
		return append(dst, byte(v), byte(v>>8), byte(v>>16)), true
	case regen < 1<<14 && size < 1<<14:
		v := uint32(typ) | 2<<2 | uint32(regen)<<4 | uint32(size)<<18
		return binary.LittleEndian.AppendUint32(dst, v), true
	case regen < 1<<18 && size < 1<<18:
		v := uint64(typ) | 3<<2 | uint64(regen)<<4 | uint64(size)<<22
		return append(binary.LittleEndian.AppendUint32(dst, uint32(v)), byte(v>>32)), true
	}
	return dst, false
}

// maxBlockSize is zstd's largest block (Block_Maximum_Size is at most
// 128 KiB, and at most the window).
const maxBlockSize = 128 << 10

// rewrite returns img, a frame the raw-literals encoder made of srcLen
// bytes, with its literals Huffman-coded: with t's table (treeless) where
// that comes out at most 1/litSlack larger than with a table of their own,
// else with their own; and, if dictID is not 0, with dictID named in its
// header (img must name none: a table dictionary's frames). A rewritten
// block stays smaller than srcLen (as the encoder keeps a compressed
// block; a single-segment frame's window is its content) and within
// maxBlockSize; a frame the rewrite does not apply to is kept as it is.
// The result is appended to dst[:0]; dst must not overlap img.
func (t *litTable) rewrite(dst, img []byte, dictID uint32, srcLen int) []byte {
	out := dst[:0]
	head := img
	var b block
	var lits []byte
	if t != nil {
		var ok bool
		if b, ok = findBlock(img); ok {
			s := t.pool.Get().(*litScratch)
			defer t.pool.Put(s)
			lits, ok = s.code(b.lits)
			blockLen := len(lits) + len(b.seqs)
			if !ok || blockLen >= srcLen || blockLen > maxBlockSize {
				lits = nil
			}
		}
	}
	if lits != nil {
		head = img[:b.start]
	}
	if dictID != 0 {
		hl, fhd, err := frameHeaderLen(img)
		if err != nil || fhd&3 != 0 {
			// Not a frame the plain encoder makes: leave it whole (the
			// caller checks the dictionary ID it names).
			return append(out, img...)
		}
		wd := 5
		if fhd&0x20 == 0 {
			wd = 6
		}
		out = append(out, img[:4]...)
		out = append(out, fhd|3) // a 4-byte dictionary ID
		out = append(out, img[5:wd]...)
		out = binary.LittleEndian.AppendUint32(out, dictID)
		out = append(out, img[wd:hl]...)
		head = head[hl:]
	}
	out = append(out, head...)
	if lits == nil {
		return out
	}
	blockLen := len(lits) + len(b.seqs)
	bh := uint32(1) | 2<<1 | uint32(blockLen)<<3
	out = append(out, byte(bh), byte(bh>>8), byte(bh>>16))
	out = append(out, lits...)
	return append(out, b.seqs...)
}

// minCodedLiterals is the fewest literals worth a Huffman code (the
// encoder's own threshold).
const minCodedLiterals = 32

// entropy returns the Shannon bound, in bytes, of n literals counted in
// hist.
func entropy(hist *[256]uint32, n int) float64 {
	var sum float64
	for _, c := range hist {
		if c > 0 {
			sum += float64(c) * math.Log2(float64(c))
		}
	}
	return (float64(n)*math.Log2(float64(n)) - sum) / 8
}

// code returns a coded literals section (header included, in s.out) for
// lits: RLE if they are one byte value; else treeless with the scratch's
// table where its estimated size is within 1/litSlack of the literals'
// entropy plus a description's estimated size (no table of their own
// could be smaller), or within 1/litSlack of a table fitted to lits (its
// description included); else with that fitted table; ok false where
// nothing codes them smaller than raw.
func (s *litScratch) code(lits []byte) (section []byte, ok bool) {
	if len(lits) < minCodedLiterals {
		return nil, false
	}
	var hist [256]uint32
	for _, c := range lits {
		hist[c]++
	}
	symbols := 0
	for _, c := range hist {
		if c != 0 {
			symbols++
		}
	}
	if symbols == 1 {
		s.out = append(literalsSizeHeader(s.out[:0], 1, len(lits)), lits[0])
		return s.out, true
	}
	streams, jump := 4, 6 // four streams and their jump table
	if len(lits) < 1024 {
		streams, jump = 1, 0 // as the encoder codes few literals
	}
	rawLen := len(literalsSizeHeader(s.out[:0], 0, len(lits))) + len(lits)
	treeSize := s.enc.EstimateSize(&hist)
	// A fitted table's description takes about half a byte a symbol.
	treeless := treeSize >= 0 && float64(treeSize) <= (entropy(&hist, len(lits))+float64(symbols/2))*(1+1.0/litSlack)
	ownReady := false
	if !treeless {
		ownReady = s.fitOwn(&hist)
		if ownReady {
			ownSize := s.own.EstimateSize(&hist) + len(s.desc) + jump
			treeless = treeSize >= 0 && treeSize+jump <= ownSize+ownSize/litSlack
		} else {
			treeless = treeSize >= 0
		}
	}
	if treeless {
		if out, ok := s.codeWith(s.enc, 3, streams, lits, nil); ok && len(out) < rawLen {
			return out, true
		}
		ownReady = ownReady || s.fitOwn(&hist)
	}
	if !ownReady {
		return nil, false
	}
	if out, ok := s.codeWith(s.own, 2, streams, lits, s.desc); ok && len(out) < rawLen {
		return out, true
	}
	return nil, false
}

// fitOwn builds in s.own a table fitted to hist and its description in
// s.desc; false if huff0 cannot (one symbol, or a description it cannot
// write).
func (s *litScratch) fitOwn(hist *[256]uint32) bool {
	if err := s.own.BuildCTable(hist); err != nil {
		return false
	}
	desc, err := s.own.AppendTable(s.desc[:0])
	if err != nil {
		return false
	}
	s.desc = desc
	return true
}

// codeWith codes lits with enc's table into a section of type typ (2:
// desc, the table's description, leads the streams; 3: treeless) in s.out.
func (s *litScratch) codeWith(enc *huff0.Scratch, typ, streams int, lits, desc []byte) ([]byte, bool) {
	var coded []byte
	var err error
	if streams == 1 {
		coded, _, err = huff0.Compress1X(lits, enc)
	} else {
		coded, _, err = huff0.Compress4X(lits, enc)
	}
	if err != nil {
		return nil, false // incompressible with that table
	}
	out, ok := literalsHeader(s.out[:0], typ, streams, len(lits), len(desc)+len(coded))
	if !ok {
		return nil, false
	}
	out = append(out, desc...)
	out = append(out, coded...)
	s.out = out
	return out, true
}

// literalsSizeHeader appends the header of a raw (typ 0) or RLE (typ 1)
// literals section of n literals (RFC 8878 3.1.1.3.1.1).
func literalsSizeHeader(dst []byte, typ, n int) []byte {
	switch {
	case n < 32:
		return append(dst, byte(typ)|byte(n)<<3)
	case n < 4096:
		return append(dst, byte(typ)|1<<2|byte(n)<<4, byte(n>>4))
	default:
		return append(dst, byte(typ)|3<<2|byte(n)<<4, byte(n>>4), byte(n>>12))
	}
}

// literalCounts counts the literals enc (an encoder that leaves them raw)
// leaves in samples, plus one of every byte value, so that a table fitted
// to them codes any page; n is how many samples had literals counted.
// Literals too evenly spread to code (random bytes: within 1/8 of 8 bits a
// byte) are not counted: no table codes them, and they would flatten the
// table for those it does.
func literalCounts(samples [][]byte, enc *zstd.Encoder) (counts [256]uint32, n int) {
	for i := range counts {
		counts[i] = 1
	}
	var img []byte
	for _, p := range samples {
		img = enc.EncodeAll(p, img[:0])
		b, ok := findBlock(img)
		if !ok || len(b.lits) < minCodedLiterals {
			continue
		}
		var hist [256]uint32
		for _, c := range b.lits {
			hist[c]++
		}
		if entropy(&hist, len(b.lits)) >= float64(len(b.lits))*7/8 {
			continue
		}
		for c, k := range hist {
			counts[c] += k
		}
		n++
	}
	return counts, n
}

// withLiteralTable returns raw, a dictionary in Zstandard's format, with
// its literal table replaced by one fitted to counts.
func withLiteralTable(raw []byte, counts *[256]uint32) ([]byte, error) {
	if len(raw) < 9 || binary.LittleEndian.Uint32(raw) != zstdDictMagic {
		return nil, errors.New("not a zstd dictionary")
	}
	old, err := huffDescription(raw[8:])
	if err != nil {
		return nil, err
	}
	desc, err := describeTable(counts)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(raw)-len(old)+len(desc))
	out = append(out, raw[:8]...)
	out = append(out, desc...)
	out = append(out, raw[8+len(old):]...)
	if _, err := newLitTable(out); err != nil {
		return nil, err
	}
	return out, nil
}

// describeTable returns the description of a Huffman table fitted to
// counts.
func describeTable(counts *[256]uint32) ([]byte, error) {
	var s huff0.Scratch
	s.TableLog = huffMaxTableLog
	if err := s.BuildCTable(counts); err != nil {
		return nil, fmt.Errorf("literal table: %w", err)
	}
	desc, err := s.AppendTable(nil)
	if err != nil {
		return nil, fmt.Errorf("literal table: %w", err)
	}
	return desc, nil
}

// isTableDict reports whether a dictionary is a table dictionary: no
// history to match, the default repeat offsets.
func isTableDict(raw []byte) bool {
	info, err := zstd.InspectDictionary(raw)
	return err == nil && info.ContentSize() <= tableDictContent && info.Offsets() == defaultRepeatOffsets
}

// withDefaultRepeatOffsets returns raw, a dictionary in Zstandard's
// format, with its repeat offsets set to the defaults of a frame without
// a dictionary.
func withDefaultRepeatOffsets(raw []byte) ([]byte, error) {
	info, err := zstd.InspectDictionary(raw)
	if err != nil {
		return nil, err
	}
	off := len(raw) - info.ContentSize() - 12
	if off < 8 {
		return nil, errors.New("dictionary too short for its content")
	}
	out := bytes.Clone(raw)
	for i, v := range defaultRepeatOffsets {
		binary.LittleEndian.PutUint32(out[off+4*i:], uint32(v))
	}
	return out, nil
}

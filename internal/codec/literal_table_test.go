package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// literalsType returns the Literals_Block_Type of a one-block frame (0 raw,
// 1 RLE, 2 compressed with its own table, 3 treeless), or -1.
func literalsType(tb testing.TB, img []byte) int {
	tb.Helper()
	hl, _, err := frameHeaderLen(img)
	if err != nil || hl+4 > len(img) {
		return -1
	}
	if bh := img[hl]; bh&1 == 0 || (bh>>1)&3 != 2 {
		return -1
	}
	return int(img[hl+3] & 3)
}

// pagesOf makes n pages of a kind, seeds from first on.
func pagesOf(mk func(int, uint64) []byte, size, first, n int) [][]byte {
	var ps [][]byte
	for i := range n {
		ps = append(ps, mk(size, uint64(first+i)))
	}
	return ps
}

// mustRegister registers raw and fails the test if it cannot.
func mustRegister(tb testing.TB, raw []byte, err error) *Dict {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	d, err := RegisterDict(raw)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// checkRoundTrip compresses each page with c, decodes it back through
// Decompress and through a plain zstd decoder given the dictionary, and
// returns how many frames had treeless literals.
func checkRoundTrip(t *testing.T, c Codec, d *Dict, pages [][]byte) (treeless int) {
	t.Helper()
	std, err := zstd.NewReader(nil, zstd.WithDecoderDicts(d.raw))
	if err != nil {
		t.Fatal(err)
	}
	defer std.Close()
	for i, p := range pages {
		img, err := c.Compress(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		if literalsType(t, img) == 3 {
			treeless++
		}
		out := make([]byte, len(p))
		if err := Decompress(c.ID(), out, img); err != nil || !bytes.Equal(out, p) {
			t.Fatalf("page %d: decoded wrong (err %v)", i, err)
		}
		// A standard decoder with the dictionary reads the frame too:
		// the rewrite makes standard zstd, not a format of our own.
		if got, err := std.DecodeAll(img, nil); err != nil || !bytes.Equal(got, p) {
			t.Fatalf("page %d: the library's own decoder read it wrong (err %v)", i, err)
		}
	}
	return treeless
}

// A table dictionary trained on pages of random-digit rows codes the
// literals of other such pages with its own table: their frames are
// treeless (no Huffman description to read when decoding), name the
// dictionary, decode back exactly, and are no larger in all than without.
func TestTableDictWritesTreelessLiterals(t *testing.T) {
	const size = 4 << 10
	raw, err := TrainTableDict(pagesOf(sysbenchPage, size, 0, 64), 0, 41)
	d := mustRegister(t, raw, err)
	if !d.Table() || d.lit == nil {
		t.Fatalf("table dictionary: Table %v, literal table %v", d.Table(), d.lit != nil)
	}
	plain := mustParse(t, "zstd-1")
	c, err := WithDict(plain, d)
	if err != nil {
		t.Fatal(err)
	}
	pages := pagesOf(sysbenchPage, size, 1000, 100)
	if n := checkRoundTrip(t, c, d, pages); n < 95 {
		t.Fatalf("%d of %d frames treeless, want nearly all", n, len(pages))
	}
	var plainBytes, dictBytes int
	for _, p := range pages {
		pi, _ := plain.Compress(nil, p)
		di, _ := c.Compress(nil, p)
		id, err := FrameDict(di)
		if err != nil || id != d.ID() {
			t.Fatalf("frame names dictionary %08x (err %v), want %08x", id, err, d.ID())
		}
		plainBytes += len(pi)
		dictBytes += len(di)
	}
	if float64(dictBytes) > 1.02*float64(plainBytes) {
		t.Fatalf("pages take %d bytes with the table, %d without", dictBytes, plainBytes)
	}
}

// A dictionary with a history (TrainDict) carries a literal table that
// codes every byte value: JSON pages compressed with it get treeless
// literals as well as the history's matches.
func TestHistoryDictWritesTreelessLiterals(t *testing.T) {
	const size = 4 << 10
	raw, err := TrainDict(pagesOf(eventsPage, size, 0, 64), 0, 0, 43)
	d := mustRegister(t, raw, err)
	if d.Table() || d.lit == nil {
		t.Fatalf("history dictionary: Table %v, literal table %v", d.Table(), d.lit != nil)
	}
	c, err := WithDict(mustParse(t, "zstd-1"), d)
	if err != nil {
		t.Fatal(err)
	}
	pages := pagesOf(eventsPage, size, 2000, 100)
	if n := checkRoundTrip(t, c, d, pages); n < 50 {
		t.Fatalf("%d of %d frames treeless", n, len(pages))
	}
}

// Frames without literals to code pass through the table dictionary's
// codec as the plain encoder makes them but for the dictionary's ID: an
// empty page, zeros (no literals), random bytes (incompressible). Literals
// the table codes much longer than a table of their own get their own.
func TestRewriteLeavesOtherFrames(t *testing.T) {
	const size = 4 << 10
	raw, err := TrainTableDict(pagesOf(sysbenchPage, size, 0, 64), 0, 47)
	d := mustRegister(t, raw, err)
	c, err := WithDict(mustParse(t, "zstd-1"), d)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := zstdEncoder(1)
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string][]byte{"empty": {}, "zero": make([]byte, size), "random": randomPage(size, 3)} {
		img, err := c.Compress(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		plain := enc.EncodeAll(p, nil)
		hl, _, err := frameHeaderLen(plain)
		if err != nil {
			t.Fatal(err)
		}
		ihl, _, err := frameHeaderLen(img)
		if err != nil {
			t.Fatal(err)
		}
		if id, _ := FrameDict(img); id != d.ID() || ihl != hl+4 || !bytes.Equal(img[ihl:], plain[hl:]) {
			t.Errorf("%s: not the plain frame with the dictionary named (ID %08x, header %d bytes, plain %d)", name, id, ihl, hl)
		}
		out := make([]byte, len(p))
		if err := Decompress(ZstdDict, out, img); err != nil || !bytes.Equal(out, p) {
			t.Fatalf("%s: decoded wrong (err %v)", name, err)
		}
	}
	// Random digits 0-3 only: their own table codes them in 2 bits, the
	// store's (fitted to all ten) in 3 or 4.
	rng := rand.New(rand.NewPCG(5, 5))
	skewed := make([]byte, size)
	for i := range skewed {
		skewed[i] = '0' + byte(rng.IntN(4))
	}
	// The encoder leaves them raw; the rewrite fits them a table.
	renc, err := rawLitEncoder(1)
	if err != nil {
		t.Fatal(err)
	}
	if typ := literalsType(t, renc.EncodeAll(skewed, nil)); typ != 0 {
		t.Fatalf("skewed digits: the encoder left literals of type %d, want 0 (raw)", typ)
	}
	img, err := c.Compress(nil, skewed)
	if err != nil {
		t.Fatal(err)
	}
	if typ := literalsType(t, img); typ != 2 {
		t.Errorf("skewed digits: literals of type %d, want 2 (a table of their own)", typ)
	}
	if plain := enc.EncodeAll(skewed, nil); len(img) > len(plain)+4+len(plain)/32 {
		t.Errorf("skewed digits: %d bytes, the plain encoder's frame %d", len(img), len(plain))
	}
	out := make([]byte, len(skewed))
	if err := Decompress(ZstdDict, out, img); err != nil || !bytes.Equal(out, skewed) {
		t.Fatalf("skewed digits: decoded wrong (err %v)", err)
	}
}

// A literal table is used only if the code rebuilt from the dictionary's
// description decodes through that description: checked against another
// dictionary's description, verification fails.
func TestLiteralTableVerified(t *testing.T) {
	const size = 4 << 10
	digits, err := TrainTableDict(pagesOf(sysbenchPage, size, 0, 64), 0, 53)
	if err != nil {
		t.Fatal(err)
	}
	events, err := TrainTableDict(pagesOf(eventsPage, size, 0, 64), 0, 59)
	if err != nil {
		t.Fatal(err)
	}
	lt, err := newLitTable(digits)
	if err != nil {
		t.Fatal(err)
	}
	descDigits, err := huffDescription(digits[8:])
	if err != nil {
		t.Fatal(err)
	}
	descEvents, err := huffDescription(events[8:])
	if err != nil {
		t.Fatal(err)
	}
	counts, err := dyadicCounts(descDigits)
	if err != nil {
		t.Fatal(err)
	}
	if err := lt.verify(descDigits, &counts); err != nil {
		t.Fatalf("own description: %v", err)
	}
	if err := lt.verify(descEvents, &counts); err == nil {
		t.Fatal("another dictionary's description verified")
	}
	// A damaged description fails to load (RegisterDict, which reads it
	// with the library's own decoder, refuses such a dictionary anyway).
	bad := bytes.Clone(digits)
	bad[8] = 0x7f
	if _, err := newLitTable(bad); err == nil {
		t.Fatal("damaged description loaded")
	}
}

// The rewrite writes the size formats of a literals section (RFC 8878
// 3.1.1.3.1.1) that the encoder's frames have: one stream with 10-bit
// sizes, four with 14 and 18 (the encoder codes fewer than 1024 literals
// in one stream, so four with 10-bit sizes never arise), and pages of
// every size decode back.
func TestRewriteSizeFormats(t *testing.T) {
	raw, err := TrainTableDict(pagesOf(sysbenchPage, 16<<10, 0, 32), 0, 73)
	d := mustRegister(t, raw, err)
	c, err := WithDict(mustParse(t, "zstd-1"), d)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[2]int]bool{}
	for _, size := range []int{600, 1 << 10, 2 << 10, 4 << 10, 16 << 10, 32 << 10, 64 << 10} {
		pages := pagesOf(sysbenchPage, size, 100, 8)
		checkRoundTrip(t, c, d, pages)
		for _, p := range pages {
			img, err := c.Compress(nil, p)
			if err != nil {
				t.Fatal(err)
			}
			if literalsType(t, img) != 3 {
				continue
			}
			hl, _, _ := frameHeaderLen(img)
			b := img[hl+3]
			seen[[2]int{int(b >> 2 & 3), size}] = true
		}
	}
	formats := map[int]bool{}
	for k := range seen {
		formats[k[0]] = true
	}
	for _, sf := range []int{0, 2, 3} {
		if !formats[sf] {
			t.Errorf("no treeless section with size format %d (seen: %v)", sf, seen)
		}
	}
}

// A rewritten block stays smaller than the page it holds (a frame that
// would not is kept as the encoder made it).
func TestRewriteKeepsBlockUnderPage(t *testing.T) {
	raw, err := TrainTableDict(pagesOf(sysbenchPage, 4<<10, 0, 32), 0, 79)
	d := mustRegister(t, raw, err)
	enc, err := rawLitEncoder(1)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, p := range pagesOf(sysbenchPage, 4<<10, 200, 20) {
		img := enc.EncodeAll(p, nil)
		b, ok := findBlock(img)
		if !ok {
			continue
		}
		coded := d.lit.rewrite(nil, img, 0, len(p))
		if literalsType(t, coded) != 3 {
			continue
		}
		blockLen := len(coded) - b.start - 3
		// Told the page is no larger than that block, the rewrite keeps
		// the frame; one byte larger, it codes it.
		if out := d.lit.rewrite(nil, img, 0, blockLen); !bytes.Equal(out, img) {
			t.Fatalf("a block of %d bytes written for a page of as many", blockLen)
		}
		if out := d.lit.rewrite(nil, img, 0, blockLen+1); !bytes.Equal(out, coded) {
			t.Fatalf("a block of %d bytes not written for a page of %d", blockLen, blockLen+1)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no frame rewritten")
	}
}

// Pages without literals worth coding (random bytes: too evenly spread;
// zeros: none) train no table dictionary, and random pages still train a
// dictionary (with the library's own literal table, which is not
// rewritten with). Zero pages train none: the library refuses samples
// without literals, as before the literal table.
func TestTrainingWithoutLiterals(t *testing.T) {
	random := pagesOf(randomPage, 4<<10, 0, 16)
	raw, err := TrainDict(random, 0, 0, 83)
	if err != nil {
		t.Fatalf("random pages: TrainDict: %v", err)
	}
	if _, err := RegisterDict(raw); err != nil {
		t.Fatalf("random pages: the dictionary does not register: %v", err)
	}
	for name, samples := range map[string][][]byte{
		"random": random, "zero": pagesOf(func(size int, _ uint64) []byte { return make([]byte, size) }, 4<<10, 0, 16),
	} {
		if _, err := TrainTableDict(samples, 0, 89); err == nil {
			t.Errorf("%s: a table dictionary trained with no literals to fit", name)
		}
	}
}

// Pages compressed and decoded with one table dictionary from many
// goroutines at once (the pooled scratch spaces; run with -race) come
// back exactly.
func TestTableDictConcurrent(t *testing.T) {
	raw, err := TrainTableDict(pagesOf(sysbenchPage, 4<<10, 0, 32), 0, 97)
	d := mustRegister(t, raw, err)
	c, err := WithDict(mustParse(t, "zstd-1"), d)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for _, p := range pagesOf(sysbenchPage, 4<<10, 300+g*20, 20) {
				img, err := c.Compress(nil, p)
				if err != nil {
					errs <- err
					return
				}
				out := make([]byte, len(p))
				if err := Decompress(ZstdDict, out, img); err != nil || !bytes.Equal(out, p) {
					errs <- fmt.Errorf("decoded wrong (err %v)", err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if d.Memory(1) >= DictMemory(1) {
		t.Errorf("a table dictionary is charged %d bytes, a history dictionary %d", d.Memory(1), DictMemory(1))
	}
}

// rawBlockFrame returns a frame of one raw block holding content, as the
// encoder makes of a page it cannot compress.
func rawBlockFrame(content []byte) []byte {
	img := binary.LittleEndian.AppendUint32(nil, zstdFrameMagic)
	img = append(img, 0x20|2<<6) // single segment, 4-byte content size
	img = binary.LittleEndian.AppendUint32(img, uint32(len(content)))
	bh := uint32(1) | uint32(len(content))<<3 // last, raw
	img = append(img, byte(bh), byte(bh>>8), byte(bh>>16))
	return append(img, content...)
}

// A raw block becomes a compressed block without sequences: its literals
// Huffman-coded (with the store's table or one of their own), or as one
// RLE byte where they are all one value; both decode back through the
// dictionary.
func TestRewriteCodesRawBlocks(t *testing.T) {
	raw, err := TrainTableDict(pagesOf(digitsPage, 4<<10, 0, 32), 0, 101)
	d := mustRegister(t, raw, err)
	digits := digitsPage(4<<10, 99)
	for name, c := range map[string]struct {
		content []byte
		types   string
	}{"digits": {digits, "23"}, "one value": {bytes.Repeat([]byte{'7'}, 3000), "1"}} {
		img := d.lit.rewrite(nil, rawBlockFrame(c.content), d.ID(), len(c.content))
		if typ := literalsType(t, img); typ < 0 || !strings.Contains(c.types, fmt.Sprint(typ)) {
			t.Errorf("%s: literals of type %d, want one of %s", name, typ, c.types)
		}
		if len(img) >= len(c.content) {
			t.Errorf("%s: %d bytes for %d", name, len(img), len(c.content))
		}
		out := make([]byte, len(c.content))
		if err := Decompress(ZstdDict, out, img); err != nil || !bytes.Equal(out, c.content) {
			t.Fatalf("%s: decoded wrong (err %v)", name, err)
		}
	}
}

// digitsPage returns a page of random digits to the end: no zero tail,
// few matches.
func digitsPage(size int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 11))
	p := make([]byte, size)
	for i := range p {
		p[i] = '0' + byte(rng.IntN(10))
	}
	return p
}

// Pages of digits with no zero tail to match (their literals coded by the
// rewrite: the encoder leaves them raw), and pages larger than the
// encoder's block (which the rewrite leaves to the encoder's own coding),
// compress with the table dictionary about as small as without it and
// decode back.
func TestTableDictNoMatchesAndLargePages(t *testing.T) {
	raw, err := TrainTableDict(pagesOf(sysbenchPage, 4<<10, 0, 32), 0, 103)
	d := mustRegister(t, raw, err)
	plain := mustParse(t, "zstd-1")
	c, err := WithDict(plain, d)
	if err != nil {
		t.Fatal(err)
	}
	full := digitsPage(4<<10, 7)
	big := bytes.Repeat(sysbenchPage(64<<10, 5), 2)
	copy(big[64<<10:], sysbenchPage(64<<10, 6))
	for name, p := range map[string][]byte{"no matches": full, "128 KiB": big} {
		img, err := c.Compress(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		pi, err := plain.Compress(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(img) > len(pi)+len(pi)/32+8 {
			t.Errorf("%s: %d bytes with the table dictionary, %d without", name, len(img), len(pi))
		}
		if typ := literalsType(t, img); name == "no matches" && typ != 2 && typ != 3 {
			t.Errorf("%s: literals of type %d, want them coded", name, typ)
		}
		out := make([]byte, len(p))
		if err := Decompress(ZstdDict, out, img); err != nil || !bytes.Equal(out, p) {
			t.Fatalf("%s: decoded wrong (err %v)", name, err)
		}
	}
}

// FuzzLiteralRewrite: pages of any content compressed with a table
// dictionary and with a history dictionary decode back exactly, and the
// rewrite given arbitrary bytes as a frame never panics.
func FuzzLiteralRewrite(f *testing.F) {
	const size = 4 << 10
	raw, err := TrainTableDict(pagesOf(sysbenchPage, size, 0, 32), 0, 61)
	table := mustRegister(f, raw, err)
	raw, err = TrainDict(pagesOf(eventsPage, size, 0, 32), 0, 0, 67)
	hist := mustRegister(f, raw, err)
	var codecs []Codec
	for _, d := range []*Dict{table, hist} {
		c, err := WithDict(mustParse(f, "zstd-1"), d)
		if err != nil {
			f.Fatal(err)
		}
		codecs = append(codecs, c)
	}
	f.Add(sysbenchPage(1<<10, 1))
	f.Add(eventsPage(1<<10, 2))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, page []byte) {
		if len(page) > MaxPageSize {
			return
		}
		for _, c := range codecs {
			img, err := c.Compress(nil, page)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]byte, len(page))
			if err := Decompress(ZstdDict, out, img); err != nil || !bytes.Equal(out, page) {
				t.Fatalf("%s: decoded wrong (err %v)", c, err)
			}
		}
		table.lit.rewrite(nil, page, table.ID(), len(page))
		hist.lit.rewrite(nil, page, 0, len(page))
	})
}

// FuzzLiteralTable: a dictionary's literal table, however damaged, loads
// or fails with an error; never a panic.
func FuzzLiteralTable(f *testing.F) {
	raw, err := TrainTableDict(pagesOf(sysbenchPage, 4<<10, 0, 16), 0, 71)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add(raw[:12])
	f.Fuzz(func(t *testing.T, raw []byte) {
		_, _ = newLitTable(raw)
	})
}

package sysbench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"regexp"
	"sync"
	"testing"
)

var (
	cValueRE   = regexp.MustCompile(`^[0-9]{11}(-[0-9]{11}){9}$`)
	padValueRE = regexp.MustCompile(`^[0-9]{11}(-[0-9]{11}){4}$`)
)

func genRow(g *Generator, id uint64) Row {
	var r Row
	g.Row(id, &r)
	return r
}

func TestRowDeterministic(t *testing.T) {
	const seed, size = 7, 100_000
	g1 := NewGenerator(seed, size)
	g2 := NewGenerator(seed, size)

	// Forward order on g1.
	want := make([]Row, 2000)
	for i := range want {
		want[i] = genRow(g1, uint64(i+1))
	}
	// Random order, reusing one Row with stale contents, on g2.
	rng := rand.New(rand.NewPCG(1, 2))
	var r Row
	for _, i := range rng.Perm(len(want)) {
		g2.Row(uint64(i+1), &r)
		if r != want[i] {
			t.Fatalf("id %d: row differs between generators/call orders", i+1)
		}
	}
	// Again on g1, backwards.
	for i := len(want) - 1; i >= 0; i-- {
		if got := genRow(g1, uint64(i+1)); got != want[i] {
			t.Fatalf("id %d: row changed on second generation", i+1)
		}
	}
}

func TestRowsDiffer(t *testing.T) {
	g := NewGenerator(1, 1_000_000)
	seenC := make(map[[CLen]byte]uint64)
	seenPad := make(map[[PadLen]byte]uint64)
	for id := uint64(1); id <= 20_000; id++ {
		r := genRow(g, id)
		if prev, ok := seenC[r.C]; ok {
			t.Fatalf("ids %d and %d have the same c", prev, id)
		}
		if prev, ok := seenPad[r.Pad]; ok {
			t.Fatalf("ids %d and %d have the same pad", prev, id)
		}
		seenC[r.C], seenPad[r.Pad] = id, id
		// Adjacent rows must not share digit groups (e.g. from overlapping
		// PRNG streams shifted by one).
		if id > 1 {
			p := genRow(g, id-1)
			if bytes.Equal(p.C[12:24], r.C[0:12]) || bytes.Equal(p.C[0:12], r.C[12:24]) {
				t.Fatalf("ids %d and %d share a c group at a shifted position", id-1, id)
			}
		}
	}

	// Different seeds give different tables.
	a, b := NewGenerator(1, 1000), NewGenerator(2, 1000)
	for id := uint64(1); id <= 100; id++ {
		if genRow(a, id).C == genRow(b, id).C {
			t.Fatalf("id %d: seeds 1 and 2 give the same c", id)
		}
	}
}

// TestRowGolden pins the generated data: benchmarks and size measurements
// recorded elsewhere depend on it, so a change must be deliberate.
func TestRowGolden(t *testing.T) {
	g := NewGenerator(42, 10_000)
	r := genRow(g, 1)
	const (
		wantK   = 2113
		wantC   = "09986859452-68997313334-50810473815-76475303064-09766382229-75459087133-16208422206-21140221875-75355469629-44749006398 "
		wantPad = "26593626490-99609642042-30937013149-01244190376-64898235122 "
	)
	if r.ID != 1 || r.K != wantK || string(r.C[:]) != wantC || string(r.Pad[:]) != wantPad {
		t.Errorf("row 1 = {%d %d %q %q}, want {1 %d %q %q}", r.ID, r.K, r.C[:], r.Pad[:], wantK, wantC, wantPad)
	}

	h := fnv.New64a()
	var buf [RowSize]byte
	for id := uint64(1); id <= 10_000; id++ {
		g.Row(id, &r)
		h.Write(r.Encode(buf[:0]))
	}
	if got, want := h.Sum64(), uint64(0x6d52a0e177aea0ab); got != want {
		t.Errorf("hash of rows 1..10000 = %#x, want %#x", got, want)
	}
}

func TestRowFormat(t *testing.T) {
	g := NewGenerator(3, 500)
	for id := uint64(1); id <= 5000; id++ {
		r := genRow(g, id)
		if r.ID != id {
			t.Fatalf("ID = %d, want %d", r.ID, id)
		}
		c := string(r.C[:])
		if len(c) != 120 || c[119] != ' ' || !cValueRE.MatchString(c[:119]) {
			t.Fatalf("id %d: c = %q, want 10 dash-joined groups of 11 digits (119 chars) + 1 space", id, c)
		}
		pad := string(r.Pad[:])
		if len(pad) != 60 || pad[59] != ' ' || !padValueRE.MatchString(pad[:59]) {
			t.Fatalf("id %d: pad = %q, want 5 dash-joined groups of 11 digits (59 chars) + 1 space", id, pad)
		}
	}
	if CValueLen != 119 || PadValueLen != 59 {
		t.Errorf("CValueLen, PadValueLen = %d, %d; want 119, 59", CValueLen, PadValueLen)
	}
}

// TestDigitsUniform checks the digits are not biased or stuck, position by
// position, with a loose chi-square bound.
func TestDigitsUniform(t *testing.T) {
	g := NewGenerator(11, 1000)
	const rows = 20_000
	var counts [CValueLen][10]int
	for id := uint64(1); id <= rows; id++ {
		r := genRow(g, id)
		for i, ch := range r.C[:CValueLen] {
			if ch != '-' {
				counts[i][ch-'0']++
			}
		}
	}
	for pos, cnt := range counts {
		if (pos+1)%12 == 0 {
			continue // dash
		}
		exp := float64(rows) / 10
		var chi2 float64
		for _, n := range cnt {
			d := float64(n) - exp
			chi2 += d * d / exp
		}
		// 9 degrees of freedom: P(chi2 > 40) < 1e-5.
		if chi2 > 40 {
			t.Errorf("c position %d: digit counts %v, chi2 = %.1f", pos, cnt, chi2)
		}
	}
}

func TestKInRange(t *testing.T) {
	for _, size := range []uint64{1, 2, 10, 1000, math.MaxUint32} {
		g := NewGenerator(5, size)
		for id := uint64(1); id <= 10_000; id++ {
			if k := genRow(g, id).K; k < 1 || uint64(k) > size {
				t.Fatalf("table size %d, id %d: k = %d out of [1, %d]", size, id, k, size)
			}
		}
	}

	// Small table: every value in [1, 10] appears, roughly uniformly.
	g := NewGenerator(5, 10)
	var counts [11]int
	for id := uint64(1); id <= 100_000; id++ {
		counts[genRow(g, id).K]++
	}
	for k := 1; k <= 10; k++ {
		if counts[k] < 9_000 || counts[k] > 11_000 {
			t.Errorf("k = %d drawn %d times of 100000, want about 10000", k, counts[k])
		}
	}
}

func TestNewGeneratorPanics(t *testing.T) {
	for _, size := range []uint64{0, math.MaxUint32 + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewGenerator(_, %d) did not panic", size)
				}
			}()
			NewGenerator(1, size)
		}()
	}
}

func TestRowConcurrent(t *testing.T) {
	g := NewGenerator(9, 1000)
	const n = 1000
	want := make([]Row, n)
	for i := range want {
		want[i] = genRow(g, uint64(i))
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			var r Row
			for i := range n {
				id := (i*7 + w*131) % n
				g.Row(uint64(id), &r)
				if r != want[id] {
					t.Errorf("worker %d: id %d differs", w, id)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestEncodeDecode(t *testing.T) {
	g := NewGenerator(13, 1<<20)
	r := genRow(g, 123456)
	r.ID = 0x0102030405060708 // exercise all id bytes
	prefix := []byte("xyz")
	enc := r.Encode(prefix)
	if len(enc) != len(prefix)+RowSize || RowSize != 192 {
		t.Fatalf("Encode appended %d bytes (RowSize %d), want 192", len(enc)-len(prefix), RowSize)
	}
	if !bytes.Equal(enc[:3], prefix) {
		t.Fatalf("Encode clobbered the prefix")
	}
	b := enc[3:]
	if binary.LittleEndian.Uint64(b[0:]) != r.ID || binary.LittleEndian.Uint32(b[8:]) != r.K ||
		!bytes.Equal(b[12:132], r.C[:]) || !bytes.Equal(b[132:192], r.Pad[:]) {
		t.Fatalf("layout mismatch: %x", b)
	}

	var got Row
	if err := DecodeRow(b, &got); err != nil {
		t.Fatal(err)
	}
	if got != r {
		t.Fatalf("round trip: got %+v, want %+v", got, r)
	}
	// Trailing bytes are ignored.
	if err := DecodeRow(append(b, 0xff, 0xff), &got); err != nil || got != r {
		t.Fatalf("decode with trailing bytes: %v", err)
	}

	for _, n := range []int{0, 1, RowSize - 1} {
		var z Row
		err := DecodeRow(b[:n], &z)
		if !errors.Is(err, ErrShortRow) {
			t.Errorf("DecodeRow(%d bytes) = %v, want ErrShortRow", n, err)
		}
		if z != (Row{}) {
			t.Errorf("DecodeRow(%d bytes) modified the row", n)
		}
	}

	buf := make([]byte, 0, RowSize)
	if a := testing.AllocsPerRun(100, func() { buf = r.Encode(buf[:0]) }); a != 0 {
		t.Errorf("Encode into a large enough buffer: %v allocs, want 0", a)
	}
}

func TestRowAllocs(t *testing.T) {
	g := NewGenerator(1, 1_000_000)
	var r Row
	id := uint64(0)
	if a := testing.AllocsPerRun(1000, func() { id++; g.Row(id, &r) }); a != 0 {
		t.Errorf("Row: %v allocs per call, want 0", a)
	}
}

// checkPage verifies a page's size, header, and zero tail, and returns its rows.
func checkPage(t *testing.T, page []byte, pageSize, fillFactor int) []Row {
	t.Helper()
	if len(page) != pageSize {
		t.Fatalf("page is %d bytes, want %d", len(page), pageSize)
	}
	n := int(binary.LittleEndian.Uint16(page[0:2]))
	if res := binary.LittleEndian.Uint16(page[2:4]); res != 0 {
		t.Fatalf("reserved header field = %d, want 0", res)
	}
	end := PageHeaderSize + n*RowSize
	if end > pageSize*fillFactor/100 {
		t.Fatalf("%d rows end at %d, past the %d%% budget of a %d-byte page", n, end, fillFactor, pageSize)
	}
	for i, c := range page[end:] {
		if c != 0 {
			t.Fatalf("free space byte %d = %#x, want 0", end+i, c)
		}
	}
	rows := make([]Row, n)
	for i := range rows {
		if err := DecodeRow(page[PageHeaderSize+i*RowSize:], &rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

func TestPageBuilder(t *testing.T) {
	cases := []struct {
		pageSize, fill, want int
	}{
		{16384, 100, (16384 - PageHeaderSize) / RowSize}, // 85
		{16384, 90, (16384*90/100 - PageHeaderSize) / RowSize},
		{16384, 75, (16384*75/100 - PageHeaderSize) / RowSize}, // 63
		{16384, 10, (1638 - PageHeaderSize) / RowSize},         // 8
		{4096, 100, (4096 - PageHeaderSize) / RowSize},         // 21
		{8192, 50, (4096 - PageHeaderSize) / RowSize},          // 21
		{PageHeaderSize + RowSize, 100, 1},                     // exactly one row
		{PageHeaderSize + RowSize - 1, 100, 0},                 // not even one
	}
	g := NewGenerator(21, 1000)
	for _, tc := range cases {
		if got := RowsPerPage(tc.pageSize, tc.fill); got != tc.want {
			t.Errorf("RowsPerPage(%d, %d) = %d, want %d", tc.pageSize, tc.fill, got, tc.want)
		}
		b := NewPageBuilder(tc.pageSize, tc.fill)
		var r Row
		var enc [RowSize]byte
		id := uint64(1)
		for {
			g.Row(id, &r)
			if !b.Add(r.Encode(enc[:0])) {
				break
			}
			id++
			if b.Len() != int(id-1) {
				t.Fatalf("Len = %d after %d adds", b.Len(), id-1)
			}
		}
		if b.Len() != tc.want {
			t.Errorf("page %d @ %d%%: holds %d rows, want %d", tc.pageSize, tc.fill, b.Len(), tc.want)
		}
		// Finish into a dirty buffer with a prefix: the page must be
		// appended and its free space zeroed regardless of old contents.
		dst := bytes.Repeat([]byte{0xAA}, tc.pageSize+10)[:3]
		out := b.Finish(dst)
		if len(out) != 3+tc.pageSize || out[0] != 0xAA {
			t.Fatalf("Finish appended %d bytes, want %d", len(out)-3, tc.pageSize)
		}
		rows := checkPage(t, out[3:], tc.pageSize, tc.fill)
		for i, got := range rows {
			if want := genRow(g, uint64(i+1)); got != want {
				t.Fatalf("page row %d = id %d, want id %d", i, got.ID, want.ID)
			}
		}
		if b.Len() != 0 {
			t.Errorf("Len = %d after Finish, want 0", b.Len())
		}
	}

	// Lower fill factors never hold more rows.
	prev := math.MaxInt
	for ff := MaxFillFactor; ff >= MinFillFactor; ff-- {
		n := RowsPerPage(16384, ff)
		if n > prev {
			t.Errorf("RowsPerPage(16384, %d) = %d > %d at %d%%", ff, n, prev, ff+1)
		}
		prev = n
	}
	if RowsPerPage(16384, 75) >= RowsPerPage(16384, 100) {
		t.Errorf("75%% fill holds as many rows as 100%%")
	}
}

func TestPageBuilderReuseAndEmpty(t *testing.T) {
	b := NewPageBuilder(1024, 100)
	full := bytes.Repeat([]byte{0xFF}, RowSize)
	for b.Add(full) {
	}
	page := b.Finish(nil)
	if n := binary.LittleEndian.Uint16(page); int(n) != (1024-PageHeaderSize)/RowSize {
		t.Fatalf("row count %d", n)
	}
	// After Finish the builder is empty: an empty page is all zeros, even
	// when written over the previous, fully dirty page.
	page = b.Finish(page[:0])
	if len(page) != 1024 || !bytes.Equal(page, make([]byte, 1024)) {
		t.Fatalf("empty page is not all zeros")
	}
	// A short row fits where a full one no longer does.
	b = NewPageBuilder(PageHeaderSize+RowSize+10, 100)
	if !b.Add(full) || b.Add(full) || !b.Add(full[:10]) || b.Add(full[:1]) {
		t.Fatalf("budget accounting wrong: Len = %d", b.Len())
	}

	buf := make([]byte, 0, 16384)
	b = NewPageBuilder(16384, 90)
	if a := testing.AllocsPerRun(100, func() {
		for b.Add(full) {
		}
		buf = b.Finish(buf[:0])
	}); a != 0 {
		t.Errorf("Add/Finish: %v allocs per page, want 0", a)
	}
}

func TestNewPageBuilderPanics(t *testing.T) {
	for _, tc := range []struct{ pageSize, fill int }{
		{16384, 9}, {16384, 101}, {16384, 0}, {0, 100}, {-1, 100}, {3, 100}, {30, 10},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewPageBuilder(%d, %d) did not panic", tc.pageSize, tc.fill)
				}
			}()
			NewPageBuilder(tc.pageSize, tc.fill)
		}()
	}
}

func TestPagesCoversEveryRow(t *testing.T) {
	for _, tc := range []struct {
		rows           uint64
		pageSize, fill int
	}{
		{10_000, 16384, 100},
		{10_000, 16384, 75},
		{1000, 4096, 10},
		{85, 16384, 100}, // exactly one full page
		{86, 16384, 100}, // one row spills
		{1, 8192, 100},
	} {
		g := NewGenerator(77, tc.rows)
		per := RowsPerPage(tc.pageSize, tc.fill)
		wantPages := (tc.rows + uint64(per) - 1) / uint64(per)
		var (
			nextID  = uint64(1)
			pages   uint64
			prevBuf []byte
		)
		err := Pages(77, tc.rows, tc.pageSize, tc.fill, func(pageNo uint64, page []byte) error {
			if pageNo != pages {
				t.Fatalf("page number %d, want %d", pageNo, pages)
			}
			if prevBuf != nil && &prevBuf[0] != &page[0] {
				t.Errorf("page buffer not reused")
			}
			prevBuf = page
			rows := checkPage(t, page, tc.pageSize, tc.fill)
			if pageNo+1 < wantPages && len(rows) != per {
				t.Fatalf("page %d holds %d rows, want %d (only the last page may be partial)", pageNo, len(rows), per)
			}
			for _, r := range rows {
				if r.ID != nextID {
					t.Fatalf("page %d: row id %d, want %d", pageNo, r.ID, nextID)
				}
				if want := genRow(g, r.ID); r != want {
					t.Fatalf("page %d: row %d differs from Generator.Row", pageNo, r.ID)
				}
				nextID++
			}
			pages++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if nextID != tc.rows+1 {
			t.Errorf("%d rows: pages covered ids 1..%d", tc.rows, nextID-1)
		}
		if pages != wantPages {
			t.Errorf("%d rows @ %d rows/page: %d pages, want %d", tc.rows, per, pages, wantPages)
		}
	}
}

func TestPagesErrors(t *testing.T) {
	stop := errors.New("stop")
	calls := 0
	err := Pages(1, 10_000, 16384, 100, func(pageNo uint64, page []byte) error {
		calls++
		if pageNo == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 3 {
		t.Errorf("Pages = %v after %d calls, want stop after 3", err, calls)
	}

	never := func(uint64, []byte) error { t.Error("fn called"); return nil }
	if err := Pages(1, 0, 16384, 100, never); err != nil {
		t.Errorf("empty table: %v", err)
	}
	for _, tc := range []struct {
		rows           uint64
		pageSize, fill int
	}{
		{100, 100, 100},       // page cannot hold a row
		{100, 16384, 5},       // bad fill factor
		{100, 0, 100},         // bad page size
		{1 << 33, 16384, 100}, // table too large for k
	} {
		if err := Pages(1, tc.rows, tc.pageSize, tc.fill, never); err == nil {
			t.Errorf("Pages(rows %d, page %d, fill %d): no error", tc.rows, tc.pageSize, tc.fill)
		}
	}
}

func BenchmarkRow(b *testing.B) {
	g := NewGenerator(1, 1_000_000)
	var r Row
	b.ReportAllocs()
	b.SetBytes(RowSize)
	id := uint64(0)
	for b.Loop() {
		id++
		g.Row(id, &r)
	}
}

func BenchmarkPages(b *testing.B) {
	const rows = 100_000
	b.ReportAllocs()
	b.SetBytes(rows * RowSize)
	for b.Loop() {
		if err := Pages(1, rows, 16384, 90, func(uint64, []byte) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

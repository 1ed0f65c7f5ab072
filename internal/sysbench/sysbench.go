// Package sysbench generates sysbench OLTP-style rows deterministically and
// packs them into fixed-size pages with a fill factor.
//
// # Row contents
//
// The rows follow the sbtest table of sysbench's oltp_common.lua:
//
//	CREATE TABLE sbtest1 (
//	  id  INTEGER NOT NULL,
//	  k   INTEGER DEFAULT '0' NOT NULL,
//	  c   CHAR(120) DEFAULT '' NOT NULL,
//	  pad CHAR(60) DEFAULT '' NOT NULL,
//	  PRIMARY KEY (id))
//
// oltp_common.lua fills c and pad with sysbench.rand.string, which replaces
// every '#' of a template with a random decimal digit. The c template is
// "###########-" repeated 10 times without the trailing dash (10 groups of
// 11 digits joined by '-', 119 characters); the pad template is the same
// group repeated 5 times (59 characters). Stored in CHAR(120) and CHAR(60)
// columns, both values end with one space of padding. k is
// sb_rand(1, table_size), a uniform integer in [1, tableSize], and ids run
// from 1 to the table size.
//
// The random numbers are not sysbench's (it uses xoshiro256** with global,
// per-thread state); only the shape and distribution of the data match. What
// matters for page-compression measurements is that c and pad carry about
// log2(10) bits of entropy per digit and nothing else: the dashes and spaces
// are the only redundancy, as in a real sysbench table.
//
// # Determinism
//
// A Generator derives every row from (seed, id) alone, so rows can be
// generated in any order, concurrently, or regenerated later to verify what
// a page store returned. The output for a given (seed, tableSize, id) is
// stable: tests pin it, and changing it invalidates recorded measurements.
package sysbench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Column widths of the sbtest table and lengths of the generated values
// before CHAR padding.
const (
	CLen   = 120 // width of c, CHAR(120)
	PadLen = 60  // width of pad, CHAR(60)

	CValueLen   = 10*groupDigits + 9 // 119: 10 groups of 11 digits, 9 dashes
	PadValueLen = 5*groupDigits + 4  // 59: 5 groups of 11 digits, 4 dashes

	groupDigits = 11
	cGroups     = 10
	padGroups   = 5
)

// Row is one row of a sysbench sbtest table.
type Row struct {
	ID  uint64
	K   uint32
	C   [CLen]byte   // CValueLen template characters, then spaces
	Pad [PadLen]byte // PadValueLen template characters, then spaces
}

// Generator produces the rows of one sysbench table. It holds no mutable
// state and is safe for concurrent use.
type Generator struct {
	key       uint64
	tableSize uint64
}

// NewGenerator returns a generator for a table of tableSize rows whose
// contents are determined by seed. tableSize bounds k (k is in
// [1, tableSize]); it must be in [1, math.MaxUint32] because k, like
// sysbench's, is a 32-bit integer. NewGenerator panics otherwise.
func NewGenerator(seed uint64, tableSize uint64) *Generator {
	if tableSize == 0 || tableSize > math.MaxUint32 {
		panic(fmt.Sprintf("sysbench: table size %d out of range [1, %d]", tableSize, uint64(math.MaxUint32)))
	}
	return &Generator{key: mix64(seed + golden), tableSize: tableSize}
}

// TableSize returns the table size the generator was created with.
func (g *Generator) TableSize() uint64 { return g.tableSize }

// Row fills r with the row whose primary key is id. The result depends only
// on the generator's seed and table size and on id, never on earlier calls.
// Any id is accepted, including ids beyond the table size (as sysbench's
// inserts produce); k stays in [1, tableSize]. Row does not allocate.
func (g *Generator) Row(id uint64, r *Row) {
	// Each row gets its own splitmix64 stream. Its start is a bijective hash
	// of (key ^ id), so distinct ids get unrelated streams; streams of two
	// rows overlap only if their starts land within a few gamma steps of each
	// other, which for realistic tables has negligible probability.
	s := mix64(g.key ^ id)
	next := func() uint64 {
		s += golden
		return mix64(s)
	}

	r.ID = id
	hi, _ := bits.Mul64(next(), g.tableSize) // uniform in [0, tableSize)
	r.K = uint32(hi + 1)

	for i := range cGroups {
		off := i * (groupDigits + 1)
		putDigits((*[groupDigits]byte)(r.C[off:]), next())
		if i < cGroups-1 {
			r.C[off+groupDigits] = '-'
		}
	}
	for i := CValueLen; i < CLen; i++ {
		r.C[i] = ' '
	}
	for i := range padGroups {
		off := i * (groupDigits + 1)
		putDigits((*[groupDigits]byte)(r.Pad[off:]), next())
		if i < padGroups-1 {
			r.Pad[off+groupDigits] = '-'
		}
	}
	for i := PadValueLen; i < PadLen; i++ {
		r.Pad[i] = ' '
	}
}

const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// putDigits writes the first 11 decimal digits of the fraction x/2^64.
// Multiplying the fraction by 100 moves the next two digits into the high
// word exactly, so the digits are those of floor(x*10^11/2^64): every
// 11-digit string has 2^64/10^11 ≈ 1.8e8 preimages, plus or minus one, so
// the digits are uniform to within one part in 10^8.
func putDigits(dst *[groupDigits]byte, x uint64) {
	var d uint64
	for i := 0; i < 10; i += 2 {
		d, x = bits.Mul64(x, 100)
		dst[i] = digitPairs[2*d]
		dst[i+1] = digitPairs[2*d+1]
	}
	d, _ = bits.Mul64(x, 10)
	dst[10] = byte('0' + d)
}

const golden = 0x9e3779b97f4a7c15 // splitmix64 increment

// mix64 is the splitmix64 output function, a bijection on uint64.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// RowSize is the length of an encoded Row:
//
//	offset  size  field
//	     0     8  id, little-endian
//	     8     4  k, little-endian
//	    12   120  c, CHAR(120) bytes as stored in Row.C
//	   132    60  pad, CHAR(60) bytes as stored in Row.Pad
//	   192        end
const RowSize = 8 + 4 + CLen + PadLen

// ErrShortRow is returned (wrapped) by DecodeRow for input shorter than RowSize.
var ErrShortRow = errors.New("sysbench: encoded row too short")

// Encode appends the RowSize-byte encoding of r (see RowSize) to dst and
// returns the extended slice. It does not allocate when dst has room.
func (r *Row) Encode(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, r.ID)
	dst = binary.LittleEndian.AppendUint32(dst, r.K)
	dst = append(dst, r.C[:]...)
	return append(dst, r.Pad[:]...)
}

// DecodeRow decodes the row encoded in the first RowSize bytes of b into r.
// Bytes after the first RowSize are ignored, so rows can be decoded in place
// from a page. It returns an error wrapping ErrShortRow, leaving r
// unchanged, if b is shorter than RowSize.
func DecodeRow(b []byte, r *Row) error {
	if len(b) < RowSize {
		return fmt.Errorf("%w: %d bytes, need %d", ErrShortRow, len(b), RowSize)
	}
	r.ID = binary.LittleEndian.Uint64(b[0:8])
	r.K = binary.LittleEndian.Uint32(b[8:12])
	copy(r.C[:], b[12:12+CLen])
	copy(r.Pad[:], b[12+CLen:RowSize])
	return nil
}

// PageHeaderSize is the size of the header at the start of every page built
// by PageBuilder:
//
//	offset  size  field
//	     0     2  number of rows on the page, little-endian
//	     2     2  reserved, zero
//
// The rows follow back to back from offset PageHeaderSize, in the order
// they were added, with no per-row length or slot array: row i of a page of
// RowSize-byte rows starts at PageHeaderSize + i*RowSize. Everything after
// the last row up to the end of the page is zero.
const PageHeaderSize = 4

// Fill factor limits, in percent, as for PostgreSQL's fillfactor.
const (
	MinFillFactor = 10
	MaxFillFactor = 100
)

// maxPageRows is the largest row count the 2-byte header field can hold.
const maxPageRows = math.MaxUint16

// PageBuilder packs rows into fixed-size pages, filling each page only up
// to a fill factor: like PostgreSQL's fillfactor and InnoDB's
// innodb_fill_factor, it leaves room on each page for later updates and
// inserts. The free space is zeroed, so the page store's compression removes
// it on disk.
//
// A PageBuilder is not safe for concurrent use.
type PageBuilder struct {
	pageSize int
	budget   int // bytes available for rows
	rows     []byte
	n        int
}

// NewPageBuilder returns a builder for pages of pageSize bytes of which only
// fillFactor percent (MinFillFactor..MaxFillFactor) is used: the rows on a
// page occupy at most pageSize*fillFactor/100 - PageHeaderSize bytes.
// NewPageBuilder panics if fillFactor is out of range or the page is too
// small to hold the header within the fill-factor budget.
func NewPageBuilder(pageSize int, fillFactor int) *PageBuilder {
	budget, err := rowBudget(pageSize, fillFactor)
	if err != nil {
		panic(err)
	}
	return &PageBuilder{
		pageSize: pageSize,
		budget:   budget,
		rows:     make([]byte, 0, budget),
	}
}

func rowBudget(pageSize, fillFactor int) (int, error) {
	if fillFactor < MinFillFactor || fillFactor > MaxFillFactor {
		return 0, fmt.Errorf("sysbench: fill factor %d%% out of range [%d, %d]", fillFactor, MinFillFactor, MaxFillFactor)
	}
	if pageSize <= 0 || pageSize > math.MaxInt/MaxFillFactor {
		return 0, fmt.Errorf("sysbench: page size %d out of range", pageSize)
	}
	budget := pageSize*fillFactor/100 - PageHeaderSize
	if budget < 0 {
		return 0, fmt.Errorf("sysbench: page size %d at fill factor %d%% leaves no room for the %d-byte header", pageSize, fillFactor, PageHeaderSize)
	}
	return budget, nil
}

// RowsPerPage returns how many RowSize-byte rows fit on a page of pageSize
// bytes at fillFactor percent, or 0 if the arguments are invalid.
func RowsPerPage(pageSize, fillFactor int) int {
	budget, err := rowBudget(pageSize, fillFactor)
	if err != nil {
		return 0
	}
	return min(budget/RowSize, maxPageRows)
}

// Add appends row to the page being built. It returns false, and adds
// nothing, if the row would take the page past its fill-factor budget (or
// past the 65535 rows the header can count); the caller then finishes the
// page and adds the row to the next one. Rows never span pages. The row is
// copied. All rows of a page should have the same length (RowSize for
// encoded Rows), since the page records no per-row lengths.
func (b *PageBuilder) Add(row []byte) bool {
	if len(row) > b.budget-len(b.rows) || b.n >= maxPageRows {
		return false
	}
	b.rows = append(b.rows, row...)
	b.n++
	return true
}

// Len returns the number of rows added since the last Finish.
func (b *PageBuilder) Len() int { return b.n }

// Finish appends the page to dst and returns the extended slice: exactly
// pageSize bytes made of the header (see PageHeaderSize), the rows added
// since the last Finish, and zeros up to the end of the page. It then
// resets the builder for the next page. Finishing an empty builder yields a
// page with a row count of zero. Finish does not allocate when dst has
// room for the page.
func (b *PageBuilder) Finish(dst []byte) []byte {
	start := len(dst)
	dst = slices.Grow(dst, b.pageSize)[:start+b.pageSize]
	page := dst[start:]
	binary.LittleEndian.PutUint16(page[0:2], uint16(b.n))
	binary.LittleEndian.PutUint16(page[2:4], 0)
	n := copy(page[PageHeaderSize:], b.rows)
	clear(page[PageHeaderSize+n:])
	b.rows = b.rows[:0]
	b.n = 0
	return dst
}

// Pages generates rows 1..tableSize of the table given by (seed, tableSize)
// in id order, packs them with a PageBuilder of pageSize bytes at
// fillFactor percent, and calls fn for each page, numbering pages from 0.
// Every page is full to its fill-factor budget except possibly the last.
// A table of zero rows produces no pages.
//
// page is a buffer that Pages reuses for the next page: fn must not retain
// it or modify it after returning (copy it if needed). Pages stops at and
// returns the first error from fn. It returns an error without calling fn
// if a page cannot hold even one row or the table size is out of range.
func Pages(seed, tableSize uint64, pageSize, fillFactor int, fn func(pageNo uint64, page []byte) error) error {
	if tableSize == 0 {
		return nil
	}
	if tableSize > math.MaxUint32 {
		return fmt.Errorf("sysbench: table size %d out of range [1, %d]", tableSize, uint64(math.MaxUint32))
	}
	if _, err := rowBudget(pageSize, fillFactor); err != nil {
		return err
	}
	if RowsPerPage(pageSize, fillFactor) < 1 {
		return fmt.Errorf("sysbench: page size %d at fill factor %d%% cannot hold a %d-byte row", pageSize, fillFactor, RowSize)
	}

	g := NewGenerator(seed, tableSize)
	b := NewPageBuilder(pageSize, fillFactor)
	page := make([]byte, 0, pageSize)
	var (
		row    Row
		enc    [RowSize]byte
		pageNo uint64
	)
	flush := func() error {
		page = b.Finish(page[:0])
		err := fn(pageNo, page)
		pageNo++
		return err
	}
	for id := uint64(1); id <= tableSize; id++ {
		g.Row(id, &row)
		e := row.Encode(enc[:0])
		if !b.Add(e) {
			if err := flush(); err != nil {
				return err
			}
			b.Add(e) // always fits on an empty page: RowsPerPage >= 1
		}
	}
	return flush() // tableSize >= 1, so the last page holds at least one row
}

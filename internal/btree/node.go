// Package btree is the B+tree of Strata's key-value store: its node format
// (this file) and, built on it, the tree over buffer-pool pages. A
// transaction copies a page the first time it changes it after the last
// checkpoint's version froze it, keeps a version of a page an open
// snapshot froze before it changes it (versions.go), and changes pages in
// place after that (tree.go).
//
// A node is one page. Reads work on the page bytes in place (binary search
// over a slot array, no decoding, no allocation). Writes edit the page's
// bytes in place (edit.go: insert, replace, delete), keeping the free
// space zero-filled so that the page store's compression takes it away
// (document 001's fill-factor point). A split materialises the node's
// cells and encodes the two halves (edit.go's byte-level split measured
// no faster, docs/BENCHMARKS.md).
//
// Node layout (little endian), see docs/FORMAT.md:
//
//	0  kind        uint8   kindLeaf or kindBranch
//	1  reserved    uint8   zero
//	2  count       uint16  number of cells
//	4  upper       uint32  offset of the cell area (cells fill [upper, page size))
//	8  first child uint64  branch: the child for keys below the first key; leaf: 0
//	16 txid        uint64  the transaction that wrote the page
//	24 slots       count × uint16, the offset of each cell, in key order
//
// Leaf cell:   uvarint(len(key)) uvarint(len(value)<<1 | overflow) key value
// Branch cell: uvarint(len(key)) key child(uint64)
//
// A leaf value flagged overflow is stored as 8 bytes: the first page of
// its overflow chain (the flag's length field is then the value's length).
package btree

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sort"
)

// Node kinds.
const (
	kindLeaf   uint8 = 1
	kindBranch uint8 = 2
)

const (
	nodeHeaderSize = 24
	slotSize       = 2
	overflowRef    = 8 // bytes of a leaf value stored out of line
)

// ErrCorruptNode is returned (wrapped) by checkNode for bytes that are not
// a valid node.
var ErrCorruptNode = errors.New("btree: corrupt node")

// node is a view of a page holding a valid node (see checkNode): read
// methods here, in-place edits in edit.go.
type node []byte

func (n node) kind() uint8        { return n[0] }
func (n node) count() int         { return int(binary.LittleEndian.Uint16(n[2:])) }
func (n node) upper() int         { return int(binary.LittleEndian.Uint32(n[4:])) }
func (n node) firstChild() uint64 { return binary.LittleEndian.Uint64(n[8:]) }
func (n node) txid() uint64       { return binary.LittleEndian.Uint64(n[16:]) }
func (n node) cellOff(i int) int {
	return int(binary.LittleEndian.Uint16(n[nodeHeaderSize+slotSize*i:]))
}

// key returns the key of cell i.
func (n node) key(i int) []byte {
	off := n.cellOff(i)
	klen := int(n[off])
	off++
	if klen >= 0x80 {
		v, k := uvarintSlow(n[off-1:])
		klen, off = int(v), off-1+k
	}
	if n.kind() == kindLeaf {
		if n[off] < 0x80 {
			off++
		} else {
			_, k := uvarintSlow(n[off:])
			off += k
		}
	}
	return n[off : off+klen]
}

// cell decodes leaf cell i: its key is n[koff:koff+klen], followed by its
// value (or, if overflow, the 8-byte reference to it) of vlen bytes.
func (n node) cell(i int) (koff, klen, vlen int, overflow bool) {
	off := n.cellOff(i)
	klen = int(n[off])
	off++
	if klen >= 0x80 {
		v, k := uvarintSlow(n[off-1:])
		klen, off = int(v), off-1+k
	}
	vf := uint64(n[off])
	off++
	if vf >= 0x80 {
		// Two bytes for a value of 64 bytes to 8 KiB, inline too.
		if b := n[off]; b < 0x80 {
			vf = vf&0x7f | uint64(b)<<7
			off++
		} else {
			v, k := uvarintSlow(n[off-1:])
			vf, off = v, off-1+k
		}
	}
	if vf&1 == 1 {
		return off, klen, overflowRef, true
	}
	return off, klen, int(vf >> 1), false
}

// uvarint is binary.Uvarint with one-byte lengths, the common case for
// keys, decoded without a loop; key and cell decode inline the same way.
// The cells of a node lie inside its page (checkNode), so b is never empty.
func uvarint(b []byte) (uint64, int) {
	if c := b[0]; c < 0x80 {
		return uint64(c), 1
	}
	return uvarintSlow(b)
}

// uvarintSlow decodes the encodings longer than a byte, two-byte ones (a
// sysbench row's value length) without binary.Uvarint's loop.
func uvarintSlow(b []byte) (uint64, int) {
	if len(b) > 1 && b[1] < 0x80 {
		return uint64(b[0]&0x7f) | uint64(b[1])<<7, 2
	}
	return binary.Uvarint(b)
}

// value returns leaf cell i's value (or, if overflow, the 8-byte reference)
// and whether it is an overflow reference, with the value's full length.
func (n node) value(i int) (v []byte, overflow bool, length int) {
	off := n.cellOff(i)
	klen, k := uvarint(n[off:])
	off += k
	vf, k := uvarint(n[off:])
	off += k + int(klen)
	length, overflow = int(vf>>1), vf&1 == 1
	if overflow {
		return n[off : off+overflowRef], true, length
	}
	return n[off : off+length], false, length
}

// child returns branch child i, where child 0 is the first child and child
// i+1 follows key i.
func (n node) child(i int) uint64 {
	if i == 0 {
		return n.firstChild()
	}
	off := n.cellOff(i - 1)
	klen, k := uvarint(n[off:])
	off += k + int(klen)
	return binary.LittleEndian.Uint64(n[off:])
}

// search returns the index of the first cell whose key is ≥ key, and
// whether that key is equal.
func (n node) search(key []byte) (int, bool) {
	c := n.count()
	if c >= touchProbesMin {
		runtime.KeepAlive(n.touchProbes(c))
	}
	i := sort.Search(c, func(i int) bool { return bytes.Compare(n.key(i), key) >= 0 })
	return i, i < c && bytes.Equal(n.key(i), key)
}

// touchProbesMin is the fewest cells a search touches the probes of
// first (touchProbes): below it the three steps cover most of the search.
const touchProbesMin = 16

// touchProbes loads the first byte of each cell a binary search over c
// cells (c ≥ touchProbesMin, as sort.Search halves) probes in its first
// three steps, seven cells, and returns them ORed for the caller to keep
// (runtime.KeepAlive, so the loads are not dropped). The loads do not
// depend on each other, so the CPU fetches their cache lines at once,
// where the search would wait for one before it knows the next: a leaf's
// cells are mostly not in the CPU's caches (a 16 KiB leaf; a sysbench row
// is a line of its own), and a search of 75 cells waited for seven
// misses in a row.
func (n node) touchProbes(c int) byte {
	h1 := c >> 1
	h2a, h2b := h1>>1, (h1+1+c)>>1
	t := n[n.cellOff(h1)] | n[n.cellOff(h2a)] | n[n.cellOff(h2b)]
	t |= n[n.cellOff(h2a>>1)] | n[n.cellOff((h2a+1+h1)>>1)]
	t |= n[n.cellOff((h1+1+h2b)>>1)] | n[n.cellOff((h2b+1+c)>>1)]
	return t
}

// childFor returns the index of the child whose subtree holds key.
func (n node) childFor(key []byte) int {
	c := n.count()
	// The number of keys ≤ key is the child index.
	return sort.Search(c, func(i int) bool { return bytes.Compare(n.key(i), key) > 0 })
}

// checkNode verifies that b is a well-formed node of a page of len(b)
// bytes: header in range, every slot inside the cell area, every cell
// inside the page with its lengths in their shortest form, no two cells
// overlapping, keys strictly increasing. A node that passes can be read
// with the methods above without any index going out of range, and edited
// in place (edit.go) without one cell's change reaching another. Pages come
// from the page store checksummed, so a failure here is a bug or a page
// that is not a node; it is reported, never read.
func checkNode(b []byte) error {
	if len(b) < nodeHeaderSize || len(b) > 1<<16 {
		return fmt.Errorf("%w: page of %d bytes", ErrCorruptNode, len(b))
	}
	n := node(b)
	kind := n.kind()
	if kind != kindLeaf && kind != kindBranch {
		return fmt.Errorf("%w: kind %d", ErrCorruptNode, kind)
	}
	if b[1] != 0 {
		return fmt.Errorf("%w: reserved byte %d", ErrCorruptNode, b[1])
	}
	count, upper := n.count(), n.upper()
	slotsEnd := nodeHeaderSize + slotSize*count
	if upper < slotsEnd || upper > len(b) {
		return fmt.Errorf("%w: cell area at %d, slots end at %d, page %d", ErrCorruptNode, upper, slotsEnd, len(b))
	}
	if kind == kindLeaf && n.firstChild() != 0 {
		return fmt.Errorf("%w: leaf with a child", ErrCorruptNode)
	}
	// A bitmap of the bytes cells take, no larger than the page needs
	// (zeroing 8 KiB for a 4 KiB page doubled the check's time).
	switch words := (len(b) + 63) / 64; {
	case words <= 64:
		var used [64]uint64
		return checkCells(n, kind, upper, used[:words])
	case words <= 256:
		var used [256]uint64
		return checkCells(n, kind, upper, used[:words])
	default:
		var used [1024]uint64
		return checkCells(n, kind, upper, used[:words])
	}
}

// checkCells checks the cells of node n (checkNode): each inside the cell
// area, well formed, keys strictly increasing, and no two sharing a byte,
// which used (a bitmap of the page's bytes, zero) records (a cell inside
// another's value was accepted, and deleting the outer one zeroed the
// inner one's key).
func checkCells(n node, kind uint8, upper int, used []uint64) error {
	b := []byte(n)
	count := n.count()
	var prev []byte
	for i := 0; i < count; i++ {
		off := n.cellOff(i)
		if off < upper || off >= len(b) {
			return fmt.Errorf("%w: cell %d at %d outside [%d, %d)", ErrCorruptNode, i, off, upper, len(b))
		}
		end, err := cellEnd(b, off, kind)
		if err != nil {
			return fmt.Errorf("%w: cell %d: %v", ErrCorruptNode, i, err)
		}
		if !markSpan(used, off, end) {
			return fmt.Errorf("%w: cell %d at [%d, %d) overlaps another", ErrCorruptNode, i, off, end)
		}
		k := n.key(i)
		if i > 0 && bytes.Compare(prev, k) >= 0 {
			return fmt.Errorf("%w: keys out of order at cell %d", ErrCorruptNode, i)
		}
		prev = k
	}
	return nil
}

// markSpan marks bytes [from, to) (from < to) in the bitmap used and
// reports whether none of them was marked before.
func markSpan(used []uint64, from, to int) bool {
	fw, lw := from>>6, (to-1)>>6
	fm, lm := ^uint64(0)<<(from&63), ^uint64(0)>>(63-(to-1)&63)
	if fw == lw {
		m := fm & lm
		if used[fw]&m != 0 {
			return false
		}
		used[fw] |= m
		return true
	}
	if used[fw]&fm != 0 || used[lw]&lm != 0 {
		return false
	}
	for _, w := range used[fw+1 : lw] {
		if w != 0 {
			return false
		}
	}
	used[fw] |= fm
	used[lw] |= lm
	for w := fw + 1; w < lw; w++ {
		used[w] = ^uint64(0)
	}
	return true
}

// cellEnd parses the cell at off and returns where it ends, checking every
// length against the page, and that each is written in its shortest form
// (the in-place edits size a cell's header by the shortest form: a longer
// one made a replaced value's copy overrun the page).
func cellEnd(b []byte, off int, kind uint8) (int, error) {
	klen, k := binary.Uvarint(b[off:])
	if k <= 0 || klen > uint64(len(b)) || k != uvarintLen(klen) {
		return 0, errors.New("bad key length")
	}
	off += k
	vlen := uint64(0)
	if kind == kindLeaf {
		vf, k := binary.Uvarint(b[off:])
		if k <= 0 || k != uvarintLen(vf) {
			return 0, errors.New("bad value length")
		}
		off += k
		vlen = vf >> 1
		if vf&1 == 1 {
			if vlen > MaxValueSize {
				return 0, errors.New("overflow value longer than the value limit")
			}
			vlen = overflowRef
		}
		if vlen > uint64(len(b)) {
			return 0, errors.New("value longer than the page")
		}
	} else {
		vlen = 8 // child
	}
	end := uint64(off) + klen + vlen
	if end > uint64(len(b)) {
		return 0, fmt.Errorf("cell ends at %d, page is %d bytes", end, len(b))
	}
	return int(end), nil
}

// leafCell is a materialised leaf entry.
type leafCell struct {
	key, value []byte // value: the bytes, or the 8-byte overflow reference
	overflow   bool
	length     int // the value's length (== len(value) unless overflow)
}

// branchCell is a materialised branch entry: key and the child for keys ≥ key.
type branchCell struct {
	key   []byte
	child uint64
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

func (c leafCell) size() int { return leafCellSize(len(c.key), c.length, c.overflow) }

func (c branchCell) size() int { return branchCellSize(len(c.key)) }

// leafSpace and branchSpace are the bytes the cells need, slots included.
func leafSpace(cells []leafCell) int {
	n := nodeHeaderSize
	for _, c := range cells {
		n += c.size()
	}
	return n
}

func branchSpace(cells []branchCell) int {
	n := nodeHeaderSize
	for _, c := range cells {
		n += c.size()
	}
	return n
}

// encodeLeaf writes cells (sorted by key) as a leaf into page, zeroing the
// free space. It returns an error if they do not fit.
func encodeLeaf(page []byte, cells []leafCell, txid uint64) error {
	if need := leafSpace(cells); need > len(page) {
		return fmt.Errorf("btree: %d leaf cells need %d bytes, page is %d", len(cells), need, len(page))
	}
	clear(page)
	page[0] = kindLeaf
	binary.LittleEndian.PutUint16(page[2:], uint16(len(cells)))
	binary.LittleEndian.PutUint64(page[16:], txid)
	upper := len(page)
	for i, c := range cells {
		size := c.size() - slotSize
		upper -= size
		p := page[upper:]
		vf := uint64(c.length) << 1
		if c.overflow {
			vf |= 1
		}
		k := binary.PutUvarint(p, uint64(len(c.key)))
		k += binary.PutUvarint(p[k:], vf)
		k += copy(p[k:], c.key)
		copy(p[k:], c.value)
		binary.LittleEndian.PutUint16(page[nodeHeaderSize+slotSize*i:], uint16(upper))
	}
	binary.LittleEndian.PutUint32(page[4:], uint32(upper))
	return nil
}

// encodeBranch writes a branch with first child first and cells (sorted by
// key) into page, zeroing the free space.
func encodeBranch(page []byte, first uint64, cells []branchCell, txid uint64) error {
	if need := branchSpace(cells); need > len(page) {
		return fmt.Errorf("btree: %d branch cells need %d bytes, page is %d", len(cells), need, len(page))
	}
	clear(page)
	page[0] = kindBranch
	binary.LittleEndian.PutUint16(page[2:], uint16(len(cells)))
	binary.LittleEndian.PutUint64(page[8:], first)
	binary.LittleEndian.PutUint64(page[16:], txid)
	upper := len(page)
	for i, c := range cells {
		size := c.size() - slotSize
		upper -= size
		p := page[upper:]
		k := binary.PutUvarint(p, uint64(len(c.key)))
		k += copy(p[k:], c.key)
		binary.LittleEndian.PutUint64(p[k:], c.child)
		binary.LittleEndian.PutUint16(page[nodeHeaderSize+slotSize*i:], uint16(upper))
	}
	binary.LittleEndian.PutUint32(page[4:], uint32(upper))
	return nil
}

// leafCells materialises a leaf's cells. The slices alias n.
func leafCells(n node, dst []leafCell) []leafCell {
	dst = dst[:0]
	for i := 0; i < n.count(); i++ {
		v, ovf, length := n.value(i)
		dst = append(dst, leafCell{key: n.key(i), value: v, overflow: ovf, length: length})
	}
	return dst
}

// branchCells materialises a branch's cells. The keys alias n.
func branchCells(n node, dst []branchCell) []branchCell {
	dst = dst[:0]
	for i := 0; i < n.count(); i++ {
		dst = append(dst, branchCell{key: n.key(i), child: n.child(i + 1)})
	}
	return dst
}

// splitPoint returns how many of cells stay in the left node when they no
// longer fit one page: the left node is filled to fill (a fraction of the
// page) — document 001's fill factor, which for sequential inserts leaves
// every page that full — and at least one cell goes each way. The point
// then moves as far as needed for both halves to fit a page: with cells
// of up to half a page (a key and an inline value of a quarter page each),
// a small fill factor would otherwise leave a right half over a page.
// size(i) is cell i's size, pageSize the page size. For a branch, whose
// cell k moves up to the parent, the halves are smaller still.
func splitPoint(count int, size func(i int) int, pageSize int, fill float64) int {
	budget := int(fill * float64(pageSize))
	total := 0
	for i := 0; i < count; i++ {
		total += size(i)
	}
	k, left := count-1, 0 // left: the bytes of cells [0, k)
	for i, used := 0, nodeHeaderSize; i < count; i++ {
		used += size(i)
		if used > budget {
			k = min(max(i, 1), count-1)
			break
		}
	}
	for i := 0; i < k; i++ {
		left += size(i)
	}
	for k < count-1 && nodeHeaderSize+total-left > pageSize {
		left += size(k)
		k++
	}
	for k > 1 && nodeHeaderSize+left > pageSize {
		k--
		left -= size(k)
	}
	return k
}

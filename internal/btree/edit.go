// Editing a node in place: the byte-level primitives of the write path.
//
// These functions edit a node's page bytes in place — slotted-page insert,
// replace, delete, compaction and split — instead of materialising the
// node's cells and encoding a new page. They work on any page that holds
// a valid node (checkNode) with the invariants below, as encodeLeaf,
// encodeBranch and these functions write it (so every page the tree has
// stored).
//
// Lock rules: the caller holds the page exclusively for the duration of a
// call (its buffer-pool frame pinned and latched for writing, or a page no
// reader can reach); nothing here takes a lock, and the page must not be
// read while a call runs. The only shared state is the pool of scratch
// pages that compaction borrows (a sync.Pool, safe for concurrent use).
// Functions on different pages are independent.
//
// Invariants, on entry and on return of every call:
//   - checkNode passes, keys strictly increasing;
//   - live cells are disjoint and lie in [upper, page size), in any order;
//     upper is the lowest live cell (the page size if there is none), so
//     the contiguous gap for new cells and slots is [slots end, upper);
//   - every byte outside the header, the slot array and the live cells is
//     zero: the contiguous gap and the gaps that deletes and replaces leave
//     between cells alike, so that the page store's compression removes
//     free space wherever it is (document 001: zero-filled free space costs
//     nothing on disk), and compaction only moves cells;
//   - the reserved header byte is zero, a leaf's first child is 0.
//
// A call that reports false (no room) leaves the page byte for byte as it
// was. Keys and values passed in must not alias the page being edited.
// Misuse that would break an invariant — an index out of range, a key out
// of order, the wrong kind of node, an overflow reference that is not 8
// bytes, cells that no split makes fit — panics before the page is
// changed: it is a bug in the caller, and a page written wrong would be
// stored and read back wrong. No call allocates: compaction borrows a
// pooled scratch page (or takes the caller's, compactWith), and splits
// append the separator to the caller's buffer.
//
// free is O(count) (the header has no field for the bytes in gaps, and the
// on-disk format is unchanged); an insert or a replace that fits the
// contiguous gap does not call it.

package btree

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"sync"
)

// leafCellSize is the bytes a leaf cell takes in its page, its slot
// included (leafCell.size): keyLen bytes of key and a value of valueLen
// bytes, stored inline, or, if overflow, as an 8-byte overflow reference
// (valueLen is then the value's full length).
func leafCellSize(keyLen, valueLen int, overflow bool) int {
	stored := valueLen
	if overflow {
		stored = overflowRef
	}
	return uvarintLen(uint64(keyLen)) + uvarintLen(uint64(valueLen)<<1) + keyLen + stored + slotSize
}

// branchCellSize is the bytes a branch cell with a key of keyLen bytes
// takes in its page, its slot included (branchCell.size).
func branchCellSize(keyLen int) int {
	return uvarintLen(uint64(keyLen)) + keyLen + 8 + slotSize
}

func (n node) slotsEnd() int  { return nodeHeaderSize + slotSize*n.count() }
func (n node) setCount(c int) { binary.LittleEndian.PutUint16(n[2:], uint16(c)) }
func (n node) setUpper(u int) { binary.LittleEndian.PutUint32(n[4:], uint32(u)) }
func (n node) setCellOff(i, o int) {
	binary.LittleEndian.PutUint16(n[nodeHeaderSize+slotSize*i:], uint16(o))
}

// setTxid records the transaction that wrote the page.
func (n node) setTxid(txid uint64) { binary.LittleEndian.PutUint64(n[16:], txid) }

// initNode makes page an empty node of kind (kindLeaf or kindBranch) with
// first child firstChild (0 for a leaf) and transaction txid, every other
// byte zero. page is 24 bytes to 64 KiB long.
func initNode(page []byte, kind uint8, firstChild, txid uint64) {
	if len(page) < nodeHeaderSize || len(page) > 1<<16 {
		panic("btree: initNode: page size out of range")
	}
	if kind != kindLeaf && kind != kindBranch || kind == kindLeaf && firstChild != 0 {
		panic("btree: initNode: bad kind or a leaf with a child")
	}
	clear(page)
	page[0] = kind
	n := node(page)
	n.setUpper(len(page))
	binary.LittleEndian.PutUint64(page[8:], firstChild)
	n.setTxid(txid)
}

// cellBodyAt is the length of the cell at off in page b of a node of the
// given kind (its slot excluded).
func cellBodyAt(b []byte, off int, leaf bool) int {
	klen, k := binary.Uvarint(b[off:])
	end := off + k + int(klen)
	if leaf {
		vf, k := binary.Uvarint(b[off+k:])
		end += k
		if vf&1 == 1 {
			end += overflowRef
		} else {
			end += int(vf >> 1)
		}
	} else {
		end += 8
	}
	return end - off
}

// cellBody is the length of cell i (its slot excluded).
func (n node) cellBody(i int) int { return cellBodyAt(n, n.cellOff(i), n.kind() == kindLeaf) }

// free is the bytes available for new cells and their slots if the node
// were compacted: the page less the header, the slots and the live cells.
// The contiguous gap, upper − slots end, is at most that.
func (n node) free() int {
	used := n.slotsEnd()
	leaf := n.kind() == kindLeaf
	for i := range n.count() {
		used += cellBodyAt(n, n.cellOff(i), leaf)
	}
	return len(n) - used
}

// scratchPools hold scratch pages for compaction, one pool per power-of-two
// size up to 64 KiB (pool i: pages of 1<<i bytes).
var scratchPools [17]sync.Pool

func getScratch(size int) *[]byte {
	class := bits.Len(uint(size - 1))
	if p, ok := scratchPools[class].Get().(*[]byte); ok {
		return p
	}
	b := make([]byte, 1<<class)
	return &b
}

func putScratch(p *[]byte) { scratchPools[bits.Len(uint(len(*p)-1))].Put(p) }

// compact rewrites the live cells contiguously at the end of the page in
// slot order (cell 0 last, as encodeLeaf and encodeBranch lay them out, so
// a compacted node is byte for byte the node they would encode), updates
// the slots and upper, and leaves everything between the slots and upper
// zero. It borrows a pooled scratch page.
func (n node) compact() {
	s := getScratch(len(n))
	n.compactWith(*s)
	putScratch(s)
}

// compactWith is compact with a caller's scratch buffer of at least the
// page's size (its contents do not matter and are left undefined).
func (n node) compactWith(scratch []byte) { n.rebuild(scratch, -1, nil, false, 0) }

// rebuild compacts the node through scratch. If replace ≥ 0 (a leaf),
// cell replace is rewritten with the value (value, overflow, length)
// instead of its own: the caller has checked that the result fits.
func (n node) rebuild(scratch []byte, replace int, value []byte, overflow bool, length int) {
	size, upper, leaf := len(n), n.upper(), n.kind() == kindLeaf
	if len(scratch) < size {
		panic("btree: compact: scratch smaller than the page")
	}
	old := scratch[:size]
	copy(old[upper:], n[upper:])
	end := size
	for i := range n.count() {
		off := n.cellOff(i)
		if i == replace {
			klen, k := binary.Uvarint(old[off:])
			_, k2 := binary.Uvarint(old[off+k:])
			key := old[off+k+k2 : off+k+k2+int(klen)]
			end -= leafCellSize(len(key), length, overflow) - slotSize
			putLeafCell(n[end:], key, value, overflow, length)
		} else {
			body := cellBodyAt(old, off, leaf)
			end -= body
			copy(n[end:], old[off:off+body])
		}
		n.setCellOff(i, end)
	}
	// The cells fill [end, size); below upper was zero already (and
	// slots dropped by splitAt's setCount are cleared by it).
	if upper < end {
		clear(n[upper:end])
	}
	n.setUpper(end)
}

// putLeafCell writes a leaf cell at the start of p.
func putLeafCell(p, key, value []byte, overflow bool, length int) {
	vf := uint64(length) << 1
	if overflow {
		vf |= 1
	}
	k := binary.PutUvarint(p, uint64(len(key)))
	k += binary.PutUvarint(p[k:], vf)
	k += copy(p[k:], key)
	copy(p[k:], value)
}

// mustBe panics unless the node is of kind: a caller's bug.
func (n node) mustBe(kind uint8, op string) {
	if n.kind() != kind {
		panic("btree: " + op + " on the wrong kind of node")
	}
}

// mustFitOrder panics unless key can be cell i: i in [0, count] and key
// strictly between keys i−1 and i.
func (n node) mustFitOrder(i int, key []byte, op string) {
	c := n.count()
	if i < 0 || i > c {
		panic("btree: " + op + ": slot out of range")
	}
	if i > 0 && bytes.Compare(n.key(i-1), key) >= 0 || i < c && bytes.Compare(key, n.key(i)) >= 0 {
		panic("btree: " + op + ": key out of order")
	}
}

// mustBeCell panics unless i names a cell.
func (n node) mustBeCell(i int, op string) {
	if i < 0 || i >= n.count() {
		panic("btree: " + op + ": cell out of range")
	}
}

// mustBeLeafValue panics unless (value, overflow, length) describes a leaf
// value: inline, length bytes; or an 8-byte overflow reference to a value
// of length ≤ MaxValueSize.
func mustBeLeafValue(value []byte, overflow bool, length int, op string) {
	if overflow && (len(value) != overflowRef || length < 0 || length > MaxValueSize) ||
		!overflow && len(value) != length {
		panic("btree: " + op + ": bad value: overflow reference not 8 bytes, or length wrong")
	}
}

// reserve makes the contiguous gap at least size bytes, compacting the
// node if that makes room; false (the page unchanged) if nothing does.
func (n node) reserve(size int) bool {
	if n.upper()-n.slotsEnd() >= size {
		return true
	}
	if n.free() < size {
		return false
	}
	n.compact()
	return true
}

// insertSlot makes room for a cell of body bytes at slot i, taken from
// the contiguous gap (reserve has made room), and returns its offset.
func (n node) insertSlot(i, body int) int {
	c := n.count()
	off := n.upper() - body
	s := nodeHeaderSize + slotSize*i
	copy(n[s+slotSize:nodeHeaderSize+slotSize*(c+1)], n[s:nodeHeaderSize+slotSize*c])
	n.setCellOff(i, off)
	n.setCount(c + 1)
	n.setUpper(off)
	return off
}

// insertLeaf inserts the leaf cell (key, value) at slot i, which the
// caller found by search: key must sort strictly between keys i−1 and i.
// value is the inline value (overflow false, length = len(value)) or the
// 8-byte overflow reference (overflow true, length = the value's full
// length). If the contiguous gap is too small but free() suffices, the
// node is compacted first. It reports false, the page unchanged, if the
// cell (leafCellSize) does not fit.
func (n node) insertLeaf(i int, key, value []byte, overflow bool, length int) bool {
	n.mustBe(kindLeaf, "insertLeaf")
	mustBeLeafValue(value, overflow, length, "insertLeaf")
	n.mustFitOrder(i, key, "insertLeaf")
	size := leafCellSize(len(key), length, overflow)
	if !n.reserve(size) {
		return false
	}
	putLeafCell(n[n.insertSlot(i, size-slotSize):], key, value, overflow, length)
	return true
}

// insertBranch inserts the branch cell (key, child) at slot i: key must
// sort strictly between keys i−1 and i, and child is the subtree for keys
// ≥ key (it becomes child i+1, see node.child). Like insertLeaf it
// compacts if that makes room and reports false, the page unchanged, if
// the cell (branchCellSize) does not fit.
func (n node) insertBranch(i int, key []byte, child uint64) bool {
	n.mustBe(kindBranch, "insertBranch")
	n.mustFitOrder(i, key, "insertBranch")
	size := branchCellSize(len(key))
	if !n.reserve(size) {
		return false
	}
	p := n[n.insertSlot(i, size-slotSize):]
	k := binary.PutUvarint(p, uint64(len(key)))
	k += copy(p[k:], key)
	binary.LittleEndian.PutUint64(p[k:], child)
	return true
}

// replaceLeafValue gives leaf cell i the value (value, overflow, length),
// as insertLeaf takes it; the key stays. A cell that does not grow is
// rewritten where it was, ending where it ended (the bytes it frees are
// zeroed; if it was the lowest cell, upper rises past them). A cell that
// grows is rewritten in place if it is the lowest cell and the contiguous
// gap holds the growth, else moved to the contiguous gap, else the node is
// compacted with the new cell. It reports false, the page unchanged, if
// the new cell does not fit: if free() < the new cell's size less the old
// one's.
func (n node) replaceLeafValue(i int, value []byte, overflow bool, length int) bool {
	n.mustBe(kindLeaf, "replaceLeafValue")
	n.mustBeCell(i, "replaceLeafValue")
	mustBeLeafValue(value, overflow, length, "replaceLeafValue")
	off := n.cellOff(i)
	klen64, lk := binary.Uvarint(n[off:])
	klen := int(klen64)
	_, lvOld := binary.Uvarint(n[off+lk:])
	keyOff := off + lk + lvOld
	oldBody := n.cellBody(i)
	newBody := leafCellSize(klen, length, overflow) - slotSize
	upper, slotsEnd := n.upper(), n.slotsEnd()

	// In place: the new cell ends where the old one did. The key moves by
	// the difference in the value's stored size (memmove), before the new
	// lengths are written over its old place.
	end := off + oldBody
	if newOff := end - newBody; newBody <= oldBody || off == upper && newOff >= slotsEnd {
		lvNew := uvarintLen(uint64(length) << 1)
		copy(n[newOff+lk+lvNew:], n[keyOff:keyOff+klen])
		n.putLeafHead(newOff, klen, overflow, length)
		copy(n[newOff+lk+lvNew+klen:end], value)
		if newOff > off {
			clear(n[off:newOff])
		}
		n.setCellOff(i, newOff)
		if off == upper {
			n.setUpper(newOff)
		}
		return true
	}
	// Moved to the contiguous gap, below every cell.
	if upper-slotsEnd >= newBody {
		newOff := upper - newBody
		lvNew := uvarintLen(uint64(length) << 1)
		n.putLeafHead(newOff, klen, overflow, length)
		copy(n[newOff+lk+lvNew:], n[keyOff:keyOff+klen])
		copy(n[newOff+lk+lvNew+klen:], value)
		clear(n[off:end])
		n.setCellOff(i, newOff)
		n.setUpper(newOff)
		return true
	}
	if n.free() < newBody-oldBody {
		return false
	}
	s := getScratch(len(n))
	n.rebuild(*s, i, value, overflow, length)
	putScratch(s)
	return true
}

// putLeafHead writes a leaf cell's two lengths at off.
func (n node) putLeafHead(off, klen int, overflow bool, length int) {
	vf := uint64(length) << 1
	if overflow {
		vf |= 1
	}
	k := binary.PutUvarint(n[off:], uint64(klen))
	binary.PutUvarint(n[off+k:], vf)
}

// setChild overwrites branch child i in place: child 0 is the first child
// (the header field), child i ≥ 1 is cell i−1's.
func (n node) setChild(i int, child uint64) {
	n.mustBe(kindBranch, "setChild")
	if i == 0 {
		binary.LittleEndian.PutUint64(n[8:], child)
		return
	}
	n.mustBeCell(i-1, "setChild")
	off := n.cellOff(i - 1)
	klen, k := binary.Uvarint(n[off:])
	binary.LittleEndian.PutUint64(n[off+k+int(klen):], child)
}

// deleteCell removes cell i, a leaf's entry or a branch's key i with child
// i+1 (to keep child i+1 and drop child i instead, setChild(i,
// child(i+1)) first), zeroes its bytes and shifts the slots after it. If
// it was the lowest cell, upper rises to the next lowest.
func (n node) deleteCell(i int) {
	n.mustBeCell(i, "deleteCell")
	c := n.count()
	off := n.cellOff(i)
	clear(n[off : off+n.cellBody(i)])
	s := nodeHeaderSize + slotSize*i
	last := nodeHeaderSize + slotSize*(c-1)
	copy(n[s:last], n[s+slotSize:last+slotSize])
	clear(n[last : last+slotSize])
	n.setCount(c - 1)
	if off == n.upper() {
		u := len(n)
		for j := range c - 1 {
			u = min(u, n.cellOff(j))
		}
		n.setUpper(u)
	}
}

// splitInto moves the upper part of the node's cells into right, a page of
// the same size whose contents do not matter (it is initialised as a node
// of the same kind with transaction txid; the node's own txid is left as
// it is), and leaves both nodes compact. The split point is
// splitPoint(count, cell sizes, page size, fill), which keeps at least one
// cell on each side. The node needs at least two cells.
//
// The separator to insert into the parent (with child right) is appended
// to sep and the extended buffer returned, so it stays valid whatever is
// done to either page next; a buffer of MaxKeySize capacity means no
// allocation. For a leaf it is right's first key. For a branch the cell at
// the split point moves up: its key is the separator and its child
// becomes right's first child, as Tx.splitUp does.
func (n node) splitInto(right []byte, fill float64, txid uint64, sep []byte) []byte {
	c := n.count()
	if c < 2 {
		panic("btree: splitInto: fewer than two cells")
	}
	k := splitPoint(c, func(i int) int { return n.cellBody(i) + slotSize }, len(n), fill)
	return n.splitAt(right, k, txid, sep)
}

// splitAt is splitInto at split point k, 1 ≤ k < count: cells [k, count)
// move to right (a leaf) or cell k moves up and cells (k, count) move
// right (a branch).
func (n node) splitAt(right []byte, k int, txid uint64, sep []byte) []byte {
	c, leaf := n.count(), n.kind() == kindLeaf
	if k < 1 || k >= c {
		panic("btree: splitAt: split point out of range")
	}
	n.mustBeSameSize(right, "splitAt")
	if leaf {
		initNode(right, kindLeaf, 0, txid)
		n.moveTail(right, k)
		n.truncate(k)
		return append(sep, node(right).key(0)...)
	}
	sep = append(sep, n.key(k)...)
	initNode(right, kindBranch, n.child(k+1), txid)
	n.moveTail(right, k+1)
	n.truncate(k)
	return sep
}

func (n node) mustBeSameSize(right []byte, op string) {
	if len(right) != len(n) {
		panic("btree: " + op + ": pages of different sizes")
	}
}

// moveTail appends copies of cells [from, count) to right, an initialised
// node with room for them.
func (n node) moveTail(right []byte, from int) {
	r, c := node(right), n.count()
	upper, rc := r.upper(), r.count()
	for j := from; j < c; j++ {
		off := n.cellOff(j)
		body := n.cellBody(j)
		upper -= body
		copy(r[upper:], n[off:off+body])
		r.setCellOff(rc, upper)
		rc++
	}
	r.setCount(rc)
	r.setUpper(upper)
}

// truncate drops the cells from k on and leaves the node compact. If the
// cells that stay fill [lowest, page size) without gaps (a node built by
// appends, as sequential inserts build it), clearing below them is
// enough; else it compacts.
func (n node) truncate(k int) {
	c := n.count()
	lowest, live := len(n), 0
	for i := range k {
		lowest, live = min(lowest, n.cellOff(i)), live+n.cellBody(i)
	}
	n.setCount(k)
	clear(n[n.slotsEnd() : nodeHeaderSize+slotSize*c])
	if lowest+live == len(n) {
		clear(n[n.upper():lowest])
		n.setUpper(lowest)
	} else {
		n.compact()
	}
}

// splitPointWith is splitPoint over the node's cells with a new cell of
// size bytes (slot included) at slot i, and checks that both halves fit
// the page (they always do if no cell takes over half the page less the
// header, as the tree's key and value limits ensure); it panics, before
// the page changes, if they do not.
func (n node) splitPointWith(i, size int, fill float64, op string) int {
	c := n.count()
	if c == 0 {
		panic("btree: " + op + ": empty node (an insert into it fits)")
	}
	cellSize := func(j int) int {
		switch {
		case j < i:
			return n.cellBody(j) + slotSize
		case j == i:
			return size
		}
		return n.cellBody(j-1) + slotSize
	}
	k := splitPoint(c+1, cellSize, len(n), fill)
	left, right := nodeHeaderSize, nodeHeaderSize
	for j := range c + 1 {
		switch {
		case j < k:
			left += cellSize(j)
		case j > k || n.kind() == kindLeaf:
			right += cellSize(j)
		}
	}
	if left > len(n) || right > len(n) {
		panic("btree: " + op + ": the cells cannot be split into two pages")
	}
	return k
}

// splitInsertLeaf inserts a leaf cell that insertLeaf refused (the same
// arguments: slot i, key, value, overflow, length) by splitting the node:
// the split point is splitPoint with fill over the cells with the new one
// among them, so both halves fit with it, and it goes to the half it
// belongs to. right, txid and sep are as for splitInto (the separator,
// right's first key, may be the new key). It always succeeds for the
// tree's key and value limits; it panics, the page unchanged, for misuse
// (as insertLeaf) or cells that no split makes fit.
func (n node) splitInsertLeaf(right []byte, i int, key, value []byte, overflow bool, length int, fill float64, txid uint64, sep []byte) []byte {
	n.mustBe(kindLeaf, "splitInsertLeaf")
	mustBeLeafValue(value, overflow, length, "splitInsertLeaf")
	n.mustFitOrder(i, key, "splitInsertLeaf")
	n.mustBeSameSize(right, "splitInsertLeaf")
	k := n.splitPointWith(i, leafCellSize(len(key), length, overflow), fill, "splitInsertLeaf")
	initNode(right, kindLeaf, 0, txid)
	ok := false
	if i < k { // the new cell stays left: k−1 of the old cells with it
		n.moveTail(right, k-1)
		n.truncate(k - 1)
		ok = n.insertLeaf(i, key, value, overflow, length)
	} else {
		n.moveTail(right, k)
		n.truncate(k)
		ok = node(right).insertLeaf(i-k, key, value, overflow, length)
	}
	if !ok {
		panic("btree: splitInsertLeaf: no room after the split") // splitPointWith checked
	}
	return append(sep, node(right).key(0)...)
}

// splitInsertBranch inserts a branch cell that insertBranch refused (slot
// i, key, child) by splitting the node, like splitInsertLeaf: the split
// point is chosen over the cells with the new one among them, and the cell
// there moves up (its key appended to sep and returned, its child right's
// first child) — the new cell itself if it falls on the split point.
func (n node) splitInsertBranch(right []byte, i int, key []byte, child uint64, fill float64, txid uint64, sep []byte) []byte {
	n.mustBe(kindBranch, "splitInsertBranch")
	n.mustFitOrder(i, key, "splitInsertBranch")
	n.mustBeSameSize(right, "splitInsertBranch")
	k := n.splitPointWith(i, branchCellSize(len(key)), fill, "splitInsertBranch")
	ok := true
	switch {
	case i == k: // the new cell moves up
		sep = append(sep, key...)
		initNode(right, kindBranch, child, txid)
		n.moveTail(right, i)
		n.truncate(i)
	case i > k: // old cell k moves up, the new cell goes right
		sep = append(sep, n.key(k)...)
		initNode(right, kindBranch, n.child(k+1), txid)
		n.moveTail(right, k+1)
		n.truncate(k)
		ok = node(right).insertBranch(i-k-1, key, child)
	default: // old cell k−1 moves up, the new cell stays left
		sep = append(sep, n.key(k-1)...)
		initNode(right, kindBranch, n.child(k), txid)
		n.moveTail(right, k)
		n.truncate(k - 1)
		ok = n.insertBranch(i, key, child)
	}
	if !ok {
		panic("btree: splitInsertBranch: no room after the split") // splitPointWith checked
	}
	return sep
}

package btree

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// checkLayout is checkNode and the invariants edit.go keeps: live cells
// disjoint inside [upper, page size), upper the lowest cell (the page size
// if there is none), every byte outside the header, the slots and the
// cells zero. It returns the bytes outside them (what free must report).
func checkLayout(b []byte) (int, error) {
	if err := checkNode(b); err != nil {
		return 0, err
	}
	n := node(b)
	type span struct{ cell, off, end int }
	spans := make([]span, 0, n.count()+1)
	for i := range n.count() {
		off := n.cellOff(i)
		end, err := cellEnd(b, off, n.kind()) // node.go's parser, not edit.go's
		if err != nil {
			return 0, err
		}
		spans = append(spans, span{i, off, end})
	}
	slices.SortFunc(spans, func(a, b span) int { return a.off - b.off })
	lowest := len(b)
	if len(spans) > 0 {
		lowest = spans[0].off
	}
	if n.upper() != lowest {
		return 0, fmt.Errorf("upper %d, lowest cell at %d", n.upper(), lowest)
	}
	free, at := 0, nodeHeaderSize+slotSize*n.count()
	spans = append(spans, span{-1, len(b), len(b)})
	for _, s := range spans {
		if s.off < at {
			return 0, fmt.Errorf("cell %d [%d, %d) overlaps the cell or slots before it, which end at %d", s.cell, s.off, s.end, at)
		}
		if gap := b[at:s.off]; !bytes.Equal(gap, zeroPage[:len(gap)]) {
			return 0, fmt.Errorf("free bytes [%d, %d) not zero", at, s.off)
		}
		free += s.off - at
		at = s.end
	}
	return free, nil
}

var zeroPage = make([]byte, 1<<16)

// entry is a cell of the model: a leaf's (key, value, overflow, length)
// or a branch's (key, child).
type entry struct {
	key, value []byte
	overflow   bool
	length     int
	child      uint64
}

func (e entry) size(leaf bool) int {
	if leaf {
		return leafCellSize(len(e.key), e.length, e.overflow)
	}
	return branchCellSize(len(e.key))
}

// editModel applies edits to a page and to a sorted slice of entries and
// checks after every step that they agree, that the page keeps edit.go's
// invariants, and that a refused edit changed nothing. paths counts which
// branch of each primitive ran (decided from the page before the call),
// so a test can require that it exercised them all.
type editModel struct {
	tb          testing.TB
	page, right []byte
	leaf        bool
	first, txid uint64
	cells       []entry
	paths       map[string]int
	op          string // the step being checked, for messages
	sepBuf      []byte
}

func newEditModel(tb testing.TB, pageSize int, leaf bool) *editModel {
	m := &editModel{tb: tb, page: bytes.Repeat([]byte{0xAA}, pageSize), right: make([]byte, pageSize),
		leaf: leaf, txid: 7, paths: map[string]int{}}
	kind := kindLeaf
	if !leaf {
		kind, m.first = kindBranch, 1000
	}
	initNode(m.page, kind, m.first, m.txid)
	m.op = "initNode"
	m.verify()
	return m
}

func (m *editModel) n() node { return node(m.page) }

func (m *editModel) fatalf(format string, args ...any) {
	m.tb.Helper()
	m.tb.Fatalf("page %d, leaf %v, after %s: %s", len(m.page), m.leaf, m.op, fmt.Sprintf(format, args...))
}

// find is the model's search: the index of the first entry ≥ key.
func (m *editModel) find(key []byte) (int, bool) {
	i := sort.Search(len(m.cells), func(i int) bool { return bytes.Compare(m.cells[i].key, key) >= 0 })
	return i, i < len(m.cells) && bytes.Equal(m.cells[i].key, key)
}

// search checks the node's search for key against the model's.
func (m *editModel) search(key []byte) (int, bool) {
	m.tb.Helper()
	i, found := m.n().search(key)
	if j, ok := m.find(key); i != j || found != ok {
		m.fatalf("search %x: %d %v, model %d %v", key, i, found, j, ok)
	}
	return i, found
}

func (m *editModel) verify() {
	m.tb.Helper()
	n := m.n()
	free, err := checkLayout(m.page)
	if err != nil {
		m.fatalf("%v", err)
	}
	want := len(m.page) - nodeHeaderSize
	for _, e := range m.cells {
		want -= e.size(m.leaf)
	}
	if got := n.free(); got != free || got != want {
		m.fatalf("free() %d, free bytes %d, model %d", got, free, want)
	}
	if n.count() != len(m.cells) || n.txid() != m.txid || n.firstChild() != m.first {
		m.fatalf("header: count %d txid %d first %d, model %d %d %d", n.count(), n.txid(), n.firstChild(), len(m.cells), m.txid, m.first)
	}
	for i, e := range m.cells {
		if !bytes.Equal(n.key(i), e.key) {
			m.fatalf("key %d: %x, model %x", i, n.key(i), e.key)
		}
		if m.leaf {
			v, ovf, length := n.value(i)
			if !bytes.Equal(v, e.value) || ovf != e.overflow || length != e.length {
				m.fatalf("value %d: %d bytes ovf %v length %d, model %d bytes ovf %v length %d", i, len(v), ovf, length, len(e.value), e.overflow, e.length)
			}
		} else if n.child(i+1) != e.child {
			m.fatalf("child %d: %d, model %d", i+1, n.child(i+1), e.child)
		}
	}
	// Search finds every key (a sample of a large node) and none between.
	step := max(1, len(m.cells)/64)
	for i := 0; i < len(m.cells); i += step {
		if j, ok := n.search(m.cells[i].key); !ok || j != i {
			m.fatalf("search key %d: %d %v", i, j, ok)
		}
		after := append(bytes.Clone(m.cells[i].key), 0) // the next key, or none
		j, ok := n.search(after)
		if wj, wok := m.find(after); j != wj || ok != wok {
			m.fatalf("search after key %d: %d %v, model %d %v", i, j, ok, wj, wok)
		}
	}
}

// unchanged checks that a refused edit left the page as it was.
func (m *editModel) unchanged(before []byte) {
	m.tb.Helper()
	if !bytes.Equal(before, m.page) {
		m.fatalf("refused, but the page changed")
	}
}

// insert inserts a leaf entry, or a branch entry (value nil), if its key
// is new. It reports whether the key was new and whether the cell fit.
func (m *editModel) insert(e entry) (isNew, ok bool) {
	m.tb.Helper()
	m.op = fmt.Sprintf("insert key %d bytes value %d/%v/%d", len(e.key), len(e.value), e.overflow, e.length)
	i, found := m.search(e.key)
	if found {
		return false, false
	}
	n := m.n()
	before := bytes.Clone(m.page)
	size, free, gap := e.size(m.leaf), n.free(), n.upper()-n.slotsEnd()
	if m.leaf {
		ok = n.insertLeaf(i, e.key, e.value, e.overflow, e.length)
	} else {
		ok = n.insertBranch(i, e.key, e.child)
	}
	if ok != (free >= size) {
		m.fatalf("insert of %d bytes with %d free reported %v", size, free, ok)
	}
	switch {
	case !ok:
		m.paths["insert refused"]++
		m.unchanged(before)
		return true, false
	case gap >= size:
		m.paths["insert"]++
	default:
		m.paths["insert after compaction"]++
	}
	m.cells = slices.Insert(m.cells, i, e)
	m.verify()
	return true, true
}

// replace gives leaf entry i a new value.
func (m *editModel) replace(i int, value []byte, overflow bool, length int) bool {
	m.tb.Helper()
	m.op = fmt.Sprintf("replace %d: value %d/%v/%d", i, len(value), overflow, length)
	n := m.n()
	before := bytes.Clone(m.page)
	e := m.cells[i]
	oldSize, newSize := e.size(true), leafCellSize(len(e.key), length, overflow)
	free, gap, lowest := n.free(), n.upper()-n.slotsEnd(), n.cellOff(i) == n.upper()
	ok := n.replaceLeafValue(i, value, overflow, length)
	if ok != (free >= newSize-oldSize) {
		m.fatalf("replace %d → %d bytes with %d free reported %v", oldSize, newSize, free, ok)
	}
	switch {
	case !ok:
		m.paths["replace refused"]++
		m.unchanged(before)
		return false
	case newSize < oldSize:
		m.paths["replace shrunk in place"]++
	case newSize == oldSize:
		m.paths["replace same size"]++
	case lowest && gap >= newSize-oldSize:
		m.paths["replace grown in place"]++
	case gap >= newSize-slotSize:
		m.paths["replace moved to the gap"]++
	default:
		m.paths["replace with compaction"]++
	}
	e.value, e.overflow, e.length = value, overflow, length
	m.cells[i] = e
	m.verify()
	return true
}

func (m *editModel) delete(i int) {
	m.tb.Helper()
	m.op = fmt.Sprintf("delete %d of %d", i, len(m.cells))
	n := m.n()
	if n.cellOff(i) == n.upper() {
		m.paths["delete lowest"]++
	} else {
		m.paths["delete"]++
	}
	n.deleteCell(i)
	m.cells = slices.Delete(m.cells, i, i+1)
	m.verify()
}

func (m *editModel) setChild(i int, child uint64) {
	m.tb.Helper()
	m.op = fmt.Sprintf("setChild %d", i)
	m.n().setChild(i, child)
	if i == 0 {
		m.first = child
	} else {
		m.cells[i-1].child = child
	}
	m.paths["setChild"]++
	m.verify()
}

func (m *editModel) setTxid(txid uint64) {
	m.tb.Helper()
	m.op = "setTxid"
	m.n().setTxid(txid)
	m.txid = txid
	m.verify()
}

// encoded is the model encoded by encodeLeaf or encodeBranch.
func (m *editModel) encoded() []byte {
	page := make([]byte, len(m.page))
	var err error
	if m.leaf {
		cells := make([]leafCell, len(m.cells))
		for i, e := range m.cells {
			cells[i] = leafCell{key: e.key, value: e.value, overflow: e.overflow, length: e.length}
		}
		err = encodeLeaf(page, cells, m.txid)
	} else {
		cells := make([]branchCell, len(m.cells))
		for i, e := range m.cells {
			cells[i] = branchCell{key: e.key, child: e.child}
		}
		err = encodeBranch(page, m.first, cells, m.txid)
	}
	if err != nil {
		m.fatalf("encode: %v", err)
	}
	return page
}

// compact compacts the node, which must then be what encodeLeaf or
// encodeBranch makes of the model, byte for byte.
func (m *editModel) compact() {
	m.tb.Helper()
	m.op = "compact"
	m.n().compact()
	m.paths["compact"]++
	m.verify()
	if !bytes.Equal(m.page, m.encoded()) {
		m.fatalf("compacted node differs from the encoded model")
	}
}

// split splits the node with fill factor fill and checks both halves;
// the model then continues with the left half, or the right one if
// keepRight(separator).
func (m *editModel) split(fill float64, keepRight func(sep []byte) bool) {
	m.tb.Helper()
	m.op = fmt.Sprintf("split at fill %.2f of %d cells", fill, len(m.cells))
	m.dirtyRight()
	k := splitPoint(len(m.cells), func(i int) int { return m.cells[i].size(m.leaf) }, len(m.page), fill)
	lowest, live := len(m.page), 0
	for i := range k {
		lowest, live = min(lowest, m.n().cellOff(i)), live+m.cells[i].size(m.leaf)-slotSize
	}
	if lowest+live == len(m.page) {
		m.paths["split, left contiguous"]++
	} else {
		m.paths["split, left compacted"]++
	}
	sep := m.n().splitInto(m.right, fill, m.txid+1, m.sepBuf[:0])
	m.halves(m.cells, k, sep, true, keepRight)
}

// splitInsert inserts e, which does not fit, with splitInsertLeaf or
// splitInsertBranch, and checks the halves as split does.
func (m *editModel) splitInsert(e entry, fill float64, keepRight func(sep []byte) bool) {
	m.tb.Helper()
	m.op = fmt.Sprintf("split-insert key %d bytes value %d/%v/%d at fill %.2f of %d cells", len(e.key), len(e.value), e.overflow, e.length, fill, len(m.cells))
	m.dirtyRight()
	i, _ := m.search(e.key)
	cells := slices.Insert(slices.Clone(m.cells), i, e)
	k := splitPoint(len(cells), func(i int) int { return cells[i].size(m.leaf) }, len(m.page), fill)
	var sep []byte
	if m.leaf {
		m.paths[map[bool]string{true: "split-insert left", false: "split-insert right"}[i < k]]++
		sep = m.n().splitInsertLeaf(m.right, i, e.key, e.value, e.overflow, e.length, fill, m.txid+1, m.sepBuf[:0])
	} else {
		switch {
		case i < k:
			m.paths["split-insert left"]++
		case i == k:
			m.paths["split-insert moves the new key up"]++
		default:
			m.paths["split-insert right"]++
		}
		sep = m.n().splitInsertBranch(m.right, i, e.key, e.child, fill, m.txid+1, m.sepBuf[:0])
	}
	m.halves(cells, k, sep, false, keepRight)
}

func (m *editModel) dirtyRight() {
	for i := range m.right {
		m.right[i] = 0xBB // the split must initialise right
	}
}

// halves checks a split of cells at k into the page (left) and m.right,
// with separator sep and right's txid m.txid+1; the model continues with
// one of them. If encoded, right must be what encodeLeaf or encodeBranch
// makes of its cells.
func (m *editModel) halves(cells []entry, k int, sep []byte, encoded bool, keepRight func(sep []byte) bool) {
	m.tb.Helper()
	m.sepBuf = sep[:0]
	sep = bytes.Clone(sep)
	l, r := m.n(), node(m.right)
	rightCells, rightFirst := cells[k:], uint64(0)
	if !m.leaf {
		rightCells, rightFirst = cells[k+1:], cells[k].child
	}
	if l.count() != k || k < 1 || k >= len(cells) || !bytes.Equal(sep, cells[k].key) || r.kind() != l.kind() {
		m.fatalf("split: %d left, want %d of %d; sep %x, want %x; right of kind %d", l.count(), k, len(cells), sep, cells[k].key, r.kind())
	}
	left := &editModel{tb: m.tb, page: m.page, leaf: m.leaf, first: m.first, txid: m.txid, cells: slices.Clone(cells[:k]), op: m.op + " (left)"}
	right := &editModel{tb: m.tb, page: m.right, leaf: m.leaf, first: rightFirst, txid: m.txid + 1, cells: slices.Clone(rightCells), op: m.op + " (right)"}
	for _, h := range []*editModel{left, right} {
		h.verify()
		if n := h.n(); n.free() != n.upper()-n.slotsEnd() {
			h.fatalf("not compact: %d free, gap %d", n.free(), n.upper()-n.slotsEnd())
		}
	}
	if encoded && !bytes.Equal(right.page, right.encoded()) {
		right.fatalf("right half differs from the encoded model")
	}
	if keepRight(sep) {
		m.page, m.right = m.right, m.page
		m.first, m.txid, m.cells = right.first, right.txid, right.cells
	} else {
		m.cells = left.cells
	}
}

// splitThenInsert makes room for e, which did not fit: with
// splitInsertLeaf/Branch (at once) if at once, else by splitInto and an
// insert into the half e belongs to (which may still not fit: counted as
// path "insert refused after split"). It goes on in that half.
func (m *editModel) splitThenInsert(e entry, fill float64, atOnce bool) {
	m.tb.Helper()
	keep := func(sep []byte) bool { return bytes.Compare(e.key, sep) >= 0 }
	if atOnce {
		m.splitInsert(e, fill, keep)
		return
	}
	if len(m.cells) < 2 {
		return
	}
	m.split(fill, keep)
	if _, ok := m.insert(e); !ok {
		m.paths["insert refused after split"]++
	}
}

// Random keys and values, of every size up to the limits of the page.

func maxKeyFor(pageSize int) int    { return pageSize/4 - 16 } // Tree.MaxKeySize
func maxInlineFor(pageSize int) int { return pageSize/4 - 16 } // Tree.MaxInlineValueSize

// randLen is a length in [lo, hi]: often small, often at a uvarint or
// size boundary, sometimes anything.
func randLen(rng *rand.Rand, lo, hi int) int {
	var n int
	switch rng.IntN(8) {
	case 0:
		n = hi
	case 1:
		n = lo
	case 2, 3:
		n = lo + rng.IntN(min(16, hi-lo+1))
	case 4:
		b := []int{63, 64, 127, 128, 255, 256, 8191, 8192}
		n = b[rng.IntN(len(b))] + rng.IntN(3) - 1
	default:
		n = lo + rng.IntN(hi-lo+1)
	}
	return min(max(n, lo), hi)
}

func randEditKey(rng *rand.Rand, pageSize int) []byte {
	k := make([]byte, randLen(rng, 1, maxKeyFor(pageSize)))
	for i := range k {
		k[i] = byte('a' + rng.IntN(4)) // a small alphabet: shared prefixes
	}
	if rng.IntN(4) == 0 {
		k[len(k)-1] = byte(rng.Uint32()) // any byte, 0 and 0xff included
	}
	return k
}

func randEditValue(rng *rand.Rand, pageSize int) (value []byte, overflow bool, length int) {
	inline := maxInlineFor(pageSize)
	if rng.IntN(8) == 0 {
		return binary.LittleEndian.AppendUint64(nil, rng.Uint64()), true, randLen(rng, inline+1, MaxValueSize)
	}
	v := make([]byte, randLen(rng, 0, inline))
	for i := range v {
		v[i] = byte(rng.Uint32())
	}
	return v, false, len(v)
}

// randomEdits applies ops random edits to a node of pageSize bytes. An
// insert that does not fit splits the node, as the write path will, and
// is retried in the half the key belongs to.
func randomEdits(m *editModel, rng *rand.Rand, ops int) {
	ps := len(m.page)
	for range ops {
		c := len(m.cells)
		switch r := rng.IntN(100); {
		case r < 45 || c == 0: // insert
			e := entry{key: randEditKey(rng, ps), child: rng.Uint64()}
			if m.leaf {
				e.value, e.overflow, e.length = randEditValue(rng, ps)
			}
			if isNew, ok := m.insert(e); isNew && !ok {
				m.splitThenInsert(e, 0.1+0.9*rng.Float64(), rng.IntN(2) == 0)
			}
		case r < 65 && m.leaf: // replace
			v, ovf, length := randEditValue(rng, ps)
			m.replace(rng.IntN(c), v, ovf, length)
		case r < 65: // set a child
			m.setChild(rng.IntN(c+1), rng.Uint64())
		case r < 85:
			m.delete(rng.IntN(c))
		case r < 88:
			m.compact()
		case r < 92 && c >= 2:
			right := rng.IntN(2) == 0
			m.split(0.1+0.9*rng.Float64(), func([]byte) bool { return right })
		case r < 94:
			m.setTxid(rng.Uint64())
		default: // a key that is not there
			m.op = "search"
			m.search(randEditKey(rng, ps))
		}
	}
}

func TestEditModel(t *testing.T) {
	for _, ps := range []int{512, 4096, 16384, 65536} {
		for _, leaf := range []bool{true, false} {
			t.Run(fmt.Sprintf("page=%d/leaf=%v", ps, leaf), func(t *testing.T) {
				paths := map[string]int{}
				ops := 3000
				if ps > 16384 {
					ops = 1000 // the same operations, more cells
				}
				if testing.Short() || raceEnabled {
					ops /= 4
				}
				for seed := range uint64(3) {
					m := newEditModel(t, ps, leaf)
					randomEdits(m, rand.New(rand.NewPCG(seed, uint64(ps))), ops)
					for p, n := range m.paths {
						paths[p] += n
					}
				}
				t.Logf("paths: %v", paths)
				want := []string{"insert", "insert after compaction", "insert refused", "delete", "delete lowest", "compact",
					"split, left contiguous", "split, left compacted", "split-insert left", "split-insert right"}
				if leaf {
					want = append(want, "replace refused", "replace shrunk in place", "replace same size",
						"replace grown in place", "replace moved to the gap", "replace with compaction")
				} else {
					want = append(want, "setChild", "split-insert moves the new key up")
				}
				for _, p := range want {
					if paths[p] == 0 {
						t.Errorf("path %q never ran", p)
					}
				}
			})
		}
	}
}

// TestEditMisusePanics checks that misuse panics before the page changes.
func TestEditMisusePanics(t *testing.T) {
	leaf, branch := make([]byte, 4096), make([]byte, 4096)
	initNode(leaf, kindLeaf, 0, 1)
	initNode(branch, kindBranch, 5, 1)
	for _, k := range []string{"b", "d", "f"} {
		if !node(leaf).insertLeaf(node(leaf).count(), []byte(k), []byte("v"), false, 1) ||
			!node(branch).insertBranch(node(branch).count(), []byte(k), 9) {
			t.Fatal("setup insert refused")
		}
	}
	ref := make([]byte, overflowRef)
	cases := map[string]struct {
		page []byte
		f    func(n node)
	}{
		"leaf key equal":        {leaf, func(n node) { n.insertLeaf(1, []byte("d"), nil, false, 0) }},
		"leaf key before":       {leaf, func(n node) { n.insertLeaf(1, []byte("a"), nil, false, 0) }},
		"leaf key after":        {leaf, func(n node) { n.insertLeaf(1, []byte("e"), nil, false, 0) }},
		"leaf slot past end":    {leaf, func(n node) { n.insertLeaf(4, []byte("g"), nil, false, 0) }},
		"leaf slot negative":    {leaf, func(n node) { n.insertLeaf(-1, []byte("a"), nil, false, 0) }},
		"inline length wrong":   {leaf, func(n node) { n.insertLeaf(0, []byte("a"), []byte("xy"), false, 3) }},
		"overflow ref short":    {leaf, func(n node) { n.insertLeaf(0, []byte("a"), ref[:7], true, 1<<20) }},
		"overflow too long":     {leaf, func(n node) { n.insertLeaf(0, []byte("a"), ref, true, MaxValueSize+1) }},
		"replace out of range":  {leaf, func(n node) { n.replaceLeafValue(3, nil, false, 0) }},
		"replace bad ref":       {leaf, func(n node) { n.replaceLeafValue(0, ref[:4], true, 1<<20) }},
		"delete out of range":   {leaf, func(n node) { n.deleteCell(3) }},
		"insertBranch on leaf":  {leaf, func(n node) { n.insertBranch(0, []byte("a"), 1) }},
		"setChild on leaf":      {leaf, func(n node) { n.setChild(0, 1) }},
		"insertLeaf on branch":  {branch, func(n node) { n.insertLeaf(0, []byte("a"), nil, false, 0) }},
		"replace on branch":     {branch, func(n node) { n.replaceLeafValue(0, nil, false, 0) }},
		"branch key order":      {branch, func(n node) { n.insertBranch(3, []byte("a"), 1) }},
		"setChild out of range": {branch, func(n node) { n.setChild(4, 1) }},
		"split right too small": {leaf, func(n node) { n.splitInto(make([]byte, 1024), 0.5, 2, nil) }},
		"split point 0":         {branch, func(n node) { n.splitAt(make([]byte, 4096), 0, 2, nil) }},
		"split point count":     {leaf, func(n node) { n.splitAt(make([]byte, 4096), 3, 2, nil) }},
		"split-insert order": {leaf, func(n node) {
			n.splitInsertLeaf(make([]byte, 4096), 0, []byte("c"), nil, false, 0, 0.5, 2, nil)
		}},
		"split-insert right size": {branch, func(n node) { n.splitInsertBranch(make([]byte, 512), 0, []byte("a"), 1, 0.5, 2, nil) }},
		"split-insert leaf on branch": {branch, func(n node) {
			n.splitInsertLeaf(make([]byte, 4096), 0, []byte("a"), nil, false, 0, 0.5, 2, nil)
		}},
	}
	for name, c := range cases {
		before := bytes.Clone(c.page)
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			c.f(node(c.page))
		}()
		if !bytes.Equal(before, c.page) {
			t.Errorf("%s: page changed", name)
		}
	}
	one := make([]byte, 512)
	initNode(one, kindLeaf, 0, 1)
	node(one).insertLeaf(0, []byte("k"), nil, false, 0)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("split of one cell: no panic")
			}
		}()
		node(one).splitInto(make([]byte, 512), 0.5, 2, nil)
	}()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("initNode of a leaf with a child: no panic")
			}
		}()
		initNode(make([]byte, 512), kindLeaf, 3, 1)
	}()
	// Cells over the tree's limits that no split can make fit: a panic
	// before the page changes, not a page over its size.
	big := make([]byte, 512)
	initNode(big, kindLeaf, 0, 1)
	v := make([]byte, 230)
	node(big).insertLeaf(0, []byte("a"), v, false, len(v))
	node(big).insertLeaf(1, []byte("b"), v, false, len(v))
	before := bytes.Clone(big)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("split-insert of a cell no split fits: no panic")
			}
		}()
		w := make([]byte, 300)
		node(big).splitInsertLeaf(make([]byte, 512), 1, []byte("aa"), w, false, len(w), 0.5, 2, nil)
	}()
	if !bytes.Equal(before, big) {
		t.Error("split-insert that panicked changed the page")
	}
	empty := make([]byte, 512)
	initNode(empty, kindBranch, 1, 1)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("split-insert into an empty node: no panic")
			}
		}()
		node(empty).splitInsertBranch(make([]byte, 512), 0, []byte("a"), 2, 0.5, 2, nil)
	}()
}

// editOps decodes fuzz input into edits of an editModel.
type editOps struct{ b []byte }

func (d *editOps) byte() byte {
	if len(d.b) == 0 {
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *editOps) uint16() int { return int(d.byte())<<8 | int(d.byte()) }

func (d *editOps) key(pageSize int) []byte {
	k := make([]byte, 1+d.uint16()%maxKeyFor(pageSize))
	for i := range min(len(k), 3) {
		k[i] = d.byte()
	}
	for i := 3; i < len(k); i++ {
		k[i] = 'x'
	}
	return k
}

func (d *editOps) value(pageSize int) ([]byte, bool, int) {
	inline := maxInlineFor(pageSize)
	if f := d.byte(); f&0x80 != 0 {
		length := inline + 1 + (int(f&0x7f)<<16|d.uint16())%(MaxValueSize-inline)
		return binary.LittleEndian.AppendUint64(nil, uint64(length)), true, length
	}
	v := make([]byte, d.uint16()%(inline+1))
	for i := range v {
		v[i] = byte(i)
	}
	return v, false, len(v)
}

// FuzzEditNode applies the edits the input decodes to (inserts, replaces,
// deletes, child updates, compactions, splits) to a node and a model,
// checking the node against the model and edit.go's invariants after
// every one.
func FuzzEditNode(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 10, 'a', 'b', 'c', 0, 0, 20})
	f.Add([]byte{1, 0, 0, 0, 5, 'k', 'e', 'y', 3, 0, 0, 0, 2, 1, 5, 0})
	rng := rand.New(rand.NewPCG(5, 5))
	for range 8 {
		b := make([]byte, 50+rng.IntN(300))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d := &editOps{b: b}
		ps := []int{256, 512, 1024, 4096}[d.byte()%4]
		m := newEditModel(t, ps, d.byte()&1 == 0)
		for ops := 0; len(d.b) > 0 && ops < 300; ops++ { // bounded: each step checks the whole node
			c := len(m.cells)
			switch op := d.byte() % 8; {
			case op <= 2 || c == 0:
				e := entry{key: d.key(ps), child: uint64(d.uint16())}
				if m.leaf {
					e.value, e.overflow, e.length = d.value(ps)
				}
				if isNew, ok := m.insert(e); !isNew && m.leaf {
					i, _ := m.find(e.key)
					m.replace(i, e.value, e.overflow, e.length)
				} else if isNew && !ok {
					m.splitThenInsert(e, float64(1+d.byte()%10)/10, d.byte()&1 == 0)
				}
			case op == 3 && m.leaf:
				i := d.uint16() % c
				v, ovf, length := d.value(ps)
				m.replace(i, v, ovf, length)
			case op == 3:
				m.setChild(d.uint16()%(c+1), uint64(d.uint16()))
			case op == 4 || op == 5:
				m.delete(d.uint16() % c)
			case op == 6:
				m.compact()
			case c >= 2:
				right := d.byte()&1 == 1
				m.split(float64(1+d.byte()%10)/10, func([]byte) bool { return right })
			}
		}
	})
}

// TestEditSequentialFill appends rows in key order, splitting a full leaf
// and going on in its right half as the write path will: every left half
// is filled to the fill factor, less at most one row (two with
// splitInto, which does not count the row that did not fit).
func TestEditSequentialFill(t *testing.T) {
	for _, ps := range []int{4096, 16384} {
		for _, fill := range []float64{0.5, 0.75, 0.9, 1} {
			for _, atOnce := range []bool{false, true} {
				m := newEditModel(t, ps, true)
				row := leafCellSize(16, 84, false)
				splits := 0
				pages := 4
				if testing.Short() || raceEnabled {
					pages = 2
				}
				for i := range pages * ps / row {
					e := entry{key: benchKey(i), value: make([]byte, 84), length: 84}
					if _, ok := m.insert(e); ok {
						continue
					}
					// Go on in the right half. splitInsertLeaf fills the
					// left one to the fill factor with the new row
					// counted; splitInto without it.
					budget, lowest := int(fill*float64(ps)), min(int(fill*float64(ps)), ps-row)-row
					if atOnce {
						m.splitInsert(e, fill, func([]byte) bool { return true })
						lowest = min(budget, ps) - row
					} else {
						m.split(fill, func([]byte) bool { return true })
						if _, ok := m.insert(e); !ok {
							t.Fatalf("row %d does not fit the right half", i)
						}
					}
					if used := len(m.right) - node(m.right).free(); used > budget || used <= lowest {
						t.Errorf("page %d fill %.2f at once %v: left half uses %d bytes", ps, fill, atOnce, used)
					}
					splits++
				}
				if splits == 0 || m.paths["split, left contiguous"]+m.paths["split-insert right"] != splits {
					t.Errorf("page %d fill %.2f: %d splits, %v", ps, fill, splits, m.paths)
				}
			}
		}
	}
}

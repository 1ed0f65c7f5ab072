package btree

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// Benchmarks of the node editing primitives (path=bytes) against today's
// write path (path=reencode: leafCells, change the cell list, encodeLeaf
// the whole page into a second page) on a 16 KiB leaf of 100-byte rows
// (16-byte keys, 84-byte values: 105 bytes a cell with its slot, 155 to a
// page). Run side by side:
//
//	go test -run '^$' -bench 'BenchmarkLeaf' -benchmem -count 5 ./internal/btree/

const (
	benchPage  = 16384
	benchValue = 84
)

func benchKey(i int) []byte { return fmt.Appendf(nil, "row%013d", i) }

// benchLeaf is a leaf of rows with keys benchKey(0), benchKey(step), ….
func benchLeaf(b *testing.B, rows, step int) []byte {
	page := make([]byte, benchPage)
	initNode(page, kindLeaf, 0, 1)
	v := make([]byte, benchValue)
	for i := range rows {
		if !node(page).insertLeaf(i, benchKey(i*step), v, false, len(v)) {
			b.Fatalf("row %d does not fit", i)
		}
	}
	return page
}

// reencode is today's path: materialise the cells, change them (edit),
// encode them into other.
func reencode(b *testing.B, page, other []byte, cells []leafCell, edit func([]leafCell) []leafCell) []leafCell {
	cells = edit(leafCells(node(page), cells[:0]))
	if err := encodeLeaf(other, cells, 2); err != nil {
		b.Fatal(err)
	}
	return cells
}

// BenchmarkLeafInsert inserts rows between the 100 of a leaf, in random
// order, 50 before the page is reset (the reset, a 16 KiB copy every 50
// inserts, is in both paths' times).
func BenchmarkLeafInsert(b *testing.B) {
	base := benchLeaf(b, 100, 2)
	order := rand.New(rand.NewPCG(1, 1)).Perm(100)[:50]
	keys := make([][]byte, len(order))
	for j, o := range order {
		keys[j] = benchKey(2*o + 1)
	}
	v := make([]byte, benchValue)
	b.Run("path=bytes", func(b *testing.B) {
		page := slices.Clone(base)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%len(keys) == 0 {
				copy(page, base)
			}
			k := keys[i%len(keys)]
			j, _ := node(page).search(k)
			if !node(page).insertLeaf(j, k, v, false, len(v)) {
				b.Fatal("insert refused")
			}
		}
	})
	b.Run("path=reencode", func(b *testing.B) {
		page, other := slices.Clone(base), make([]byte, benchPage)
		var cells []leafCell
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%len(keys) == 0 {
				copy(page, base)
			}
			k := keys[i%len(keys)]
			j, _ := node(page).search(k)
			cells = reencode(b, page, other, cells, func(c []leafCell) []leafCell {
				return slices.Insert(c, j, leafCell{key: k, value: v, length: len(v)})
			})
			page, other = other, page
		}
	})
}

// BenchmarkLeafReplace replaces the value of a random row of a leaf of
// 120: size=same with a value of the same size (in place), size=varies
// with values of 76..92 bytes (cells shrink in place, grow into the gap,
// and sometimes the node is compacted).
func BenchmarkLeafReplace(b *testing.B) {
	base := benchLeaf(b, 120, 1)
	rng := rand.New(rand.NewPCG(2, 2))
	idx := make([]int, 1024)
	vals := make([][]byte, len(idx))
	for j := range idx {
		idx[j] = rng.IntN(120)
		vals[j] = make([]byte, benchValue-8+rng.IntN(17))
	}
	same := make([]byte, benchValue)
	for _, size := range []string{"same", "varies"} {
		value := func(i int) []byte {
			if size == "same" {
				return same
			}
			return vals[i%len(vals)]
		}
		b.Run("size="+size+"/path=bytes", func(b *testing.B) {
			page := slices.Clone(base)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				v := value(i)
				if !node(page).replaceLeafValue(idx[i%len(idx)], v, false, len(v)) {
					b.Fatal("replace refused")
				}
			}
		})
		b.Run("size="+size+"/path=reencode", func(b *testing.B) {
			page, other := slices.Clone(base), make([]byte, benchPage)
			var cells []leafCell
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				v, j := value(i), idx[i%len(idx)]
				cells = reencode(b, page, other, cells, func(c []leafCell) []leafCell {
					c[j].value, c[j].length = v, len(v)
					return c
				})
				page, other = other, page
			}
		})
	}
}

// BenchmarkLeafDelete deletes random rows of a leaf of 150, 50 before the
// page is reset (the reset is in both paths' times).
func BenchmarkLeafDelete(b *testing.B) {
	base := benchLeaf(b, 150, 1)
	rng := rand.New(rand.NewPCG(3, 3))
	idx := make([]int, 50)
	for j := range idx {
		idx[j] = rng.IntN(150 - j)
	}
	b.Run("path=bytes", func(b *testing.B) {
		page := slices.Clone(base)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%len(idx) == 0 {
				copy(page, base)
			}
			node(page).deleteCell(idx[i%len(idx)])
		}
	})
	b.Run("path=reencode", func(b *testing.B) {
		page, other := slices.Clone(base), make([]byte, benchPage)
		var cells []leafCell
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%len(idx) == 0 {
				copy(page, base)
			}
			j := idx[i%len(idx)]
			cells = reencode(b, page, other, cells, func(c []leafCell) []leafCell { return slices.Delete(c, j, j+1) })
			page, other = other, page
		}
	})
}

// BenchmarkLeafSplit splits a full leaf (155 rows) in half; each split
// starts from a copy of the full page (in both paths' times).
func BenchmarkLeafSplit(b *testing.B) {
	base := benchLeaf(b, 155, 1)
	b.Run("path=bytes", func(b *testing.B) {
		page, right := make([]byte, benchPage), make([]byte, benchPage)
		sep := make([]byte, 0, benchPage/4)
		b.ReportAllocs()
		for b.Loop() {
			copy(page, base)
			sep = node(page).splitInto(right, 0.5, 2, sep[:0])
		}
	})
	b.Run("path=bytes-insert", func(b *testing.B) { // splitInsertLeaf of a row in the middle
		page, right := make([]byte, benchPage), make([]byte, benchPage)
		sep := make([]byte, 0, benchPage/4)
		k, v := append(benchKey(77), 'x'), make([]byte, benchValue)
		b.ReportAllocs()
		for b.Loop() {
			copy(page, base)
			sep = node(page).splitInsertLeaf(right, 78, k, v, false, len(v), 0.5, 2, sep[:0])
		}
	})
	b.Run("path=reencode", func(b *testing.B) {
		page, left, right := make([]byte, benchPage), make([]byte, benchPage), make([]byte, benchPage)
		sep := make([]byte, 0, benchPage/4)
		var cells []leafCell
		b.ReportAllocs()
		for b.Loop() {
			copy(page, base)
			cells = leafCells(node(page), cells[:0])
			k := splitPoint(len(cells), func(i int) int { return cells[i].size() }, benchPage, 0.5)
			if encodeLeaf(left, cells[:k], 2) != nil || encodeLeaf(right, cells[k:], 2) != nil {
				b.Fatal("encode")
			}
			sep = append(sep[:0], cells[k].key...)
		}
	})
}

// BenchmarkLeafCompact compacts a leaf of 150 rows with every other row
// deleted; path=reencode re-encodes the same leaf. Each starts from a
// copy of the fragmented page.
func BenchmarkLeafCompact(b *testing.B) {
	base := benchLeaf(b, 150, 1)
	for i := 149; i >= 0; i -= 2 {
		node(base).deleteCell(i)
	}
	b.Run("path=bytes", func(b *testing.B) {
		page := make([]byte, benchPage)
		b.ReportAllocs()
		for b.Loop() {
			copy(page, base)
			node(page).compact()
		}
	})
	b.Run("path=reencode", func(b *testing.B) {
		page, other := make([]byte, benchPage), make([]byte, benchPage)
		var cells []leafCell
		b.ReportAllocs()
		for b.Loop() {
			copy(page, base)
			cells = reencode(b, page, other, cells, func(c []leafCell) []leafCell { return c })
		}
	})
}

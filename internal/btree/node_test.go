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

func randomLeafCells(rng *rand.Rand, n, maxVal int) []leafCell {
	seen := map[string]bool{}
	var cells []leafCell
	for len(cells) < n {
		k := make([]byte, 1+rng.IntN(40))
		for i := range k {
			k[i] = byte('a' + rng.IntN(26))
		}
		if seen[string(k)] {
			continue
		}
		seen[string(k)] = true
		c := leafCell{key: k}
		if rng.IntN(10) == 0 {
			c.value = binary.LittleEndian.AppendUint64(nil, rng.Uint64())
			c.overflow, c.length = true, 1<<20+rng.IntN(1000)
		} else {
			c.value = make([]byte, rng.IntN(maxVal))
			for i := range c.value {
				c.value[i] = byte(rng.Uint32())
			}
			c.length = len(c.value)
		}
		cells = append(cells, c)
	}
	slices.SortFunc(cells, func(a, b leafCell) int { return bytes.Compare(a.key, b.key) })
	return cells
}

func TestLeafRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, ps := range []int{4096, 16384, 65536} {
		for trial := 0; trial < 50; trial++ {
			cells := randomLeafCells(rng, rng.IntN(60), 200)
			for leafSpace(cells) > ps {
				cells = cells[:len(cells)/2]
			}
			page := bytes.Repeat([]byte{0xAA}, ps) // dirty: encode must clear
			if err := encodeLeaf(page, cells, 42); err != nil {
				t.Fatal(err)
			}
			if err := checkNode(page); err != nil {
				t.Fatal(err)
			}
			n := node(page)
			if n.kind() != kindLeaf || n.count() != len(cells) || n.txid() != 42 {
				t.Fatalf("header: kind %d count %d txid %d", n.kind(), n.count(), n.txid())
			}
			got := leafCells(n, nil)
			for i, c := range cells {
				g := got[i]
				if !bytes.Equal(g.key, c.key) || !bytes.Equal(g.value, c.value) || g.overflow != c.overflow || g.length != c.length {
					t.Fatalf("cell %d differs", i)
				}
				if j, ok := n.search(c.key); !ok || j != i {
					t.Fatalf("search %q: %d %v, want %d", c.key, j, ok, i)
				}
			}
			// Free space is zero: what compression takes away.
			slotsEnd := nodeHeaderSize + slotSize*n.count()
			if !bytes.Equal(page[slotsEnd:n.upper()], make([]byte, n.upper()-slotsEnd)) {
				t.Fatal("free space not zero-filled")
			}
			if j, ok := n.search([]byte("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz")); ok || j != len(cells) {
				t.Fatalf("search past the end: %d %v", j, ok)
			}
		}
	}
}

func TestBranchRoundTrip(t *testing.T) {
	var cells []branchCell
	for i := 0; i < 100; i++ {
		cells = append(cells, branchCell{key: []byte(fmt.Sprintf("key%04d", i*10)), child: uint64(1000 + i)})
	}
	page := make([]byte, 4096)
	if err := encodeBranch(page, 7, cells, 1); err != nil {
		t.Fatal(err)
	}
	if err := checkNode(page); err != nil {
		t.Fatal(err)
	}
	n := node(page)
	if n.child(0) != 7 || n.child(1) != 1000 || n.child(100) != 1099 {
		t.Fatalf("children %d %d %d", n.child(0), n.child(1), n.child(100))
	}
	for _, c := range []struct {
		key   string
		child int
	}{{"a", 0}, {"key0000", 1}, {"key0005", 1}, {"key0010", 2}, {"key0990", 100}, {"zz", 100}} {
		if got := n.childFor([]byte(c.key)); got != c.child {
			t.Errorf("childFor(%q) = %d, want %d", c.key, got, c.child)
		}
	}
	back := branchCells(n, nil)
	if len(back) != len(cells) || back[5].child != cells[5].child || !bytes.Equal(back[5].key, cells[5].key) {
		t.Fatal("branch cells differ")
	}
	// Too many cells for the page is an error, not a corrupt page.
	big := make([]byte, 256)
	if err := encodeBranch(big, 7, cells, 1); err == nil {
		t.Fatal("oversized branch encoded")
	}
}

func TestCheckNodeRejects(t *testing.T) {
	page := make([]byte, 4096)
	cells := randomLeafCells(rand.New(rand.NewPCG(2, 2)), 20, 50)
	if err := encodeLeaf(page, cells, 1); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(p []byte){
		"kind":        func(p []byte) { p[0] = 9 },
		"count":       func(p []byte) { binary.LittleEndian.PutUint16(p[2:], 5000) },
		"upper":       func(p []byte) { binary.LittleEndian.PutUint32(p[4:], 9999) },
		"slot":        func(p []byte) { binary.LittleEndian.PutUint16(p[nodeHeaderSize:], 10) },
		"order":       func(p []byte) { copy(p[nodeHeaderSize:nodeHeaderSize+2], p[nodeHeaderSize+2:nodeHeaderSize+4]) },
		"key length":  func(p []byte) { p[node(p).cellOff(0)] = 0x7f },
		"leaf child":  func(p []byte) { p[8] = 1 },
		"short page":  nil,
		"huge values": func(p []byte) { off := node(p).cellOff(3); k := 1; p[off+k] = 0xfe; p[off+k+1] = 0x7f },
	}
	for name, f := range cases {
		p := append([]byte(nil), page...)
		if f == nil {
			p = p[:10]
		} else {
			f(p)
		}
		if err := checkNode(p); err == nil {
			t.Errorf("%s: corrupt node accepted", name)
		}
	}
}

func TestSplitPointFillFactor(t *testing.T) {
	size := func(int) int { return 100 }
	for _, c := range []struct {
		fill float64
		want int
	}{{1.0, 163}, {0.75, 122}, {0.5, 81}} {
		if got := splitPoint(200, size, 16384, c.fill); got != c.want {
			t.Errorf("fill %.2f: split at %d, want %d", c.fill, got, c.want)
		}
	}
	if got := splitPoint(2, func(int) int { return 10000 }, 16384, 0.5); got != 1 {
		t.Errorf("two huge cells: split at %d, want 1", got)
	}
	// A small fill factor with a half-page cell early on: the split point
	// moves right until the right half fits.
	sizes := []int{20, 8200}
	for len(sizes) < 80 {
		sizes = append(sizes, 110)
	}
	for _, fill := range []float64{0.1, 0.3, 0.5, 0.75, 1} {
		k := splitPoint(len(sizes), func(i int) int { return sizes[i] }, 16384, fill)
		left, right := nodeHeaderSize, nodeHeaderSize
		for i, n := range sizes {
			if i < k {
				left += n
			} else {
				right += n
			}
		}
		if left > 16384 || right > 16384 || k < 1 || k >= len(sizes) {
			t.Errorf("fill %.2f: split at %d leaves %d and %d bytes", fill, k, left, right)
		}
	}
}

func FuzzCheckNode(f *testing.F) {
	page := make([]byte, 512)
	cells := randomLeafCells(rand.New(rand.NewPCG(3, 3)), 8, 20)
	for leafSpace(cells) > len(page) {
		cells = cells[:len(cells)-1]
	}
	encodeLeaf(page, cells, 1)
	f.Add(page)
	br := make([]byte, 256)
	encodeBranch(br, 3, []branchCell{{[]byte("m"), 4}, {[]byte("t"), 5}}, 2)
	f.Add(br)
	ovf := make([]byte, 128)
	ovf[0], ovf[4] = kindOverflow, 50
	f.Add(ovf)
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = VerifyPage(1, b) // overflow pages too: must not panic
		if checkNode(b) != nil {
			return
		}
		n := node(b)
		for i := 0; i < n.count(); i++ {
			n.key(i)
			if n.kind() == kindLeaf {
				n.value(i)
			} else {
				n.child(i + 1)
			}
		}
		n.search([]byte("k"))
		if n.kind() == kindBranch {
			n.child(n.childFor([]byte("k")))
		}
	})
}

// TestNodeSearchMatchesSortSearch: search and childFor (whose first
// steps are unrolled, see lowerBound) agree with sort.Search over the
// node's keys for every node size from 0 to 300 cells, probing every key,
// the gaps between them and both ends, in leaves and branches.
func TestNodeSearchMatchesSortSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	page := make([]byte, 65536)
	for count := 0; count <= 300; count++ {
		cells := randomLeafCells(rng, count, 8)
		var branch []branchCell
		for _, c := range cells {
			branch = append(branch, branchCell{key: c.key, child: rng.Uint64()})
		}
		for _, kind := range []uint8{kindLeaf, kindBranch} {
			var err error
			if kind == kindLeaf {
				err = encodeLeaf(page, cells, 1)
			} else {
				err = encodeBranch(page, 1, branch, 1)
			}
			if err != nil {
				t.Fatal(err)
			}
			n := node(page)
			var probes [][]byte
			for _, c := range cells {
				probes = append(probes, c.key, append(bytes.Clone(c.key), 0), c.key[:len(c.key)-1])
			}
			probes = append(probes, nil, []byte{0xff, 0xff})
			for _, p := range probes {
				wantGE := sort.Search(count, func(i int) bool { return bytes.Compare(cells[i].key, p) >= 0 })
				wantGT := sort.Search(count, func(i int) bool { return bytes.Compare(cells[i].key, p) > 0 })
				i, eq := n.search(p)
				if i != wantGE || eq != (i < count && bytes.Equal(cells[i].key, p)) {
					t.Fatalf("kind %d, %d cells: search(%q) = %d %v, want %d", kind, count, p, i, eq, wantGE)
				}
				if got := n.childFor(p); got != wantGT {
					t.Fatalf("kind %d, %d cells: childFor(%q) = %d, want %d", kind, count, p, got, wantGT)
				}
			}
		}
	}
}

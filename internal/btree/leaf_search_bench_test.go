package btree

import (
	"bytes"
	"math/rand/v2"
	"sort"
	"testing"
)

// BenchmarkLeafSearchCold: point searches in 4,096 leaves of 16 KiB (64
// MiB, beyond the CPU's caches: most probes miss) of 200-byte rows, 75 a
// leaf, as sysbench's. probes=touched is node.search (the first three
// steps' cells loaded at once: touchProbes); probes=serial the same
// search without it. Run side by side:
//
//	go test -run '^$' -bench 'BenchmarkLeafSearchCold' -count 5 ./internal/btree/
func BenchmarkLeafSearchCold(b *testing.B) {
	const leaves, rows, value = 4096, 75, 184
	pages := make([][]byte, leaves)
	v := make([]byte, value)
	for p := range pages {
		page := make([]byte, benchPage)
		initNode(page, kindLeaf, 0, 1)
		for i := range rows {
			if !node(page).insertLeaf(i, benchKey(p*rows+i), v, false, len(v)) {
				b.Fatalf("row %d does not fit", i)
			}
		}
		pages[p] = page
	}
	serial := func(n node, key []byte) (int, bool) {
		c := n.count()
		i := sort.Search(c, func(i int) bool { return bytes.Compare(n.key(i), key) >= 0 })
		return i, i < c && bytes.Equal(n.key(i), key)
	}
	for _, mode := range []string{"touched", "serial"} {
		b.Run("probes="+mode, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			for b.Loop() {
				r := rng.IntN(leaves * rows)
				n, k := node(pages[r/rows]), benchKey(r)
				var ok bool
				if mode == "touched" {
					_, ok = n.search(k)
				} else {
					_, ok = serial(n, k)
				}
				if !ok {
					b.Fatal("row not found")
				}
			}
		})
	}
}

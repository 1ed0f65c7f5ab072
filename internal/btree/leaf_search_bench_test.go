package btree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
)

// BenchmarkLeafSearchCold: point searches in 64 MiB of leaves (beyond the
// CPU's caches: most probes miss) of 200-byte rows, as sysbench's: 4 KiB
// leaves of 18 rows (the default page size) and 16 KiB leaves of 75.
// probes=touched is node.search (the cells of its first three steps
// loaded at once: touchProbes); probes=serial the same search without
// it. Run side by side:
//
//	go test -run '^$' -bench 'BenchmarkLeafSearchCold' -count 5 ./internal/btree/
func BenchmarkLeafSearchCold(b *testing.B) {
	const value = 184
	serial := func(n node, key []byte) (int, bool) {
		c := n.count()
		i := sort.Search(c, func(i int) bool { return bytes.Compare(n.key(i), key) >= 0 })
		return i, i < c && bytes.Equal(n.key(i), key)
	}
	for _, size := range []struct{ page, rows int }{{4096, 18}, {16384, 75}} {
		leaves := 64 << 20 / size.page
		pages := make([][]byte, leaves)
		v := make([]byte, value)
		for p := range pages {
			page := make([]byte, size.page)
			initNode(page, kindLeaf, 0, 1)
			for i := range size.rows {
				if !node(page).insertLeaf(i, benchKey(p*size.rows+i), v, false, len(v)) {
					b.Fatalf("row %d does not fit", i)
				}
			}
			pages[p] = page
		}
		for _, mode := range []string{"touched", "serial"} {
			b.Run(fmt.Sprintf("page=%dKiB/probes=%s", size.page>>10, mode), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				for b.Loop() {
					r := rng.IntN(leaves * size.rows)
					n, k := node(pages[r/size.rows]), benchKey(r)
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
}

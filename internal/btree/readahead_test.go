package btree

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/bufferpool"
)

// coldTree loads n rows (keys k%06d, 100-byte values) through a large
// pool, writes them back, and returns the tree over a new pool of cache
// bytes that holds none of its pages, the root and the rows.
func coldTree(t *testing.T, n int, cache int64) (*Tree, *bufferpool.Pool, PageID, []kv) {
	t.Helper()
	tr, s, p := newTestTree(t, 4096, 8<<20, 1.0)
	tx := tr.Begin(0, 1, 0)
	var rows []kv
	for i := range n {
		e := kv{fmt.Sprintf("k%06d", i), strings.Repeat(string(rune('a'+i%26)), 100)}
		if err := tx.Put([]byte(e.k), []byte(e.v)); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, e)
	}
	root, _, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	cold, err := bufferpool.New(s, bufferpool.Options{CacheSize: cache, Partitions: 2, FixedShare: true, CompressedShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cold.Close() })
	return New(cold, 1.0), cold, root, rows
}

// A bounded scan reads its leaves ahead, readAheadMax at a time, so that
// none of them is a miss of its own; forwards and backwards. A scan
// without a bound reads nothing ahead.
func TestBoundedScansReadAhead(t *testing.T) {
	const n = 3000 // about 90 leaves of 35 rows
	tr, p, root, rows := coldTree(t, n, 2<<20)
	scan := func(lower, upper []byte, back bool) int {
		c := tr.NewCursor(root, lower, upper)
		defer c.Release()
		got := 0
		if back {
			for ok := c.Last(); ok; ok = c.Prev() {
				got++
			}
		} else {
			for ok := c.First(); ok; ok = c.Next() {
				got++
			}
		}
		if err := c.Err(); err != nil {
			t.Fatal(err)
		}
		return got
	}
	key := func(i int) []byte { return []byte(rows[i].k) }

	before := p.Stats()
	if got := scan(key(100), key(1300), false); got != 1200 { // about 35 leaves
		t.Fatalf("forward scan: %d rows, want 1200", got)
	}
	st := p.Stats()
	if misses := st.Misses - before.Misses; misses > 3 || st.ReadAheadHits-before.ReadAheadHits < 2*readAheadMax {
		t.Fatalf("forward scan of ~35 leaves: %d misses, %d read-ahead hits; want the branches only (≤ 3), and more than two read-aheads' worth",
			misses, st.ReadAheadHits-before.ReadAheadHits)
	}
	before = st
	if got := scan(key(1500), key(2700), true); got != 1200 {
		t.Fatalf("backward scan: %d rows, want 1200", got)
	}
	st = p.Stats()
	if misses := st.Misses - before.Misses; misses > 3 || st.ReadAheadHits-before.ReadAheadHits < 2*readAheadMax {
		t.Fatalf("backward scan of ~35 leaves: %d misses, %d read-ahead hits; want ≤ 3 and more than two read-aheads' worth",
			misses, st.ReadAheadHits-before.ReadAheadHits)
	}
	before = st
	c := tr.NewCursor(root, key(2750), nil) // no upper bound
	got := 0
	for ok := c.First(); ok && got < 200; ok = c.Next() {
		got++
	}
	c.Release()
	if st := p.Stats(); st.ReadAheadPages != before.ReadAheadPages || st.Misses-before.Misses < 5 {
		t.Fatalf("unbounded scan: %d pages read ahead, %d misses; want none read ahead", st.ReadAheadPages-before.ReadAheadPages, st.Misses-before.Misses)
	}
}

// Bounded cursors over a pool that holds a fraction of the tree (pages
// read ahead, evicted and read again as the cursors move) see exactly the
// rows of the model.
func TestCursorModelWithReadAhead(t *testing.T) {
	const n = 3000
	tr, p, root, rows := coldTree(t, n, 256<<10)
	rng := rand.New(rand.NewPCG(7, 7))
	probe := func() []byte { return []byte(fmt.Sprintf("k%06d", rng.IntN(n+2)-1)) }
	for range 60 {
		var lower, upper []byte
		if rng.IntN(4) > 0 {
			lower = probe()
		}
		if rng.IntN(4) > 0 {
			upper = probe()
		}
		want := slices.DeleteFunc(slices.Clone(rows), func(e kv) bool {
			return (lower != nil && e.k < string(lower)) || (upper != nil && e.k >= string(upper))
		})
		runCursorModel(t, tr, root, lower, upper, want, rng, probe)
	}
	if st := p.Stats(); st.ReadAheadPages == 0 || st.ReadAheadHits == 0 {
		t.Fatalf("no read-ahead: %d pages, %d hits", st.ReadAheadPages, st.ReadAheadHits)
	}
}

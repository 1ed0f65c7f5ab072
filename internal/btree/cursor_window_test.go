package btree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestCursorBoundsModel moves bounded cursors at random (seeks, First,
// Last, Next, Prev, turning around, running off either end, and the
// window-only moves) over trees whose leaves hold more rows than one
// decoded window and fewer, with keys and values whose lengths take one-
// and two-byte varints, empty values and values in overflow pages, and
// checks every position, key and value against the model restricted to
// the bounds.
func TestCursorBoundsModel(t *testing.T) {
	for _, c := range []struct {
		name     string
		pageSize int
		keys     int
		key      func(rng *rand.Rand, i int) string
		value    func(rng *rand.Rand, tr *Tree) string
	}{
		// About 200 rows a leaf: several windows per leaf.
		{"small-rows", 16384, 3000, func(_ *rand.Rand, i int) string { return fmt.Sprintf("k%06d", i) },
			func(rng *rand.Rand, _ *Tree) string { return strings.Repeat("v", rng.IntN(60)) }},
		// Keys of 130+ bytes and values of 200+ (two-byte lengths), empty
		// values and a few overflow values: a window is more than a leaf.
		{"long-rows", 4096, 600, func(_ *rand.Rand, i int) string { return fmt.Sprintf("%0130d", i) },
			func(rng *rand.Rand, tr *Tree) string {
				switch rng.IntN(10) {
				case 0:
					return ""
				case 1:
					return strings.Repeat("o", tr.pageSize/2+rng.IntN(5000))
				}
				return strings.Repeat("w", 200+rng.IntN(200))
			}},
		// The largest pages: offsets and lengths up to the 16-bit limit of
		// the decoded window (values up to a quarter page inline).
		{"64KiB-pages", 64 << 10, 400, func(_ *rand.Rand, i int) string { return fmt.Sprintf("%0300d", i) },
			func(rng *rand.Rand, tr *Tree) string {
				if rng.IntN(8) == 0 {
					return ""
				}
				return strings.Repeat("x", rng.IntN(tr.MaxInlineValueSize()+1))
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, _, _ := newTestTree(t, c.pageSize, 4<<20, 1.0)
			rng := rand.New(rand.NewPCG(uint64(c.pageSize), 9))
			var all []kv
			tx := tr.Begin(0, 1, 0, 0)
			for i := 0; i < c.keys; i++ {
				if rng.IntN(4) == 0 {
					continue // gaps, so that bounds and seeks fall between keys
				}
				e := kv{c.key(rng, i), c.value(rng, tr)}
				if err := tx.Put([]byte(e.k), []byte(e.v)); err != nil {
					t.Fatal(err)
				}
				all = append(all, e)
			}
			root, _, err := tx.Commit()
			if err != nil {
				t.Fatal(err)
			}
			probe := func() []byte { return []byte(c.key(rng, rng.IntN(c.keys+2)-1)) }
			for round := 0; round < 300; round++ {
				var lower, upper []byte
				if rng.IntN(3) > 0 {
					lower = probe()
				}
				if rng.IntN(3) > 0 {
					upper = probe()
				}
				want := slices.DeleteFunc(slices.Clone(all), func(e kv) bool {
					return (lower != nil && e.k < string(lower)) || (upper != nil && e.k >= string(upper))
				})
				runCursorModel(t, tr, root, lower, upper, want, rng, probe)
			}
		})
	}
}

// runCursorModel makes random moves of one cursor bounded by [lower,
// upper) and checks each against want, the model's entries in bounds.
func runCursorModel(t *testing.T, tr *Tree, root PageID, lower, upper []byte, want []kv, rng *rand.Rand, probe func() []byte) {
	t.Helper()
	c := tr.NewCursor(root, lower, upper)
	defer c.Release()
	pos := -1 // index in want; -1 or len(want) when invalid
	search := func(k []byte) int {
		i, _ := slices.BinarySearchFunc(want, string(k), func(e kv, k string) int { return strings.Compare(e.k, k) })
		return i
	}
	for step := 0; step < 200; step++ {
		var ok bool
		var op string
		switch r := rng.IntN(20); {
		case r == 0:
			op, ok = "First", c.First()
			pos = 0
		case r == 1:
			op, ok = "Last", c.Last()
			pos = len(want) - 1
		case r == 2:
			k := probe()
			op, ok = fmt.Sprintf("SeekGE(%.12q)", k), c.SeekGE(k)
			pos = search(k)
			if lower != nil && string(k) < string(lower) {
				pos = 0
			}
		case r == 3:
			k := probe()
			op, ok = fmt.Sprintf("SeekLT(%.12q)", k), c.SeekLT(k)
			pos = search(k) - 1
			if upper != nil && string(k) > string(upper) {
				pos = len(want) - 1
			}
		case r < 12:
			if pos < 0 || pos >= len(want) {
				continue // invalid: Next and Prev stay invalid
			}
			if r < 8 {
				before := string(c.Key())
				if c.NextInWindow() {
					pos++
					ok, op = true, "NextInWindow"
					break
				}
				if string(c.Key()) != before {
					t.Fatalf("NextInWindow reported false and moved the cursor")
				}
			}
			op, ok = "Next", c.Next()
			pos++
		default:
			if pos < 0 || pos >= len(want) {
				continue
			}
			if r < 15 && c.PrevInWindow() {
				pos--
				ok, op = true, "PrevInWindow"
				break
			}
			op, ok = "Prev", c.Prev()
			pos--
		}
		if err := c.Err(); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		inRange := pos >= 0 && pos < len(want)
		if ok != inRange || c.Valid() != ok {
			t.Fatalf("bounds [%.12q, %.12q), %s: valid %v (Valid %v), want %v (position %d of %d)", lower, upper, op, ok, c.Valid(), inRange, pos, len(want))
		}
		if !ok {
			if pos < 0 {
				pos = -1
			} else {
				pos = len(want)
			}
			continue
		}
		if k := c.Key(); string(k) != want[pos].k {
			t.Fatalf("%s: key %.12q, want %.12q", op, k, want[pos].k)
		}
		v, inline := c.InlineValue()
		full := c.Value()
		if !bytes.Equal(full, []byte(want[pos].v)) || (inline && !bytes.Equal(v, full)) {
			t.Fatalf("%s at %.12q: value of %d bytes (inline %v), want %d", op, want[pos].k, len(full), inline, len(want[pos].v))
		}
		if inline != tr.Inline(len(want[pos].k), len(want[pos].v)) {
			t.Fatalf("%s: a value of %d bytes inline: %v", op, len(want[pos].v), inline)
		}
	}
}

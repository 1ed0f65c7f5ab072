package btree

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/bufferpool"
)

// bigValue is a deterministic value of n bytes that differs per seed.
func bigValue(seed, n int) []byte {
	v := make([]byte, n)
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(n)))
	for i := range v {
		v[i] = byte('a' + rng.IntN(26))
	}
	return v
}

// TestOverflowValues stores values around every boundary (inline limit,
// exact multiples of an overflow page) and reads them back through Get,
// Tx.Get and cursors, in the writing transaction and after commit.
func TestOverflowValues(t *testing.T) {
	tr, _, _ := newTestTree(t, 4096, 1<<20, 1)
	inline, capacity := tr.MaxInlineValueSize(), tr.overflowCapacity()
	sizes := []int{0, 1, inline - 1, inline, inline + 1, capacity - 1, capacity, capacity + 1,
		2 * capacity, 2*capacity + 1, 37 * capacity / 3, 300_000}
	tx := tr.Begin(0, 1, 0, 0)
	for i, n := range sizes {
		if err := tx.Put([]byte(fmt.Sprintf("k%02d", i)), bigValue(i, n)); err != nil {
			t.Fatalf("put %d bytes: %v", n, err)
		}
	}
	for i, n := range sizes {
		v, ok, err := tx.Get([]byte(fmt.Sprintf("k%02d", i)), nil)
		if err != nil || !ok || !bytes.Equal(v, bigValue(i, n)) {
			t.Fatalf("in-transaction get of %d bytes: ok %v err %v len %d", n, ok, err, len(v))
		}
	}
	root, _, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range sizes {
		v, ok, err := tr.Get(root, []byte(fmt.Sprintf("k%02d", i)), []byte("prefix"))
		if err != nil || !ok || !bytes.Equal(v, append([]byte("prefix"), bigValue(i, n)...)) {
			t.Fatalf("get of %d bytes: ok %v err %v len %d", n, ok, err, len(v))
		}
	}
	c := tr.NewCursor(root, nil, nil)
	defer c.Release()
	i := 0
	for ok := c.First(); ok; ok = c.Next() {
		if !bytes.Equal(c.Value(), bigValue(i, sizes[i])) {
			t.Fatalf("cursor value %d (%d bytes) differs", i, sizes[i])
		}
		i++
	}
	if c.Err() != nil || i != len(sizes) {
		t.Fatalf("cursor: %d values, err %v", i, c.Err())
	}
}

// countPages walks a version and returns its pages, checking that no page
// is reached twice.
func countPages(t *testing.T, tr *Tree, root PageID) map[PageID]bool {
	t.Helper()
	seen := map[PageID]bool{}
	if err := tr.Walk(root, func(id PageID) {
		if seen[id] {
			t.Fatalf("page %d reached twice", id)
		}
		seen[id] = true
	}); err != nil {
		t.Fatal(err)
	}
	return seen
}

// TestOverflowPageAccounting: replacing and deleting large values hands
// their chains back for freeing; Walk reaches exactly the live chains; an
// aborted transaction returns every page it created.
func TestOverflowPageAccounting(t *testing.T) {
	tr, _, pool := newTestTree(t, 4096, 1<<20, 1)
	capacity := tr.overflowCapacity()
	tx := tr.Begin(0, 1, 0, 0)
	for i := 0; i < 10; i++ {
		if err := tx.Put([]byte(fmt.Sprintf("k%d", i)), bigValue(i, 3*capacity)); err != nil {
			t.Fatal(err)
		}
	}
	// Replace a value written in this same transaction: its pages are
	// scrap, not part of the committed version.
	if err := tx.Put([]byte("k0"), []byte("small")); err != nil {
		t.Fatal(err)
	}
	root, freed, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if len(freed) != 3 {
		t.Errorf("commit freed %d pages, want the 3 of the replaced chain", len(freed))
	}
	live := countPages(t, tr, root)
	if want := 1 + 9*3; len(live) != want { // one leaf and nine chains
		t.Errorf("walk reached %d pages, want %d", len(live), want)
	}
	for _, id := range freed {
		if live[id] {
			t.Errorf("freed page %d is still reachable", id)
		}
	}

	// Version 1 stays readable (as for a snapshot): its pages are frozen.
	tx = tr.Begin(root, 2, 1, 1)
	if _, err := tx.Delete([]byte("k1")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Put([]byte("k2"), bigValue(99, 2*capacity)); err != nil {
		t.Fatal(err)
	}
	root2, freed, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	// The old leaf, k1's chain and k2's old chain.
	if len(freed) != 1+3+3 {
		t.Errorf("commit freed %d pages, want 7", len(freed))
	}
	live2 := countPages(t, tr, root2)
	if want := 1 + 7*3 + 2; len(live2) != want {
		t.Errorf("walk reached %d pages, want %d", len(live2), want)
	}
	// The old version is intact (copy-on-write: its chains are not freed
	// until the caller frees them).
	if v, ok, err := tr.Get(root, []byte("k1"), nil); err != nil || !ok || !bytes.Equal(v, bigValue(1, 3*capacity)) {
		t.Fatalf("old version lost k1: %v %v", ok, err)
	}

	// Not frozen: the leaf changes in place, and abort puts it back.
	tx = tr.Begin(root2, 3, 1, 1)
	if err := tx.Put([]byte("k9"), bigValue(5, 5*capacity)); err != nil {
		t.Fatal(err)
	}
	created, err := tx.Abort()
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 5 { // the new chain; the leaf changed in place
		t.Errorf("abort returned %d pages, want 5", len(created))
	}
	if v, ok, err := tr.Get(root2, []byte("k9"), nil); err != nil || !ok || !bytes.Equal(v, bigValue(9, 3*capacity)) {
		t.Fatalf("k9 after the abort: %v %v", ok, err)
	}
	for _, id := range created {
		if err := pool.FreePage(id); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOverflowCorruptChain: a chain that is cut, too long, loops or
// names a node page is reported as corruption, never returned as a value.
func TestOverflowCorruptChain(t *testing.T) {
	tr, _, pool := newTestTree(t, 4096, 1<<20, 1)
	capacity := tr.overflowCapacity()
	want := bigValue(1, 3*capacity)
	tx := tr.Begin(0, 1, 0, 0)
	if err := tx.Put([]byte("big"), want); err != nil {
		t.Fatal(err)
	}
	root, _, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	var chain []PageID
	if err := tr.Walk(root, func(id PageID) {
		if id != root {
			chain = append(chain, id)
		}
	}); err != nil || len(chain) != 3 {
		t.Fatalf("chain %v err %v", chain, err)
	}
	setNext := func(id, next PageID) {
		pg, err := pool.Get(id, bufferpool.Exclusive)
		if err != nil {
			t.Fatal(err)
		}
		binary.LittleEndian.PutUint64(pg.Data()[8:], uint64(next))
		pg.Release()
	}
	for _, tc := range []struct {
		name string
		page int // chain index whose next pointer is changed
		next PageID
	}{
		{"cut", 1, 0},
		{"loop", 2, chain[0]},
		{"node", 0, root},
		{"too long", 2, chain[1]},
	} {
		pg, err := pool.Get(chain[tc.page], bufferpool.Shared)
		if err != nil {
			t.Fatal(err)
		}
		saved := PageID(binary.LittleEndian.Uint64(pg.Data()[8:]))
		pg.Release()
		setNext(chain[tc.page], tc.next)
		v, _, err := tr.Get(root, []byte("big"), nil)
		if !errors.Is(err, ErrCorruptNode) {
			t.Errorf("%s: Get returned %d bytes, err %v; want ErrCorruptNode", tc.name, len(v), err)
		}
		if err := tr.Walk(root, func(PageID) {}); !errors.Is(err, ErrCorruptNode) {
			t.Errorf("%s: Walk err %v", tc.name, err)
		}
		setNext(chain[tc.page], saved)
	}
	if v, _, err := tr.Get(root, []byte("big"), nil); err != nil || !bytes.Equal(v, want) {
		t.Fatalf("restored chain: %v", err)
	}
}

// TestVerifyOverflowPage: the pool's load-time check accepts overflow
// pages and rejects malformed ones.
func TestVerifyOverflowPage(t *testing.T) {
	page := make([]byte, 4096)
	page[0] = kindOverflow
	binary.LittleEndian.PutUint32(page[4:], 100)
	if err := VerifyPage(7, page); err != nil {
		t.Fatalf("valid overflow page: %v", err)
	}
	binary.LittleEndian.PutUint32(page[4:], 4096)
	if err := VerifyPage(7, page); !errors.Is(err, ErrCorruptNode) {
		t.Errorf("overlong used: %v", err)
	}
	binary.LittleEndian.PutUint32(page[4:], 0)
	if err := VerifyPage(7, page); !errors.Is(err, ErrCorruptNode) {
		t.Errorf("empty overflow page: %v", err)
	}
	binary.LittleEndian.PutUint32(page[4:], 10)
	page[2] = 1
	if err := VerifyPage(7, page); !errors.Is(err, ErrCorruptNode) {
		t.Errorf("reserved byte: %v", err)
	}
}

// TestReviewOverflowHugeLength: a leaf cell whose overflow length is
// beyond MaxValueSize is corruption. The load-time check rejects it, and
// a read never tries to allocate that length (which panics, or for a
// length below Go's allocation limit kills the process out of memory).
func TestReviewOverflowHugeLength(t *testing.T) {
	tr, _, pool := newTestTree(t, 4096, 1<<20, 1)
	tx := tr.Begin(0, 1, 0, 0)
	if err := tx.Put([]byte("big"), bigValue(1, 3*tr.overflowCapacity())); err != nil {
		t.Fatal(err)
	}
	root, _, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	pg, err := pool.Get(root, bufferpool.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	cells := leafCells(node(pg.Data()), nil)
	if len(cells) != 1 || !cells[0].overflow {
		t.Fatalf("leaf cells %+v", cells)
	}
	c := leafCell{key: bytes.Clone(cells[0].key), value: bytes.Clone(cells[0].value), overflow: true, length: 1 << 62}
	if err := encodeLeaf(pg.Data(), []leafCell{c}, 1); err != nil {
		t.Fatal(err)
	}
	page := bytes.Clone(pg.Data())
	pg.Release()
	if err := VerifyPage(root, page); !errors.Is(err, ErrCorruptNode) {
		t.Errorf("VerifyPage of a leaf with a 2^62-byte overflow value: %v", err)
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("Get panicked: %v", r)
			}
		}()
		if _, _, err := tr.Get(root, []byte("big"), nil); !errors.Is(err, ErrCorruptNode) {
			t.Errorf("Get: %v, want ErrCorruptNode", err)
		}
	}()
	if err := tr.Walk(root, func(PageID) {}); !errors.Is(err, ErrCorruptNode) {
		t.Errorf("Walk: %v, want ErrCorruptNode", err)
	}
}

// TestHalfPageValuesInline: with 4 KiB pages, values longer than a quarter
// page stay in their leaf while the cell fits in half the page (8-byte
// keys: values up to about 2,000 bytes), so such values take no overflow
// page; leaves of them split like any others, and every value reads back.
func TestHalfPageValuesInline(t *testing.T) {
	tr, _, _ := newTestTree(t, 4096, 1<<20, 1)
	rng := rand.New(rand.NewPCG(11, 12))
	tx := tr.Begin(0, 1, 0, 0)
	sizes := map[string]int{}
	for i := range 400 {
		k := fmt.Sprintf("k%07d", rng.IntN(1_000_000))
		n := tr.MaxInlineValueSize() + 1 + rng.IntN(1100) // 1009..2108: most inline, some not
		sizes[k] = n
		if err := tx.Put([]byte(k), bigValue(i, n)); err != nil {
			t.Fatal(err)
		}
	}
	root, _, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	c := tr.NewCursor(root, nil, nil)
	defer c.Release()
	inlined, seen := 0, 0
	for ok := c.First(); ok; ok = c.Next() {
		k := string(c.Key())
		n := sizes[k]
		if len(c.Value()) != n {
			t.Fatalf("%s: %d bytes, want %d", k, len(c.Value()), n)
		}
		_, inline := c.InlineValue()
		// A leaf cell: a 1-byte key length, a 2-byte value length, the
		// key, the value and a 2-byte slot.
		if want := 1+2+len(k)+n+2 <= (4096-nodeHeaderSize)/2; inline != want {
			t.Fatalf("%s: a %d-byte value inline %v, want %v", k, n, inline, want)
		}
		if inline {
			inlined++
		}
		seen++
	}
	if c.Err() != nil || seen != len(sizes) {
		t.Fatalf("cursor: %d values of %d, err %v", seen, len(sizes), c.Err())
	}
	if inlined < seen/2 || inlined == seen {
		t.Fatalf("%d of %d values inline: want most, not all", inlined, seen)
	}
}

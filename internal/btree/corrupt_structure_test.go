package btree

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// Pages that are wrong though their checksums are good (a bug, a page
// reused wrongly) are reported as corrupt, not read, edited or looped over.
// (Found by a reviewer, thirty-second session.)

// TestNonMinimalLengthRejected: a cell whose key length is not in its
// shortest form (0x81 0x00 for 1) passed checkNode, and replacing its
// value then panicked inside a commit (the edits size a cell's header by
// the shortest form).
func TestNonMinimalLengthRejected(t *testing.T) {
	page := make([]byte, 4096)
	initNode(page, kindLeaf, 0, 1)
	cell := []byte{0x81, 0x00, 4, 'a', 'x', 'y'} // key "a", value "xy"
	off := len(page) - len(cell)
	copy(page[off:], cell)
	n := node(page)
	n.setCellOff(0, off)
	n.setCount(1)
	n.setUpper(off)
	if err := VerifyPage(1, page); !errors.Is(err, ErrCorruptNode) {
		t.Fatalf("VerifyPage: %v", err)
	}
	page[off], page[off+1] = 1, 4 // shortest form, as the encoder writes
	copy(page[off+2:], "axy")
	page[len(page)-1] = 0
	if err := VerifyPage(1, page); err != nil {
		t.Fatalf("the same cell in its shortest form: %v", err)
	}
}

// TestOverlappingCellsRejected: a cell inside another's value passed
// checkNode, and deleting the outer cell zeroed the inner one's key.
func TestOverlappingCellsRejected(t *testing.T) {
	page := make([]byte, 4096)
	initNode(page, kindLeaf, 0, 1)
	x := len(page) - 8
	copy(page[x:], []byte{1, 10, 'a', 1, 2, 'b', 'v', 0}) // "a" → 5 bytes holding cell "b" → "v"
	n := node(page)
	n.setCellOff(0, x)
	n.setCellOff(1, x+3)
	n.setCount(2)
	n.setUpper(x)
	if err := VerifyPage(1, page); !errors.Is(err, ErrCorruptNode) {
		t.Fatalf("VerifyPage: %v", err)
	}
}

// treeInMemory is a tree over a pool of 256 pages over a store in memory
// (closed at cleanup).
func treeInMemory(t *testing.T) (*Tree, *bufferpool.Pool) {
	t.Helper()
	cd, _ := codec.New(codec.LZ4, 0)
	s, err := pagestore.Open("db", pagestore.Options{FS: vfs.NewMem(), PageSize: 4096, Codec: cd, DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Allocate() // page 0: the meta page's
	pool, err := bufferpool.New(s, bufferpool.Options{CacheSize: 256 * 4096, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close(); s.Close() })
	return New(pool, 1), pool
}

// TestBranchPointingUpIsCorrupt: a branch whose child names the branch
// itself made Get loop forever (holding the database's tree latch), a
// write's descent grow its path until memory ran out, and Walk overflow
// the stack (at Open: the process died). Each now fails with
// ErrCorruptNode.
func TestBranchPointingUpIsCorrupt(t *testing.T) {
	tr, pool := treeInMemory(t)
	tx := tr.Begin(0, 1, 0, 0)
	for i := range 200 {
		if err := tx.Put([]byte(fmt.Sprintf("k%05d", i)), make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	root, _, _ := tx.Commit()
	pg, err := pool.Get(root, bufferpool.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if node(pg.Data()).kind() != kindBranch {
		t.Fatal("the root is not a branch")
	}
	node(pg.Data()).setChild(0, uint64(root))
	pg.MarkDirty()
	pg.Release()
	for name, op := range map[string]func() error{
		"Get":  func() error { _, _, err := tr.Get(root, []byte("a"), nil); return err },
		"Put":  func() error { return tr.Begin(root, 2, 1, 1).Put([]byte("a"), []byte("v")) },
		"Walk": func() error { return tr.Walk(root, func(PageID) {}) },
		"SeekGE": func() error {
			c := tr.NewCursor(root, nil, nil)
			defer c.Release()
			if c.SeekGE([]byte("a")) {
				return nil
			}
			return c.Err()
		},
	} {
		done := make(chan error, 1)
		go func() { done <- op() }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrCorruptNode) {
				t.Errorf("%s: %v, want ErrCorruptNode", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s on a tree whose branch points at itself has not returned after 5 s", name)
		}
	}
}

// TestMarkSpan: checkNode's overlap bitmap marks exactly [from, to) and
// sees any byte of it marked before, at every alignment.
func TestMarkSpan(t *testing.T) {
	for from := 0; from < 200; from++ {
		for to := from + 1; to < 200; to++ {
			used := make([]uint64, 4)
			if !markSpan(used, from, to) {
				t.Fatalf("[%d, %d) in an empty bitmap refused", from, to)
			}
			for i := 0; i < 256; i++ {
				if set := used[i/64]>>(i%64)&1 == 1; set != (i >= from && i < to) {
					t.Fatalf("[%d, %d): bit %d = %v", from, to, i, set)
				}
			}
			if markSpan(used, to-1, to+1) || markSpan(used, from-min(from, 1), from+1) {
				t.Fatalf("[%d, %d): an overlapping span accepted", from, to)
			}
			if !markSpan(used, to, to+1) {
				t.Fatalf("[%d, %d): the adjacent byte refused", from, to)
			}
		}
	}
}

// TestCollapseOfRootPointingUpIsCorrupt: a keyless branch that points back
// up at the root, reached only when a Delete empties the root's other
// child and collapseRoot follows the single children: it looped forever
// holding the writer's locks (the one descent the first depth bound
// missed; found by a reviewer).
func TestCollapseOfRootPointingUpIsCorrupt(t *testing.T) {
	tr, pool := treeInMemory(t)
	tx := tr.Begin(0, 1, 0, 0)
	const n = 40
	for i := range n {
		if err := tx.Put([]byte(fmt.Sprintf("k%05d", i)), make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	root, _, _ := tx.Commit()
	// X: a keyless branch whose only child is the root.
	xid, err := pool.Allocate()
	if err != nil {
		t.Fatal(err)
	}
	xp, err := pool.Create(xid)
	if err != nil {
		t.Fatal(err)
	}
	initNode(xp.Data(), kindBranch, uint64(root), 1)
	xp.MarkDirty()
	xp.Release()
	pg, err := pool.Get(root, bufferpool.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	r := node(pg.Data())
	if r.kind() != kindBranch || r.count() != 1 {
		t.Fatalf("root kind %d count %d", r.kind(), r.count())
	}
	sep := string(r.key(0))
	r.setChild(0, uint64(xid))
	pg.MarkDirty()
	pg.Release()
	done := make(chan error, 1)
	go func() {
		tx := tr.Begin(root, 2, 0, 0)
		for i := range n {
			k := fmt.Sprintf("k%05d", i)
			if k < sep {
				continue
			}
			if _, err := tx.Delete([]byte(k)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrCorruptNode) {
			t.Errorf("Delete: %v, want ErrCorruptNode", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Delete has not returned after 5 s (collapseRoot loops R -> X -> R)")
	}
}

package btree

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/bufferpool"
)

// TestSnapshotReadersDoNotWaitForACommit: a commit that changes a leaf
// of an open snapshot in place holds it exclusively for the rest of its
// write — here while it reads the old value's overflow chain to drop it,
// which something else holds — and the snapshot's point reads and
// cursors read the leaf's version meanwhile instead of waiting for it.
func TestSnapshotReadersDoNotWaitForACommit(t *testing.T) {
	tr, _, pool := newTestTree(t, 4096, 16<<20, 1.0)
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%05d", i)) }
	tx := tr.Begin(0, 1, 0, 0)
	for i := 0; i < 40; i++ {
		if err := tx.Put(key(i), []byte("small")); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Put(key(20), bytes.Repeat([]byte("o"), 3*4096)); err != nil {
		t.Fatal(err)
	}
	root, _, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	_, ref, found, err := tr.Lookup(root, key(20), nil)
	if err != nil || !found || !ref.overflow {
		t.Fatalf("lookup: %v %v %+v", err, found, ref)
	}
	// Something else holds the chain's first page.
	ovf, err := pool.Get(ref.first, bufferpool.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	held := true
	defer func() {
		if held {
			ovf.Release()
		}
	}()
	// Transaction 2, under a snapshot at txid 1, replaces key 20's value:
	// it takes the leaf (recording its version), then waits for the chain.
	wdone := make(chan error, 1)
	go func() {
		tx := tr.Begin(root, 2, 0, 1)
		err := tx.Put(key(20), []byte("new"))
		if err == nil {
			_, _, err = tx.Commit()
		}
		wdone <- err
	}()
	for tr.Versions() == 0 {
		runtime.Gosched()
	}
	rdone := make(chan error, 1)
	go func() {
		if v, ok, err := tr.GetAt(root, 1, key(3), nil); err != nil || !ok || string(v) != "small" {
			rdone <- fmt.Errorf("GetAt = %q %v %v", v, ok, err)
			return
		}
		c := new(Cursor)
		tr.InitCursorAt(c, root, 1, nil, nil)
		defer c.Release()
		if !c.SeekGE(key(5)) || string(c.Value()) != "small" {
			rdone <- fmt.Errorf("cursor at %q = %q: %v", c.Key(), c.Value(), c.Err())
			return
		}
		rdone <- nil
	}()
	select {
	case err := <-rdone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a snapshot's reads waited for a commit holding their leaf")
	}
	ovf.Release()
	held = false
	if err := <-wdone; err != nil {
		t.Fatal(err)
	}
	if v, _, err := tr.GetAt(root, 1, key(20), nil); err != nil || len(v) != 3*4096 {
		t.Fatalf("snapshot reads key 20 as %d bytes, %v", len(v), err)
	}
}

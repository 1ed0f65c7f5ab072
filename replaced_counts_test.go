package strata

import (
	"fmt"
	"testing"
)

// TestReplacedCounts: Stats.ReplacedDurable counts the copies a commit
// makes of pages a checkpoint froze, once per page and checkpoint;
// ReplacedFresh the copies an open snapshot forces of pages written since
// the checkpoint. A page changed again with nothing new frozen is changed
// in place and counts nothing.
func TestReplacedCounts(t *testing.T) {
	const rows = 2000
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%05d", i)) }
	pad := make([]byte, 100)
	db := memTable(t, 16<<20, 1, 1<<40, rows, key, pad)
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	set := func(v byte) (durable, fresh int64) {
		t.Helper()
		before := db.Stats()
		if err := db.Set(key(rows/2), []byte{v}); err != nil {
			t.Fatal(err)
		}
		after := db.Stats()
		return after.ReplacedDurable - before.ReplacedDurable, after.ReplacedFresh - before.ReplacedFresh
	}
	// A leaf, its parents and the root: a path of the checkpoint's tree.
	if d, f := set(1); d < 2 || f != 0 {
		t.Fatalf("first change after a checkpoint replaced %d durable and %d fresh pages: want the path copied", d, f)
	}
	if d, f := set(2); d != 0 || f != 0 {
		t.Fatalf("second change replaced %d durable and %d fresh pages: want it in place", d, f)
	}
	snap, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	if d, f := set(3); d != 0 || f < 2 {
		t.Fatalf("change under a snapshot replaced %d durable and %d fresh pages: want the snapshot's path copied", d, f)
	}
	if got, err := snap.Get(key(rows / 2)); err != nil || len(got) != 1 || got[0] != 2 {
		t.Fatalf("snapshot reads %v, %v: want the value before it", got, err)
	}
	snap.Close()
	set(4) // the copies of the closed snapshot's version are fresh and unfrozen now
	if d, f := set(5); d != 0 || f != 0 {
		t.Fatalf("change after the snapshot closed replaced %d durable and %d fresh pages: want it in place", d, f)
	}
}

package strata

import (
	"fmt"
	"testing"
)

// TestReplacedCounts: Stats.ReplacedDurable counts the copies a commit
// makes of pages a checkpoint froze, once per page and checkpoint, with
// their paths; under an open snapshot, a page written since the
// checkpoint changes in place leaving one version (SnapshotVersions), its
// path unchanged (ReplacedFresh, the copies, stays). A page changed again
// with nothing new frozen is changed in place and counts nothing.
func TestReplacedCounts(t *testing.T) {
	const rows = 2000
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%05d", i)) }
	pad := make([]byte, 100)
	db := memTable(t, 16<<20, 1, 1<<40, rows, key, pad)
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	versions := int64(0)
	set := func(v byte) (durable, fresh int64) {
		t.Helper()
		before := db.Stats()
		if err := db.Set(key(rows/2), []byte{v}); err != nil {
			t.Fatal(err)
		}
		after := db.Stats()
		versions = after.SnapshotVersions - before.SnapshotVersions
		return after.ReplacedDurable - before.ReplacedDurable, after.ReplacedFresh - before.ReplacedFresh
	}
	// A leaf, its parents and the root: a path of the checkpoint's tree.
	if d, f := set(1); d < 2 || f != 0 || versions != 0 {
		t.Fatalf("first change after a checkpoint replaced %d durable and %d fresh pages: want the path copied", d, f)
	}
	if d, f := set(2); d != 0 || f != 0 {
		t.Fatalf("second change replaced %d durable and %d fresh pages: want it in place", d, f)
	}
	snap, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	if d, f := set(3); d != 0 || f != 0 || versions != 1 {
		t.Fatalf("change under a snapshot replaced %d durable and %d fresh pages, kept %d versions: want the leaf changed in place, one version for the snapshot", d, f, versions)
	}
	if got, err := snap.Get(key(rows / 2)); err != nil || len(got) != 1 || got[0] != 2 {
		t.Fatalf("snapshot reads %v, %v: want the value before it", got, err)
	}
	snap.Close()
	set(4) // the leaf, changed after the closed snapshot, is unfrozen
	if n := db.tree.Versions(); n != 0 {
		t.Fatalf("%d versions kept after the snapshot closed", n)
	}
	if d, f := set(5); d != 0 || f != 0 || versions != 0 {
		t.Fatalf("change after the snapshot closed replaced %d durable and %d fresh pages: want it in place", d, f)
	}
}

package strata

import (
	"bytes"
	"fmt"
	"testing"
)

// TestScrapPagesAreNotDurableReplacements: pages a commit creates and
// drops again (an overflow chain written and overwritten in one batch)
// were filed as replaced pages of the durable tree: held until the next
// checkpoint, counted in ReplacedDurable and in the replaced pages that
// trigger a checkpoint for space. They go with the fresh ones now. (Found
// by a reviewer, thirty-second session.)
func TestScrapPagesAreNotDurableReplacements(t *testing.T) {
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%05d", i)) }
	db := memTable(t, 16<<20, 1, 1<<40, 2000, key, make([]byte, 100))
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := db.Set(key(5), []byte("x")); err != nil { // the path is copied once
		t.Fatal(err)
	}
	before := db.Stats()
	b := db.NewBatch()
	b.Set(key(5), bytes.Repeat([]byte("a"), 40000)) // a chain of 10 pages
	b.Set(key(5), bytes.Repeat([]byte("b"), 100))   // dropped in the same commit
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	after := db.Stats()
	if d, f := after.ReplacedDurable-before.ReplacedDurable, after.ReplacedFresh-before.ReplacedFresh; d != 0 || f < 10 {
		t.Fatalf("the commit's own dropped chain: %d replaced durable pages, %d fresh; want 0 and at least 10", d, f)
	}
}

package strata

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/btree"
	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/vfs"
)

// pageSums returns the checksum of every page of the version rooted at
// root, read through the pool.
func pageSums(t *testing.T, db *DB, root btree.PageID) map[btree.PageID]uint32 {
	t.Helper()
	var ids []btree.PageID
	if err := db.tree.Walk(root, func(id btree.PageID) { ids = append(ids, id) }); err != nil {
		t.Fatal(err)
	}
	sums := make(map[btree.PageID]uint32, len(ids))
	for _, id := range ids {
		pg, err := db.pool.Get(id, bufferpool.Shared)
		if err != nil {
			t.Fatal(err)
		}
		sums[id] = crc32.ChecksumIEEE(pg.Data())
		pg.Release()
	}
	return sums
}

// checkSums checks that the pages of sums hold the same bytes, as a
// reader of the version of transaction asOf reads them (btree.Live: in
// place), and returns how many of them it read from versions.
func checkSums(t *testing.T, db *DB, what string, asOf uint64, sums map[btree.PageID]uint32) (versions int) {
	t.Helper()
	for id, sum := range sums {
		read, err := db.tree.PageAt(id, asOf)
		if err != nil {
			t.Fatalf("%s: page %d: %v", what, id, err)
		}
		if read != id {
			versions++
		}
		pg, err := db.pool.Get(read, bufferpool.Shared)
		if err != nil {
			t.Fatalf("%s: page %d: %v", what, id, err)
		}
		got := crc32.ChecksumIEEE(pg.Data())
		pg.Release()
		if got != sum {
			t.Fatalf("%s: page %d (read from page %d) changed in place", what, id, read)
		}
	}
	return versions
}

// TestFrozenPagesNeverChangeInPlace: between checkpoints commits change
// pages in place, but never a page of the last checkpoint's tree (recovery
// starts from it): every such page holds the same bytes until the next
// checkpoint, however many commits run, overflow values and deletes
// included. A page of an open snapshot's version changes in place only
// after its bytes went to a version, which the snapshot reads instead:
// as the snapshot reads them, its pages hold the same bytes until it
// closes.
func TestFrozenPagesNeverChangeInPlace(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs)
	opts.CacheSize = 4 << 20 // the checked pages stay cached: a changed frame is seen
	opts.CheckpointWAL = 1 << 40
	opts.CheckpointReplaced = -1
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(4, 4))
	write := func(n int) {
		b := db.NewBatch()
		for i := 0; i < n; i++ {
			k := []byte(fmt.Sprintf("k%05d", rng.IntN(3000)))
			switch rng.IntN(10) {
			case 0:
				b.Delete(k)
			case 1:
				b.Set(k, make([]byte, 5000+rng.IntN(5000))) // overflow pages
			default:
				b.Set(k, []byte(fmt.Sprintf("v%d", rng.Uint32())))
			}
		}
		if err := b.Commit(nil); err != nil {
			t.Fatal(err)
		}
	}
	write(3000)
	inPlace, versions := 0, 0
	for round := 0; round < 6; round++ {
		if err := db.Checkpoint(); err != nil {
			t.Fatal(err)
		}
		durable := pageSums(t, db, db.root)
		var snap *Snapshot
		var snapSums map[btree.PageID]uint32
		for c := 0; c < 40; c++ {
			if c == 10 {
				if snap, err = db.NewSnapshot(); err != nil {
					t.Fatal(err)
				}
				snapSums = pageSums(t, db, snap.root)
			}
			before := db.Stats().TxID
			rootBefore := db.root
			write(1 + rng.IntN(20))
			if db.root == rootBefore && db.Stats().TxID > before {
				inPlace++ // the root itself changed in place
			}
			if n := checkSums(t, db, fmt.Sprintf("round %d commit %d: checkpoint's tree", round, c), btree.Live, durable); n != 0 {
				t.Fatalf("round %d commit %d: %d pages of the checkpoint's tree read from versions", round, c, n)
			}
			if snap != nil {
				versions += checkSums(t, db, fmt.Sprintf("round %d commit %d: snapshot's version", round, c), snap.txid, snapSums)
			}
			if c == 30 {
				snap.Close()
				snap = nil
			}
		}
	}
	if inPlace == 0 || versions == 0 {
		t.Errorf("%d commits changed the root in place, %d snapshot pages were read from versions: the test checks too little", inPlace, versions)
	}
}

package strata

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestReplacedPagesStartCheckpoint: random updates over a table much larger
// than the cache copy a leaf of the durable tree the first time each is
// changed after a checkpoint, and the old copy stays on disk until the next
// checkpoint. With a WAL that never grows large enough to checkpoint, the
// store used to hold two versions of nearly every page (its live pages
// doubled); a checkpoint now starts once a quarter of the store's pages
// have been replaced, and commits that outrun checkpoints wait, so the
// store stays within 1.75× the table's pages (typically 1.25–1.5×).
func TestReplacedPagesStartCheckpoint(t *testing.T) {
	base, maxLive, ckpts := randomUpdates(t, 0, false)
	if ckpts < 2 {
		t.Errorf("%d checkpoints during the updates, want several (one per quarter of the pages replaced)", ckpts)
	}
	// The old copies stay under 2.5 limits (maybeCheckpoint), the limit
	// being a quarter of the table: those the running checkpoint will
	// free and those replaced since its freeze.
	if limit := base * 7 / 4; maxLive > limit {
		t.Errorf("the store held up to %d live pages for a table of %d: want at most %d", maxLive, base, limit)
	}
}

// TestReplacedPagesWithSnapshotOpen: a snapshot keeps every page replaced
// after it, so checkpoints for space would free nothing, and each one
// would make the next commits copy the pages again (the store grew to 16×
// the table when they ran anyway). Once the snapshot is older than the
// last checkpoint's freeze, only the WAL starts checkpoints: the store
// grows as it did before the space trigger, by about one copy.
func TestReplacedPagesWithSnapshotOpen(t *testing.T) {
	base, maxLive, ckpts := randomUpdates(t, 0, true)
	if ckpts > 3 {
		t.Errorf("%d checkpoints during the updates with a snapshot open, want at most 3", ckpts)
	}
	if maxLive > base*3 {
		t.Errorf("the store held up to %d live pages for a table of %d with a snapshot open: want at most %d", maxLive, base, 3*base)
	}
}

// TestCheckpointReplacedOff: with a negative CheckpointReplaced only the
// WAL starts checkpoints, and the same updates leave two versions of most
// pages on disk.
func TestCheckpointReplacedOff(t *testing.T) {
	base, maxLive, ckpts := randomUpdates(t, -1, false)
	if ckpts != 0 {
		t.Errorf("%d checkpoints during the updates, want none", ckpts)
	}
	if maxLive < base*9/5 {
		t.Errorf("the store held at most %d live pages for a table of %d: want the old copies kept", maxLive, base)
	}
}

// randomUpdates loads a table of 6,000 rows (about 320 pages of 4 KiB,
// five times the cache) with a WAL that never starts a checkpoint, then
// makes 4,800 random updates in batches of 4. It returns the table's
// pages, the most live pages the store held during the updates (sampled),
// and the checkpoints they started.
// With snapshot, a snapshot taken before the updates stays open during
// them.
func randomUpdates(t *testing.T, replaced float64, snapshot bool) (base, maxLive, ckpts int64) {
	opts := spaceTestOptions(vfs.NewMem(), replaced)
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	loadSpaceTestRows(t, db)
	st := db.Stats()
	base, ckpts0 := st.Store.LivePages, st.Checkpoints
	cachePages := opts.CacheSize / int64(opts.PageSize)
	if base/4 <= cachePages {
		t.Fatalf("the table has %d pages: too few for the quarter (%d) to exceed the cache's %d pages", base, base/4, cachePages)
	}
	if snapshot {
		snap, err := db.NewSnapshot()
		if err != nil {
			t.Fatal(err)
		}
		defer snap.Close()
	}
	maxLive = base
	updateSpaceTestRows(t, db, rand.New(rand.NewPCG(3, 4)), func(n int) {
		if n%20 == 0 {
			maxLive = max(maxLive, db.Stats().Store.LivePages)
		}
	})
	st = db.Stats()
	ckpts = st.Checkpoints - ckpts0
	t.Logf("table %d pages; after 4,800 random updates: %d checkpoints, at most %d live pages, %d pending frees",
		base, ckpts, maxLive, st.PendingFreePages)
	for i := 0; i < spaceTestRows; i += 97 {
		if _, err := db.Get(spaceTestKey(i)); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	return base, maxLive, ckpts
}

// spaceTestRows is the table of the space tests: about 320 pages of 4 KiB
// with 200-byte values, five times the cache of spaceTestOptions.
const spaceTestRows = 6000

// spaceTestOptions are the space tests' options on fs: no fsync, a 256 KiB
// cache, a WAL that never starts a checkpoint, CheckpointReplaced replaced.
func spaceTestOptions(fs *vfs.MemFS, replaced float64) *Options {
	opts := memOptions(fs)
	opts.Sync = SyncNever
	opts.CacheSize = 256 << 10
	opts.CheckpointWAL = 1 << 40 // the WAL alone never starts one
	opts.CheckpointReplaced = replaced
	return opts
}

func spaceTestKey(i int) []byte { return fmt.Appendf(nil, "row%06d", i) }

func spaceTestValue(i, gen int) []byte { return fmt.Appendf(nil, "%0200d", i*1000+gen) }

// loadSpaceTestRows loads the table in batches of 500 and checkpoints.
func loadSpaceTestRows(t *testing.T, db *DB) {
	t.Helper()
	b := db.NewBatch()
	for i := range spaceTestRows {
		b.Set(spaceTestKey(i), spaceTestValue(i, 0))
		if b.Len() == 500 {
			if err := b.Commit(NoSync); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
}

// updateSpaceTestRows commits 1,200 batches of 4 random-row updates,
// calling after(n) after batch n.
func updateSpaceTestRows(t *testing.T, db *DB, rng *rand.Rand, after func(n int)) {
	t.Helper()
	b := db.NewBatch()
	for n := range 1200 {
		b.Reset()
		for range 4 {
			i := rng.IntN(spaceTestRows)
			b.Set(spaceTestKey(i), spaceTestValue(i, n+1))
		}
		if err := b.Commit(NoSync); err != nil {
			t.Fatal(err)
		}
		if after != nil {
			after(n)
		}
	}
}

package strata

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestRecoveryWalkReadsAhead: after a crash, Open's walk for unreachable
// pages reads the children of each branch ahead of visiting them
// (Stats.Pool.ReadAheadReads: nothing else reads ahead before the first
// scan), over a table 4× the cache; and the recovered table holds every
// update.
func TestRecoveryWalkReadsAhead(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs) // 1 MiB cache
	opts.CheckpointWAL = 1 << 30
	opts.CheckpointReplaced = -1
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 20_000 // ~4 MiB of leaves
	key := func(i int) []byte { return []byte(fmt.Sprintf("key%06d", i)) }
	value := func(i, version int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("%06d/%d;", i, version)), 20) }
	b := db.NewBatch()
	for i := range rows {
		b.Set(key(i), value(i, 0))
		if b.Len() == 1000 {
			if err := b.Commit(NoSync); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[int]int{}
	for v := 1; v <= 30; v++ {
		b := db.NewBatch()
		for range 20 {
			i := rng.IntN(rows)
			b.Set(key(i), value(i, v))
			want[i] = v
		}
		if err := b.Commit(Sync); err != nil {
			t.Fatal(err)
		}
	}
	db = reopenAfterCrash(t, fs, db)
	st := db.Stats()
	if st.Pool.ReadAheadReads == 0 {
		t.Error("the walk for unreachable pages read no page ahead")
	}
	for i, v := range want {
		got, err := db.Get(key(i))
		if err != nil || !bytes.Equal(got, value(i, v)) {
			t.Fatalf("row %d after recovery: %.20q, %v; want version %d", i, got, err, v)
		}
	}
}

// reopenAfterCrash crashes fs as it is (unsynced writes dropped), closes
// db, and opens the crashed copy with memOptions, closed when the test
// ends.
func reopenAfterCrash(t *testing.T, fs *vfs.MemFS, db *DB) *DB {
	t.Helper()
	crashed := fs.CrashClone(vfs.CrashDropUnsynced, nil)
	db.Close()
	db, err := Open("db", memOptions(crashed))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

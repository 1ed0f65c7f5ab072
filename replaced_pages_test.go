package strata

import (
	"fmt"
	"testing"
)

// TestReplacedPagesLeaveThePool: a page of the durable tree that a commit
// replaces (copy-on-write after a checkpoint) stays on disk until the next
// checkpoint, but leaves the pool once no reader needs it; while a
// snapshot reads the old version, its pages stay.
func TestReplacedPagesLeaveThePool(t *testing.T) {
	const rows = 4000
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%05d", i)) }
	pad := make([]byte, 200)
	db := memTable(t, 16<<20, 1, 1<<40, rows, key, pad)
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	loaded := db.pool.Stats().Frames
	update := func(round byte) {
		t.Helper()
		for i := 0; i < rows; i += 100 {
			b := db.NewBatch()
			for j := i; j < i+100; j++ {
				b.Set(key(j), append([]byte{round}, pad[1:]...))
			}
			if err := b.Commit(nil); err != nil {
				t.Fatal(err)
			}
		}
	}

	// A snapshot of the loaded tree keeps the pages it reads.
	snap, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	update(1)
	held := db.pool.Stats()
	if held.Discards != 0 || held.Frames < loaded*3/2 {
		t.Fatalf("with a snapshot of the loaded tree open: %d frames (%d after the load), %d discarded; want the old copies kept", held.Frames, loaded, held.Discards)
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	update(2) // the first commit after the snapshot drops the old copies
	after := db.pool.Stats()
	if after.Discards < loaded/2 || after.Frames > loaded*11/10 {
		t.Fatalf("after every page was replaced and the snapshot closed: %d frames (%d after the load), %d discarded; want about the loaded tree's frames", after.Frames, loaded, after.Discards)
	}
	for i := 0; i < rows; i += 397 {
		v, err := db.Get(key(i))
		if err != nil || len(v) != len(pad) || v[0] != 2 {
			t.Fatalf("get %s: %d bytes starting %v, %v", key(i), len(v), v[:min(1, len(v))], err)
		}
	}

	// Without a snapshot, each commit drops the copies it replaced.
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	base := db.pool.Stats()
	update(3)
	st := db.pool.Stats()
	if st.Discards-base.Discards < loaded/2 || st.Frames > base.Frames*11/10 {
		t.Fatalf("replacing every page after a checkpoint: %d frames (%d before), %d discarded; want about as many as before", st.Frames, base.Frames, st.Discards-base.Discards)
	}
}

package strata

import (
	"fmt"
	"math/rand/v2"
	"strings"
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
	// The first commit after the snapshot finds hundreds of old copies to
	// drop: more than a commit drops holding the writer lock
	// (discardPerCommit), so the next checkpoint drops them.
	if err := db.Set(key(0), pad); err != nil {
		t.Fatal(err)
	}
	if st := db.pool.Stats(); st.Discards != 0 {
		t.Fatalf("a commit dropped %d pages after a snapshot held %d; want the backlog left to the checkpoint", st.Discards, loaded)
	}
	update(2)
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	after := db.pool.Stats()
	if after.Discards < loaded/2 || after.Frames > loaded*11/10 {
		t.Fatalf("after every page was replaced, the snapshot closed and a checkpoint: %d frames (%d after the load), %d discarded; want about the loaded tree's frames", after.Frames, loaded, after.Discards)
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

// TestPagesReplacedDuringACheckpointLeaveThePool: pages of the frozen tree
// that commits replace while the checkpoint is still writing them back are
// dirty then, and stay; once the checkpoint has written them, it drops
// them from the pool.
func TestPagesReplacedDuringACheckpointLeaveThePool(t *testing.T) {
	db, gfs := gatedTable(t, false)
	rng := rand.New(rand.NewPCG(7, 7))
	update := func(v string) {
		t.Helper()
		for i := 0; i < tableRows; i += 200 {
			b := db.NewBatch()
			for j := i; j < i+200; j++ {
				// Incompressible: the checkpoint's pages fill more than
				// the store's write buffer, so its first segment write
				// (held) comes while the pool still writes pages back.
				val := make([]byte, 80)
				for k := range val {
					val[k] = byte(rng.Uint32())
				}
				b.Set([]byte(fmt.Sprintf("k%06d", j)), append([]byte(v), val...))
			}
			if err := b.Commit(nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	update("first") // every leaf read, copied and dirty
	base := db.pool.Stats()

	gfs.hold()
	ckptErr := make(chan error, 1)
	go func() { ckptErr <- db.Checkpoint() }()
	waitHeld(t, gfs, ckptErr, "the checkpoint") // frozen, writing
	update("during")
	held := db.pool.Stats()
	if held.Frames < base.Frames*5/4 {
		t.Fatalf("while the checkpoint writes the pages commits replaced: %d frames, %d before; want the dirty old copies kept", held.Frames, base.Frames)
	}
	gfs.release()
	if err := <-ckptErr; err != nil {
		t.Fatal(err)
	}
	after := db.pool.Stats()
	if after.Frames > base.Frames*11/10 || after.Discards-held.Discards < (held.Frames-base.Frames)*9/10 {
		t.Fatalf("after the checkpoint: %d frames (%d before it, %d during), %d discarded by it; want the old copies dropped",
			after.Frames, base.Frames, held.Frames, after.Discards-held.Discards)
	}
	for i := 0; i < tableRows; i += 999 {
		k := fmt.Sprintf("k%06d", i)
		if v, err := db.Get([]byte(k)); err != nil || !strings.HasPrefix(string(v), "during") {
			t.Fatalf("get %s: %q, %v", k, v, err)
		}
	}
}

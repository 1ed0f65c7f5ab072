package strata

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestSnapshotAfterFailedCommit: a commit of in-place updates fails
// part-way (store reads fail) and is undone; the next transaction reuses
// its txid. A snapshot taken then must keep its values while later
// commits change the same keys: every leaf the failed commit touched must
// be back as it was, its txid included, or the next writer takes it for a
// page of its own and changes it under the snapshot.
func TestSnapshotAfterFailedCommit(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs)
	opts.CacheSize = 256 << 10 // small: the failing commit reads the store
	opts.CheckpointWAL = 1 << 40
	opts.CheckpointReplaced = -1
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const n = 4000
	// Random values, so that the data is larger than the cache even
	// compressed. want[val] holds what commit(val) wrote.
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[string]map[string]string{}
	commit := func(val string, step int) error {
		want[val] = map[string]string{}
		b := db.NewBatch()
		for i := 0; i < n; i += step {
			v := make([]byte, 300)
			for j := range v {
				v[j] = byte(rng.Uint32())
			}
			k := fmt.Sprintf("k%05d", i)
			want[val][k] = val + string(v)
			b.Set([]byte(k), []byte(want[val][k]))
		}
		return b.Commit(nil)
	}
	// Values of one length: the failing commit's updates are simple
	// writes (in place, no split), undone from the key log.
	if err := commit("v0", 1); err != nil {
		t.Fatal(err)
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := commit("v1", 1); err != nil { // leaves copied once: later commits change them in place
		t.Fatal(err)
	}
	var reads atomic.Int64
	fs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpRead && !strings.Contains(path, "/wal/") && reads.Add(1) > 40 {
			return vfs.InjectedError(op, path)
		}
		return nil
	})
	err = commit("vX", 1)
	if err == nil {
		t.Fatal("the commit did not fail: the test checks nothing")
	}
	t.Logf("failed commit: %v (%d store reads)", err, reads.Load())
	fs.SetInjector(nil)
	if db.failed != nil {
		t.Skipf("the failed commit could not be undone (%v): no snapshot to check", db.failed)
	}
	snap, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if err := commit("v2", 1); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("k%05d", i)
		if v, err := snap.Get([]byte(k)); err != nil || string(v) != want["v1"][k] {
			t.Fatalf("snapshot: %s = %.10q, %v; want \"v1…\"", k, v, err)
		}
		if v, err := db.Get([]byte(k)); err != nil || string(v) != want["v2"][k] {
			t.Fatalf("database: %s = %.10q, %v; want \"v2…\"", k, v, err)
		}
	}
}

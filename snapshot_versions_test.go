package strata

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// TestSnapshotsWhileCommitsChangeTheirPages: snapshots and iterators
// read their version unchanged while commits change its pages in place
// (leaving versions for them, internal/btree/versions.go) or copy those a
// reader holds. Each reader takes a snapshot, scans it, lets commits run,
// then reads it again — scans both ways, point reads, an iterator of the
// snapshot held on a leaf meanwhile — and must find exactly what the first
// scan found; and a View's scans, with commits between them, must agree.
// Versions are freed once the snapshots close. Run under -race in CI.
func TestSnapshotsWhileCommitsChangeTheirPages(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs)
	opts.CheckpointWAL = 512 << 10 // checkpoints during the run
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const keys = 3000
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%05d", i)) }
	b := db.NewBatch()
	for i := 0; i < keys; i++ {
		b.Set(key(i), []byte("v0"))
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	type row struct{ k, v string }
	scan := func(it *Iterator) ([]row, error) {
		var rows []row
		for it.First(); it.Valid(); it.Next() {
			rows = append(rows, row{string(it.Key()), string(it.Value())})
		}
		return rows, it.Error()
	}
	rounds := 60
	if testing.Short() {
		rounds = 20
	}
	var stop atomic.Bool
	var readers, writer sync.WaitGroup
	errs := make(chan error, 4)
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
		stop.Store(true)
	}
	for g := 0; g < 3; g++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 3))
			for r := 0; r < rounds && !stop.Load(); r++ {
				snap, err := db.NewSnapshot()
				if err != nil {
					report(err)
					return
				}
				it, _ := snap.NewIter(nil)
				first, err := scan(it)
				it.Close()
				if err != nil {
					report(err)
					return
				}
				// An iterator left on a leaf while commits run.
				held, _ := snap.NewIter(nil)
				heldAt := rng.IntN(len(first))
				held.SeekGE([]byte(first[heldAt].k))
				time.Sleep(time.Millisecond) // commits run
				again, err := func() ([]row, error) {
					it, _ := snap.NewIter(nil)
					defer it.Close()
					return scan(it)
				}()
				if err == nil && !equalRows(first, again) {
					err = fmt.Errorf("a snapshot's second scan differs from its first")
				}
				for i := 0; err == nil && i < 50; i++ {
					j := rng.IntN(len(first))
					v, gerr := snap.Get([]byte(first[j].k))
					if gerr != nil || string(v) != first[j].v {
						err = fmt.Errorf("snapshot Get(%s) = %q %v, its scan read %q", first[j].k, v, gerr, first[j].v)
					}
				}
				for j := heldAt; err == nil && j < min(heldAt+100, len(first)); j++ {
					if !held.Valid() || string(held.Key()) != first[j].k || string(held.Value()) != first[j].v {
						err = fmt.Errorf("the held iterator reads %q = %q at row %d, the scan read %q = %q", held.Key(), held.Value(), j, first[j].k, first[j].v)
					}
					held.Next()
				}
				held.Close()
				if err == nil {
					var back []row
					it, _ := snap.NewIter(nil)
					for it.Last(); it.Valid(); it.Prev() {
						back = append(back, row{string(it.Key()), string(it.Value())})
					}
					err = it.Error()
					it.Close()
					for i, j := 0, len(back)-1; err == nil && i < len(first); i, j = i+1, j-1 {
						if j < 0 || back[j] != first[i] {
							err = fmt.Errorf("a snapshot's backward scan differs from its forward scan at row %d", i)
						}
					}
				}
				snap.Close()
				if err == nil {
					err = db.View(func(tx *Tx) error {
						var scans [2][]row
						for i := range scans {
							it, err := tx.NewIter(nil)
							if err != nil {
								return err
							}
							scans[i], err = scan(it)
							it.Close()
							if err != nil {
								return err
							}
							time.Sleep(time.Millisecond) // commits run
						}
						if !equalRows(scans[0], scans[1]) {
							return fmt.Errorf("a View's two scans differ")
						}
						return nil
					})
				}
				if err != nil {
					report(err)
					return
				}
			}
		}()
	}
	// The writer: small batches of random keys (leaves change in place
	// under the snapshots), some growing values (splits), some deletes.
	writer.Add(1)
	go func() {
		defer writer.Done()
		rng := rand.New(rand.NewPCG(9, 9))
		for n := 1; !stop.Load(); n++ {
			b := db.NewBatch()
			for i := 0; i < 1+rng.IntN(8); i++ {
				k := key(rng.IntN(keys))
				if rng.IntN(10) == 0 {
					b.Delete(k)
				} else {
					b.Set(k, []byte(fmt.Sprintf("v%d%s", n, bytes.Repeat([]byte("x"), rng.IntN(200)))))
				}
			}
			if err := b.Commit(nil); err != nil {
				report(err)
				return
			}
		}
	}()
	readers.Wait()
	stop.Store(true)
	writer.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := db.Stats()
	if st.SnapshotVersions == 0 {
		t.Fatal("no commit kept a version for a snapshot: the test checks too little")
	}
	// A commit that applies the deferred ones frees what the last
	// snapshots kept, and a checkpoint waits for one in the background
	// that may be freeing them.
	if err := db.Update(func(tx *Tx) error { return tx.Set(key(0), []byte("last")) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if n := db.tree.Versions(); n != 0 {
		t.Fatalf("%d versions kept with no snapshot open", n)
	}
	t.Logf("%d versions kept, %d fresh and %d durable pages copied", st.SnapshotVersions, st.ReplacedFresh, st.ReplacedDurable)
}

func equalRows[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

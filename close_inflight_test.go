package strata

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// slowReadDB reopens a database holding a 2 MiB value ("big") and a small
// one ("small") on a simulated device whose reads take 3 ms, so reading
// "big" (128 overflow pages) takes about 0.4 s.
func slowReadDB(t *testing.T) (*DB, *vfs.LatencyFS, []byte) {
	t.Helper()
	mem := vfs.NewMem()
	opts := &Options{PageSize: 16 << 10, CacheSize: 1 << 20, Partitions: 1, Codec: "lz4", fs: mem}
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 2<<20) // incompressible: it cannot stay cached
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	if err := db.Set([]byte("big"), big); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if err := db.Set([]byte(fmt.Sprintf("small%03d", i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	slow := vfs.NewLatency(mem, vfs.Device{Name: "slow-read (simulated)", ReadLatency: 3 * time.Millisecond})
	opts.fs = slow
	if db, err = Open("db", opts); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get([]byte("small000")); err != nil { // the path to the small keys, cached
		t.Fatal(err)
	}
	return db, slow, big
}

// startBigGet reads "big" in a goroutine and returns once the read is
// under way (the device has served a few of its reads).
func startBigGet(t *testing.T, db *DB, slow *vfs.LatencyFS, big []byte) (finished *atomic.Bool, result chan error) {
	t.Helper()
	finished, result = new(atomic.Bool), make(chan error, 1)
	gets := db.st.gets.Load()
	go func() {
		v, err := db.Get([]byte("big"))
		finished.Store(true)
		if err == nil && !bytes.Equal(v, big) {
			err = errors.New("big value read back wrong")
		}
		result <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for db.st.gets.Load() == gets { // the Get has entered
		if time.Now().After(deadline) {
			t.Fatal("the large Get did not start within 30 s")
		}
		time.Sleep(time.Millisecond)
	}
	for before := slow.Stats().Reads; slow.Stats().Reads < before+5 && !finished.Load(); {
		if time.Now().After(deadline) {
			t.Fatal("the large Get read nothing from the device within 30 s")
		}
		time.Sleep(time.Millisecond)
	}
	if finished.Load() {
		t.Fatal("the large Get finished before it was under way: the test needs it in flight")
	}
	return finished, result
}

// TestLargeGetBlocksNoOne: while a Get reads a large value from a slow
// device, commits, other reads, snapshots and iterators proceed (they used
// to wait behind it for db.mu).
func TestLargeGetBlocksNoOne(t *testing.T) {
	db, slow, big := slowReadDB(t)
	defer db.Close()
	finished, result := startBigGet(t, db, slow, big)
	if err := db.Set([]byte("small000"), []byte("changed")); err != nil {
		t.Fatal(err)
	}
	if v, err := db.Get([]byte("small000")); err != nil || string(v) != "changed" {
		t.Fatalf("read after commit: %q %v", v, err)
	}
	s, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	it, err := db.NewIter(&IterOptions{LowerBound: []byte("small"), UpperBound: []byte("small010")})
	if err != nil {
		t.Fatal(err)
	}
	for it.First(); it.Valid(); it.Next() {
	}
	it.Close()
	if finished.Load() {
		t.Fatal("the commit, read, snapshot and iterator finished only after the large Get")
	}
	if err := <-result; err != nil {
		t.Fatal(err)
	}
}

// TestCloseWaitsForReads: Close during a slow read waits for it, also when
// the database has failed (no checkpoint to drain reads); the read returns
// the right value and later calls return ErrClosed.
func TestCloseWaitsForReads(t *testing.T) {
	for _, failed := range []bool{false, true} {
		t.Run(fmt.Sprintf("failed=%v", failed), func(t *testing.T) {
			db, slow, big := slowReadDB(t)
			if failed {
				db.writeMu.Lock()
				db.failed = errors.New("test: a commit half-applied")
				db.writeMu.Unlock()
			}
			_, result := startBigGet(t, db, slow, big)
			_ = db.Close()
			// The Get leaves the gate just before it returns, so a flag it
			// sets after returning may still be unset here; what must hold
			// is that its device reads are over once Close returns.
			readsAtClose := slow.Stats().Reads
			if err := <-result; err != nil {
				t.Fatalf("read during Close: %v", err)
			}
			if n := slow.Stats().Reads; n != readsAtClose {
				t.Fatalf("Close returned while a read was in flight: %d device reads after it", n-readsAtClose)
			}
			if _, err := db.Get([]byte("big")); !errors.Is(err, ErrClosed) {
				t.Fatalf("Get after Close: %v", err)
			}
		})
	}
}

// TestIteratorDuringClose: iterators moving (and reading their keys and
// values) while Close runs end with ErrClosed (or finish) instead of
// touching unmapped memory; after Close
// every move fails with ErrClosed.
func TestIteratorDuringClose(t *testing.T) {
	for round := 0; round < 5; round++ {
		fs := vfs.NewMem()
		db, err := Open("db", memOptions(fs))
		if err != nil {
			t.Fatal(err)
		}
		b := db.NewBatch()
		for i := 0; i < 3000; i++ {
			b.Set([]byte(fmt.Sprintf("k%05d", i)), bytes.Repeat([]byte{byte(i)}, 100))
		}
		if err := b.Commit(nil); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var started sync.WaitGroup
		iters := make([]*Iterator, 4)
		for g := range iters {
			it, err := db.NewIter(nil)
			if err != nil {
				t.Fatal(err)
			}
			iters[g] = it
			wg.Add(1)
			started.Add(1)
			go func() {
				defer wg.Done()
				n := 0
				for ok := it.First(); ; ok = it.Next() {
					if n == 10 {
						started.Done()
					}
					if !ok {
						if !it.Valid() && n < 3000 && !errors.Is(it.Error(), ErrClosed) {
							t.Errorf("iterator stopped at %d with %v", n, it.Error())
						}
						if n < 10 {
							started.Done()
						}
						return
					}
					if len(it.Value()) != 100 && it.Valid() {
						t.Errorf("value of %s", it.Key())
					}
					// Key reads the leaf too: nil once Close let go of it.
					if k := it.Key(); k != nil && len(k) != len("k00000") {
						t.Errorf("key %q", k)
					}
					n++
					if n == 3000 {
						it.First() // go round again until Close stops us
						n = 11
					}
				}
			}()
		}
		started.Wait()
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		for _, it := range iters {
			if it.First() || !errors.Is(it.Error(), ErrClosed) {
				t.Fatalf("iterator after Close: valid %v, err %v", it.Valid(), it.Error())
			}
			it.Close()
		}
	}
}

package strata

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/btree"
	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/vfs"
)

// TestCommitReadsBeforeLocking: a commit whose leaf is not in memory reads
// it before it takes the writer lock (prefetch.go), so while that read
// waits on the device, point reads and other commits of cached keys
// complete. They used to wait for it: the commit read its leaf holding
// writeMu and treeMu. The test counts what completes while the read is
// held; the timeout only turns a hang into a failure.
func TestCommitReadsBeforeLocking(t *testing.T) {
	db, gfs, near, far := coldTable(t)
	gfs.hold()
	farErr := make(chan error, 1)
	go func() { farErr <- db.Set(far, []byte("far")) }()
	waitHeld(t, gfs, farErr, "the commit of "+string(far))

	done := make(chan error, 1)
	go func() {
		if _, err := db.Get(near); err != nil {
			done <- err
			return
		}
		done <- db.Set(near, []byte("near"))
	}()
	gfs.completesWhileHeld(t, done, func() string {
		return "a read and a commit of a cached key waited 10 s for another commit's disk read"
	})
	select {
	case err := <-farErr:
		t.Fatalf("the commit of %s finished (%v) while its read was held", far, err)
	default:
	}

	gfs.release()
	if err := <-farErr; err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{string(near): "near", string(far): "far"} {
		if v, err := db.Get([]byte(k)); err != nil || string(v) != want {
			t.Fatalf("%s: %q, %v; want %q", k, v, err, want)
		}
	}
	if got := db.Stats().PrefetchedPages; got == 0 {
		t.Fatal("no page counted as read before the writer lock")
	}
}

// gatedTable returns a database of some 500 leaves of 4 KiB (keys
// k000000 to k019999, tableRows), reopened on a file system whose segment
// writes, or reads if reads is set, wait at a gate while it is held (not
// yet held). Its cleanups release the gate and close the database.
func gatedTable(t *testing.T, reads bool) (*DB, *segmentGateFS) {
	t.Helper()
	mem := vfs.NewMem()
	opts := &Options{PageSize: 4096, CacheSize: 8 << 20, Partitions: 1, Codec: "lz4", CheckpointWAL: 1 << 40, CheckpointReplaced: -1, DisableDeferredCommits: true, fs: mem}
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	for i := 0; i < tableRows; i++ {
		b.Set([]byte(fmt.Sprintf("k%06d", i)), make([]byte, 80))
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	gfs := &segmentGateFS{FS: mem, reads: reads}
	opts.fs = gfs
	if db, err = Open("db", opts); err != nil { // a cold cache
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	t.Cleanup(gfs.release) // runs first: Close must not wait at the gate
	return db, gfs
}

const tableRows = 20000

// coldTable is gatedTable gating reads, with key near's path in memory and
// key far's leaf not.
func coldTable(t *testing.T) (db *DB, gfs *segmentGateFS, near, far []byte) {
	t.Helper()
	db, gfs = gatedTable(t, true)
	near, far = []byte("k000000"), []byte(fmt.Sprintf("k%06d", tableRows-1))
	if _, err := db.Get(near); err != nil {
		t.Fatal(err)
	}
	return db, gfs, near, far
}

// waitHeld waits until an I/O call waits at gfs's gate, failing if what
// (whose result comes on done) finishes first or nothing waits in 30 s.
func waitHeld(t *testing.T, gfs *segmentGateFS, done chan error, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for gfs.held.Load() == 0 {
		select {
		case err := <-done:
			t.Fatalf("%s finished (%v) without waiting at the gate", what, err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no I/O waited at the gate in 30 s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// whileReadHeld holds gfs's gate, starts slow (named what) and waits until
// its read waits at the gate, then checks that fast completes meanwhile
// (failing with why if it does not in 10 s); it releases the gate and
// returns slow's error.
func whileReadHeld(t *testing.T, gfs *segmentGateFS, what string, slow, fast func() error, why string) error {
	t.Helper()
	gfs.hold()
	slowDone := make(chan error, 1)
	go func() { slowDone <- slow() }()
	waitHeld(t, gfs, slowDone, what)
	done := make(chan error, 1)
	go func() { done <- fast() }()
	gfs.completesWhileHeld(t, done, func() string { return why })
	gfs.release()
	return <-slowDone
}

// TestGetReadsWithoutTreeLatch: a point read whose leaf is not in memory
// reads it without the tree latch (DB.get), so while that read waits on
// the device a commit completes. It used to wait: the read held treeMu
// shared across its disk read, and the commit needs it exclusively.
func TestGetReadsWithoutTreeLatch(t *testing.T) {
	db, gfs, near, far := coldTable(t)
	err := whileReadHeld(t, gfs, "the read of "+string(far), func() error {
		v, err := db.Get(far)
		if err == nil && len(v) != 80 {
			err = fmt.Errorf("read %q", v)
		}
		return err
	}, func() error { return db.Set(near, []byte("near")) },
		"a commit of a cached key waited 10 s for a point read's disk read")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := db.Get(near); err != nil || string(v) != "near" {
		t.Fatalf("%s: %q, %v", near, v, err)
	}
}

// TestUpdateReadsBeforeTreeLatch: an Update transaction that writes a key
// whose leaf is not in memory (without reading it first) reads the leaf
// before its commit takes treeMu, so point reads of cached keys complete
// while that read waits on the device. (Writers wait: the transaction
// holds the writer lock throughout, as bbolt's do.)
func TestUpdateReadsBeforeTreeLatch(t *testing.T) {
	db, gfs, near, far := coldTable(t)
	err := whileReadHeld(t, gfs, "the transaction writing "+string(far), func() error {
		return db.Update(func(tx *Tx) error { return tx.Set(far, []byte("far")) })
	}, func() error { _, err := db.Get(near); return err },
		"a point read of a cached key waited 10 s for a transaction's disk read")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := db.Get(far); err != nil || string(v) != "far" {
		t.Fatalf("%s: %q, %v", far, v, err)
	}
}

// TestReadsCountEachPageOnce: a point read or a commit that reads a page
// outside the tree latch (a look, a read, a look again) counts in the
// pool's statistics as many page accesses as the same read or commit on a
// cached path: no page counted twice, none missed. The controller prices
// misses and hits by these counts. (The commits compared both copy their
// frozen leaf: every page is the checkpoint's after Open.)
func TestReadsCountEachPageOnce(t *testing.T) {
	db, _, _, far := coldTable(t)
	accesses := func() (int64, int64) {
		p := db.Stats().Pool
		return p.HitsUncompressed + p.HitsCompressed + p.Misses, p.Misses
	}
	// count runs op and returns the page accesses it counted, failing if
	// it read a page from the store and should not have, or the reverse.
	count := func(what string, wantMiss bool, op func() error) int64 {
		t.Helper()
		before, misses := accesses()
		if err := op(); err != nil {
			t.Fatal(err)
		}
		after, misses2 := accesses()
		if (misses2 > misses) != wantMiss {
			t.Fatalf("%s: misses %d -> %d", what, misses, misses2)
		}
		return after - before
	}
	get := func(k []byte) func() error { return func() error { _, err := db.Get(k); return err } }
	set := func(k []byte) func() error { return func() error { return db.Set(k, []byte("x")) } }

	cold := count("cold get", true, get(far))
	if cached := count("cached get", false, get(far)); cold != cached {
		t.Errorf("a point read counted %d page accesses on a cold path, %d on the same path cached", cold, cached)
	}
	// Leaves a few apart under one branch; the first commit copies the
	// frozen root and branch, the two compared copy only their leaf.
	a, b, c := []byte("k010000"), []byte("k010200"), []byte("k010100")
	count("get", true, get(a))
	count("get", true, get(c))
	count("commit to copy the root and branch", false, set(c))
	cached := count("commit to a cached leaf", false, set(a))
	if cold := count("commit to a cold leaf", true, set(b)); cold != cached {
		t.Errorf("a commit counted %d page accesses on a cold leaf, %d on a cached one", cold, cached)
	}
}

// TestPrefetchUnderChurn: writers commit batches of random keys over a
// table many times the cache, so that commits read their pages before
// locking, while checkpoints, point reads and evictions run; every key
// ends with its last committed value. Each writer owns the keys equal to
// its number modulo the writers, so its own map is the model. Run under
// -race in CI.
func TestPrefetchUnderChurn(t *testing.T) {
	const rows, writers = 20000, 4
	batches := 300
	if testing.Short() {
		batches = 100
	}
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%06d", i)) }
	pad := bytes.Repeat([]byte{'.'}, 120)
	db := memTable(t, 512<<10, 2, 256<<10, rows, key, pad) // some 3 MiB of leaves, 6 times the cache
	models := make([]map[int]string, writers)
	errs := make(chan error, writers+1)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() { // a reader: every key reads without an error but ErrNotFound
		rng := rand.New(rand.NewPCG(9, 9))
		for {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			if _, err := db.Get(key(rng.IntN(rows))); err != nil && !errors.Is(err, ErrNotFound) {
				errs <- err
				return
			}
		}
	}()
	for w := 0; w < writers; w++ {
		models[w] = map[int]string{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			b := db.NewBatch()
			for n := 0; n < batches; n++ {
				b.Reset()
				for j := 0; j < 4; j++ {
					i := rng.IntN(rows/writers)*writers + w
					if rng.IntN(4) == 0 {
						b.Delete(key(i))
						models[w][i] = ""
						continue
					}
					v := fmt.Sprintf("w%d-%d-%d%s", w, n, j, pad)
					b.Set(key(i), []byte(v))
					models[w][i] = v
				}
				if err := b.Commit(nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-errs; err != nil { // the reader's, or a writer's
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	for w, m := range models {
		for i, want := range m {
			v, err := db.Get(key(i))
			if want == "" {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("writer %d: %s deleted last, read %q, %v", w, key(i), v, err)
				}
				continue
			}
			if err != nil || string(v) != want {
				t.Fatalf("writer %d: %s: %q, %v; want %q", w, key(i), v, err, want)
			}
		}
	}
	st := db.Stats()
	if st.PrefetchedPages == 0 {
		t.Fatalf("no commit read a page before locking (pool misses %d)", st.Pool.Misses)
	}
	t.Logf("prefetched %d pages; pool misses %d; checkpoints %d", st.PrefetchedPages, st.Pool.Misses, st.Checkpoints)
}

// TestPointReadsFollowSplits: point reads of keys that are always present,
// over a table many times the cache (so that they read pages without the
// tree latch and look again), while commits insert keys between them and
// split their leaves. A read that went on from the page it read without
// noticing a commit in between (get's treeEpoch) would search a leaf the
// key had left and report it missing.
func TestPointReadsFollowSplits(t *testing.T) {
	const rows = 8000
	inserts := 4000
	if testing.Short() {
		inserts = 1500
	}
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%07d", i)) }
	pad := bytes.Repeat([]byte{'.'}, 100)
	// Keys present throughout, 1000 ids apart.
	db := memTable(t, 256<<10, 2, 256<<10, rows, func(i int) []byte { return key(2 * i * 1000) }, pad)
	stop := make(chan struct{})
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 3))
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := key(2 * rng.IntN(rows) * 1000)
				if v, err := db.Get(k); err != nil || !bytes.Equal(v, pad) {
					errs <- fmt.Errorf("get %s: %q, %v", k, v, err)
					return
				}
			}
		}()
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for n := 0; n < inserts; n++ {
		// Between two present keys: leaves fill and split under the readers.
		if err := db.Set(key(2*rng.IntN(rows)*1000+1+rng.IntN(1998)), pad); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

// TestPointReadSeesSplitAfterItsRead: a commit lands right after a point
// read read the key's leaf without the tree latch: it changes the key's
// value and splits the leaf (copying it first if a checkpoint froze it).
// The read must return the new value: it looks again from the root when
// a commit came between (treeEpoch), not from the page it read.
func TestPointReadSeesSplitAfterItsRead(t *testing.T) {
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%07d", i)) }
	pad := bytes.Repeat([]byte{'.'}, 100)
	// About 3 MiB of leaves: 12 times the cache.
	db := memTable(t, 256<<10, 1, 64<<20, 20000, func(i int) []byte { return key(10 * i) }, pad)
	target := key(10 * 123)
	// Evict the target's leaf: read everything else; then a key two
	// leaves away, so that the branches above the target's leaf are in
	// memory and the read misses the leaf itself.
	for i := 0; i < 20000; i++ {
		if i < 100 || i > 150 {
			if _, err := db.Get(key(10 * i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := db.Get(key(10 * 60)); err != nil {
		t.Fatal(err)
	}
	fired := false
	getReadHook = func(k []byte, id btree.PageID) {
		if fired || !bytes.Equal(k, target) {
			return
		}
		fired = true
		// The page read must be the target's leaf: a branch read here
		// would be changed in place by the split, and the test would
		// pass without the epoch check.
		pg, err := db.pool.GetCached(id, bufferpool.Shared, false)
		if err != nil {
			t.Errorf("page %d read by the get is not in memory: %v", id, err)
			return
		}
		if kind := pg.Data()[0]; kind != btree.KindLeaf {
			t.Errorf("the get read page %d of kind %d, not the target's leaf (test setup)", id, kind)
		}
		pg.Release()
		// Keys just below the target: its leaf splits, the target at
		// its upper end moves to the new leaf.
		b := db.NewBatch()
		for j := 1; j < 10; j++ {
			for n := 0; n < 8; n++ {
				b.Set([]byte(fmt.Sprintf("k%07d-%d", 10*123-10+j, n)), pad)
			}
		}
		b.Set(target, []byte("new"))
		if err := b.Commit(nil); err != nil {
			t.Error(err)
		}
	}
	defer func() { getReadHook = nil }()
	v, err := db.Get(target)
	if !fired {
		t.Fatalf("the read of %s did not miss its leaf (test setup)", target)
	}
	if err != nil || string(v) != "new" {
		t.Fatalf("get %s after a split landed between its read and its look: %q, %v", target, v, err)
	}
}

// memTable opens a database on a MemFS (4 KiB pages, LZ4) with a cache of
// cache bytes, the given partitions and CheckpointWAL, and commits
// key(i) = pad for i in [0, rows) in one batch. It closes the database
// when the test ends.
func memTable(t *testing.T, cache int64, partitions int, ckptWAL int64, rows int, key func(int) []byte, pad []byte) *DB {
	t.Helper()
	opts := &Options{PageSize: 4096, CacheSize: cache, Partitions: partitions, Codec: "lz4", CheckpointWAL: ckptWAL, DisableDeferredCommits: true, fs: vfs.NewMem()}
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := db.NewBatch()
	for i := 0; i < rows; i++ {
		b.Set(key(i), pad)
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	return db
}

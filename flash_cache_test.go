package strata

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// flashOpts are memOptions with a cache of cache bytes and a flash cache
// of flash bytes on the same MemFS.
func flashOpts(fs vfs.FS, cache, flash int64) *Options {
	opts := memOptions(fs)
	opts.CacheSize = cache
	opts.FlashCache = FlashCache{Path: "/flash", Size: flash}
	return opts
}

// randomValue is key i's value: 200 random bytes (they do not compress).
func randomValue(i, gen int) []byte {
	r := rand.New(rand.NewPCG(uint64(i), uint64(gen)))
	b := make([]byte, 200)
	for j := range b {
		b[j] = byte(r.Uint32())
	}
	return b
}

func loadKeys(t *testing.T, db *DB, n, gen int) {
	t.Helper()
	b := db.NewBatch()
	for i := range n {
		b.Set(fmt.Appendf(nil, "key-%08d", i), randomValue(i, gen))
		if b.Len() >= 500 || i == n-1 {
			if err := b.Commit(nil); err != nil {
				t.Fatal(err)
			}
			b = db.NewBatch()
		}
	}
}

func readKeys(t *testing.T, db *DB, n, gen, reads int, rng *rand.Rand) {
	t.Helper()
	for range reads {
		i := rng.IntN(n)
		v, err := db.Get(fmt.Appendf(nil, "key-%08d", i))
		if err != nil || string(v) != string(randomValue(i, gen)) {
			t.Fatalf("get key %d: %d bytes, %v", i, len(v), err)
		}
	}
}

// TestFlashCacheRestarts: data twice the cache reads mostly from the
// flash cache; after a clean Close it is warm at once; a session without
// it (which changes every value) makes the next one start cold, with the
// new values.
func TestFlashCacheRestarts(t *testing.T) {
	fs := vfs.NewMem()
	// ~9 MB of leaves for a 4 MiB cache and a 16 MiB flash cache; a
	// quarter of each under the race detector, which makes the pool's
	// compressions of these incompressible pages 20 times slower.
	n, cache, flash := 40000, int64(4<<20), int64(16<<20)
	if raceEnabled {
		n, cache, flash = 10000, 1<<20, 4<<20
	}
	flashOpts := func(fs vfs.FS) *Options { return flashOpts(fs, cache, flash) }
	rng := rand.New(rand.NewPCG(1, 2))
	db, err := Open("/db", flashOpts(fs))
	if err != nil {
		t.Fatal(err)
	}
	loadKeys(t, db, n, 1)
	readKeys(t, db, n, 1, 2*n, rng)
	st := db.Stats().FlashCache
	if !st.Enabled || st.OpenState != "cold: new" || st.Hits == 0 || st.Written == 0 {
		t.Fatalf("first session: %+v", st)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open("/db", flashOpts(fs))
	if err != nil {
		t.Fatal(err)
	}
	readKeys(t, db, n, 1, n/2, rng)
	st = db.Stats().FlashCache
	// Of the reads that tried the flash: on a loaded host (and under the
	// race detector) some flash reads take longer than the read timeout,
	// and the reads after them bypass the stalled flash for a while.
	tried := st.Lookups - st.Bypassed - st.ReadTimeouts
	if st.OpenState != "warm" || tried < st.Lookups/4 || float64(st.Hits) < 0.9*float64(tried) {
		t.Fatalf("after a clean restart: %s, %d hits of %d reads that tried the flash (%+v)", st.OpenState, st.Hits, tried, st)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open("/db", memOptions(fs)) // without the flash cache
	if err != nil {
		t.Fatal(err)
	}
	loadKeys(t, db, n, 2)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open("/db", flashOpts(fs))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if st := db.Stats().FlashCache; !strings.HasPrefix(st.OpenState, "cold: no marker") {
		t.Fatalf("after a session without the cache: %s", st.OpenState)
	}
	readKeys(t, db, n, 2, n, rng)
}

// TestFlashCacheCrashRecovery crashes a database with a flash cache (on
// the same MemFS, so both crash at once) at random points of commits,
// checkpoints, closes and reopens, and checks the recovered state as
// TestCrashRecovery does, then reads every key a second time through a
// cache that has seen it all.
func TestFlashCacheCrashRecovery(t *testing.T) {
	opts := func(fs vfs.FS) *Options {
		o := memOptions(fs)
		o.Sync = SyncNever
		o.CacheSize = 512 << 10
		o.FlashCache = FlashCache{Path: "/flash", Size: 2 << 20}
		return o
	}
	workload := func(fs *vfs.MemFS, seed uint64) (commits []commitRec, durable int) {
		rng := rand.New(rand.NewPCG(seed, 5))
		db, err := Open("db", opts(fs))
		if err != nil {
			return nil, 0
		}
		// A crashed session stops its goroutines (as crashWorkload's do).
		defer func() {
			if db != nil {
				db.Close()
			}
		}()
		crashed := func(err error) bool {
			if err != nil && !errors.Is(err, vfs.ErrCrashed) {
				t.Fatalf("seed %d: %v", seed, err)
			}
			return err != nil
		}
		for i := range 50 {
			switch r := rng.IntN(100); {
			case r < 85:
				b := db.NewBatch()
				rec := commitRec{}
				for j := range 1 + rng.IntN(40) {
					k := fmt.Sprintf("key%04d", rng.IntN(5000))
					v := fmt.Sprintf("c%d-%d-%s", i, j, randomValue(i, j)[:100+rng.IntN(100)])
					b.Set([]byte(k), []byte(v))
					rec[k] = &v
				}
				if crashed(b.Commit(NoSync)) {
					return append(commits, rec), durable // may be in the log: see crash_test.go
				}
				commits = append(commits, rec)
				for range 20 { // reads that miss the RAM cache
					db.Get(fmt.Appendf(nil, "key%04d", rng.IntN(5000)))
				}
			case r < 93:
				if crashed(db.Checkpoint()) {
					return commits, durable
				}
				durable = len(commits)
			default:
				if crashed(db.Close()) {
					return commits, durable
				}
				durable = len(commits)
				if db, err = Open("db", opts(fs)); err != nil {
					crashed(err)
					return commits, durable
				}
			}
		}
		if crashed(db.Close()) {
			return commits, durable
		}
		return commits, len(commits)
	}
	// 15 points (as with -short) under the race detector: 5 a seed, both
	// crash modes, each seed's workload run through commits, reads that
	// go to the flash, checkpoints, closes and reopens with the flash
	// cache's writer and readers, which is what the detector needs; the
	// 60 points are for the crash states, which .ci/run checks without it.
	points := 60
	if testing.Short() || raceEnabled {
		points = 15
	}
	for seed := uint64(1); seed <= 3; seed++ {
		dry := vfs.NewMem()
		workload(dry, seed)
		total := dry.OpCount()
		rng := rand.New(rand.NewPCG(seed, 6))
		for i := range points / 3 {
			at := rng.IntN(total)
			mode := vfs.CrashModes[(int(seed)+i)%len(vfs.CrashModes)] // every mode, also with few points per seed
			t.Run(fmt.Sprintf("seed%d/op%d/%v", seed, at, mode), func(t *testing.T) {
				fs := vfs.NewMem()
				fs.CrashAfterOps(at)
				commits, durable := workload(fs, seed)
				after := fs.CrashedClone(mode, rand.New(rand.NewPCG(seed, uint64(i))))
				db, err := Open("db", opts(after))
				if err != nil {
					t.Fatalf("recovery: %v", err)
				}
				got := scanAll(t, db)
				checkCommitPrefix(t, commits, durable, got)
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				// Warm now: every key again, through the flash cache.
				if db, err = Open("db", opts(after)); err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				for k, v := range got {
					if w, err := db.Get([]byte(k)); err != nil || string(w) != v {
						t.Fatalf("key %s after a warm reopen: %v", k, err)
					}
				}
				if st := db.Stats().FlashCache; st.OpenState != "warm" {
					t.Fatalf("not warm after a clean close: %s", st.OpenState)
				}
			})
		}
	}
}

// TestFlashCacheCrashWhileCreating crashes at every operation of creating
// a database with a flash cache and of its first commit: the database
// opens afterwards. (The flash cache's marker is made durable with a sync
// of the database's directory; done before the store had synced its first
// segment's header, it left a segment file without a header that the
// store refused to open.)
func TestFlashCacheCrashWhileCreating(t *testing.T) {
	opts := func(fs vfs.FS) *Options {
		o := memOptions(fs)
		o.CacheSize = 512 << 10
		o.FlashCache = FlashCache{Path: "/flash", Size: 2 << 20}
		return o
	}
	create := func(fs *vfs.MemFS) {
		db, err := Open("db", opts(fs))
		if err != nil {
			return
		}
		db.Set([]byte("k"), []byte("v"))
		db.Close()
	}
	dry := vfs.NewMem()
	create(dry)
	total := dry.OpCount()
	// Several seeds each: the image of a torn superblock is one of many a
	// crash at its write may leave. Under the race detector one (CI runs
	// the test at full size without it).
	seeds := uint64(6)
	if raceEnabled {
		seeds = 1
	}
	for at := 1; at <= total; at++ {
		// Under vfs.CrashStrict a crash after the cache file's creation
		// and its first (unsynced) superblock write could keep the
		// creation and the file's size but not its superblock's sectors
		// (crash after 16 of 64 ops, seed (16, 7)): a zero or torn file
		// that Open refused as not a flash cache until the database's
		// directory noted the format under way.
		fs := vfs.NewMem()
		fs.CrashAfterOps(at)
		create(fs)
		for _, mode := range vfs.CrashModes {
			for seed := range seeds {
				after := fs.CrashedClone(mode, rand.New(rand.NewPCG(uint64(at), seed)))
				db, err := Open("db", opts(after))
				if err != nil {
					t.Fatalf("crash after %d of %d ops (%v, seed %d): %v", at, total, mode, seed, err)
				}
				if err := db.Close(); err != nil {
					t.Fatalf("crash after %d ops (%v, seed %d): close: %v", at, mode, seed, err)
				}
			}
		}
	}
}

// TestFlashCacheLargePagesReopen: a database of 64 KiB pages with a flash
// cache whose index would take the whole cache at 4 KiB pages (an entry
// per quarter page) opens again without its page size given: the flash
// cache's memory is charged at the database's page size. Open charged it
// at the smallest page size before the store was open and refused.
func TestFlashCacheLargePagesReopen(t *testing.T) {
	dir := t.TempDir()
	opts := func(pageSize int) *Options {
		return &Options{CacheSize: 8 << 20, PageSize: pageSize, Partitions: 2, Sync: SyncNever,
			FlashCache: FlashCache{Path: filepath.Join(dir, "flash"), Size: 256 << 20}}
	}
	db, err := Open(filepath.Join(dir, "db"), opts(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	loadKeys(t, db, 1000, 1)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(filepath.Join(dir, "db"), opts(0))
	if err != nil {
		t.Fatalf("reopen without the page size: %v", err)
	}
	defer db.Close()
	if st := db.Stats().FlashCache; !st.Active {
		t.Fatalf("flash cache after the reopen: %+v", st)
	}
	readKeys(t, db, 1000, 1, 1000, rand.New(rand.NewPCG(5, 6)))
}

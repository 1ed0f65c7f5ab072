package strata

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// commitRec is one acknowledged commit: key → value (nil value: delete).
type commitRec map[string]*string

// crashWorkload commits random batches (synced or not), checkpoints and
// reopens until it finishes or the file system crashes. It returns the
// acknowledged commits in order and how many of them were durable when the
// crash came (a synced commit, Sync, Checkpoint or Close covers everything
// before it).
var traceWorkload func(string)

func crashWorkload(t *testing.T, fs *vfs.MemFS, seed uint64, nops int) (commits []commitRec, durable int) {
	trace := func(s string) {
		if traceWorkload != nil {
			traceWorkload(s)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 3))
	opts := memOptions(fs)
	opts.Sync = SyncNever
	opts.CacheSize = 256 << 10 // small: evictions write pages between checkpoints
	db, err := Open("db", opts)
	if err != nil {
		return nil, 0
	}
	// A crashed session is let go as the process's death would: its
	// goroutines stop (Close fails on the crashed file system, which
	// nothing can change any more). Left running, the goroutines of
	// hundreds of crashed sessions slowed every later crash point, under
	// the race detector many times over.
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	crashed := func(err error) bool {
		if err == nil {
			return false
		}
		if !errors.Is(err, vfs.ErrCrashed) {
			t.Fatalf("seed %d: unexpected error: %v", seed, err)
		}
		return true
	}
	for i := 0; i < nops; i++ {
		switch r := rng.IntN(100); {
		case r < 80:
			b := db.NewBatch()
			rec := commitRec{}
			for j := 0; j < 1+rng.IntN(12); j++ {
				k := fmt.Sprintf("key%03d", rng.IntN(150))
				if rng.IntN(5) == 0 {
					b.Delete([]byte(k))
					rec[k] = nil
				} else {
					n := rng.IntN(300)
					if rng.IntN(15) == 0 {
						n = 5000 + rng.IntN(30000) // overflow pages
					}
					v := fmt.Sprintf("c%d-%d-%s", i, j, make([]byte, n))
					b.Set([]byte(k), []byte(v))
					rec[k] = &v
				}
			}
			sync := rng.IntN(3) == 0
			opt := NoSync
			if sync {
				opt = Sync
			}
			trace(fmt.Sprintf("commit %d sync=%v", len(commits)+1, sync))
			if crashed(b.Commit(opt)) {
				// Cut short by the crash: durable or not (its record may
				// be in the log), so the last candidate prefix includes it.
				return append(commits, rec), durable
			}
			commits = append(commits, rec)
			if sync {
				durable = len(commits)
			}
		case r < 88:
			trace("Sync")
			if crashed(db.Sync()) {
				return commits, durable
			}
			durable = len(commits)
		case r < 95:
			trace("Checkpoint")
			if crashed(db.Checkpoint()) {
				return commits, durable
			}
			durable = len(commits)
		default:
			trace("Close")
			if crashed(db.Close()) {
				return commits, durable
			}
			durable = len(commits)
			if db, err = Open("db", opts); err != nil {
				crashed(err)
				return commits, durable
			}
		}
	}
	trace("Close")
	if crashed(db.Close()) {
		return commits, durable
	}
	return commits, len(commits)
}

func scanAll(t *testing.T, db *DB) map[string]string {
	t.Helper()
	got := map[string]string{}
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	for it.First(); it.Valid(); it.Next() {
		got[string(it.Key())] = string(it.Value())
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	it.Close()
	return got
}

// TestCrashRecovery crashes the database at 500 random points — during
// commits, WAL syncs, page evictions, checkpoints (page flushes, meta page,
// WAL rotation and truncation), closes and recoveries — dropping or tearing
// unsynced writes, and checks that the recovered database equals the state
// after a prefix of the acknowledged commits that includes every durable
// one (no partial batch), that no page leaked (the store holds exactly
// the pages the tree reaches), and that it keeps working.
//
// Under the race detector each seed's workload is crashed at the first 4
// of its 20 points, 100 in all, every crash mode (vfs.CrashModes): every seed's workload
// still runs through commits, syncs, checkpoints, closes and recovery
// with the database's goroutines, which is what the detector needs; the
// 500 points are for the crash states, which .ci/run checks without it.
func TestCrashRecovery(t *testing.T) {
	const seeds, nops = 25, 60
	perSeed := 20
	if raceEnabled {
		perSeed = 4
	}
	points := atCrashPoints(t, 1, seeds, perSeed, nops, func(t *testing.T, after *vfs.MemFS, commits []commitRec, durable int) {
		db, err := Open("db", memOptions(after))
		if err != nil {
			t.Fatalf("recovery: %v", err)
		}
		got := scanAll(t, db)
		checkCommitPrefix(t, commits, durable, got)
		if leaked := unreachablePages(t, db); len(leaked) != 0 {
			t.Fatalf("%d pages leaked after recovery (walked at Open: %v)", len(leaked), db.walkedAtOpen)
		}
		if err := db.Set([]byte("after"), []byte("crash")); err != nil {
			t.Fatal(err)
		}
		// The Set was durable (SyncAlways): a second crash now
		// must keep it. (It would not if the recovered checkpoint
		// were ahead of the WAL, which then reuses LSNs the
		// checkpoint covers.)
		twice, err := Open("db", memOptions(after.CrashClone(vfs.CrashDropUnsynced, nil)))
		if err != nil {
			t.Fatalf("recovery after the second crash: %v", err)
		}
		if v, err := twice.Get([]byte("after")); err != nil || string(v) != "crash" {
			t.Fatalf("a durable commit after recovery was lost in a second crash: %q, %v", v, err)
		}
		twice.Close()
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if db, err = Open("db", memOptions(after)); err != nil {
			t.Fatalf("second recovery: %v", err)
		}
		defer db.Close()
		again := scanAll(t, db)
		if leaked := unreachablePages(t, db); len(leaked) != 0 {
			t.Fatalf("%d pages leaked across a clean reopen after recovery", len(leaked))
		}
		got["after"] = "crash"
		if fmt.Sprint(again) != fmt.Sprint(got) {
			t.Fatal("state changed across a clean reopen after recovery")
		}
	})
	if points < seeds*perSeed {
		t.Fatalf("%d crash points", points)
	}
}

// atCrashPoints runs crashWorkload (nops operations) for each of seeds
// seeds from first, crashed at perSeed random points of each, in every
// crash mode in turn (vfs.CrashModes), and calls check in a subtest
// with the file system the crash left and the acknowledged commits
// (crashWorkload's). It returns how many points it ran.
func atCrashPoints(t *testing.T, first, seeds uint64, perSeed, nops int, check func(t *testing.T, after *vfs.MemFS, commits []commitRec, durable int)) int {
	points := 0
	for seed := first; seed < first+seeds; seed++ {
		dry := vfs.NewMem()
		crashWorkload(t, dry, seed, nops)
		total := dry.OpCount()
		rng := rand.New(rand.NewPCG(seed, 4))
		for i := 0; i < perSeed; i++ {
			at := rng.IntN(total)
			mode := vfs.CrashModes[(int(seed)+i)%len(vfs.CrashModes)] // every mode, also with few points per seed
			points++
			t.Run(fmt.Sprintf("seed%d/op%d/%v", seed, at, mode), func(t *testing.T) {
				fs := vfs.NewMem()
				fs.CrashAfterOps(at)
				commits, durable := crashWorkload(t, fs, seed, nops)
				check(t, fs.CrashedClone(mode, rand.New(rand.NewPCG(seed, uint64(i)))), commits, durable)
			})
		}
	}
	return points
}

func checkCommitPrefix(t *testing.T, commits []commitRec, durable int, got map[string]string) {
	t.Helper()
	state := map[string]string{}
	apply := func(c commitRec) {
		for k, v := range c {
			if v == nil {
				delete(state, k)
			} else {
				state[k] = *v
			}
		}
	}
	for _, c := range commits[:durable] {
		apply(c)
	}
	for p := durable; ; p++ {
		if fmt.Sprint(state) == fmt.Sprint(got) {
			return
		}
		if p == len(commits) {
			break
		}
		apply(commits[p])
	}
	t.Fatalf("recovered %d keys: not the state after any prefix of %d..%d acknowledged commits", len(got), durable, len(commits))
}

package strata

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// concurrentCheckpointWorkload commits batches from one goroutine while
// another runs checkpoints back to back, until nops commits or a crash.
// It returns the acknowledged commits, in order, and how many of them were
// durable.
func concurrentCheckpointWorkload(t *testing.T, fs *vfs.MemFS, seed uint64, nops int) (commits []commitRec, durable int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	opts := memOptions(fs)
	opts.Sync = SyncNever
	opts.CacheSize = 256 << 10
	db, err := Open("db", opts)
	if err != nil {
		return nil, 0
	}
	crashed := func(err error) bool {
		if err == nil || errors.Is(err, ErrClosed) {
			return false
		}
		if !errors.Is(err, vfs.ErrCrashed) {
			t.Errorf("seed %d: unexpected error: %v", seed, err)
		}
		return true
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if crashed(db.Checkpoint()) {
				return
			}
		}
	}()
	defer func() {
		stop.Store(true)
		wg.Wait()
		db.Close()
	}()
	for i := 0; i < nops; i++ {
		b := db.NewBatch()
		rec := commitRec{}
		for j := 0; j < 1+rng.IntN(12); j++ {
			k := fmt.Sprintf("key%03d", rng.IntN(150))
			if rng.IntN(5) == 0 {
				b.Delete([]byte(k))
				rec[k] = nil
			} else {
				n := rng.IntN(300)
				if rng.IntN(20) == 0 {
					n = 5000 + rng.IntN(20000)
				}
				v := fmt.Sprintf("c%d-%d-%s", i, j, make([]byte, n))
				b.Set([]byte(k), []byte(v))
				rec[k] = &v
			}
		}
		sync := rng.IntN(4) == 0
		opt := NoSync
		if sync {
			opt = Sync
		}
		if crashed(b.Commit(opt)) {
			// A commit cut short by the crash may be durable or not (its
			// WAL record may have reached the file before the failing
			// operation): the last candidate prefix includes it.
			return append(commits, rec), durable
		}
		commits = append(commits, rec)
		if sync {
			durable = len(commits)
		}
	}
	return commits, durable
}

// TestCrashDuringConcurrentCheckpoints: checkpoints write the frozen tree
// while commits go on changing pages; a crash at any point recovers a
// prefix of the acknowledged commits that holds every durable one.
func TestCrashDuringConcurrentCheckpoints(t *testing.T) {
	seeds, perSeed := uint64(10), 12
	if testing.Short() {
		seeds, perSeed = 3, 6
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		dry := vfs.NewMem()
		concurrentCheckpointWorkload(t, dry, seed, 80)
		total := dry.OpCount()
		rng := rand.New(rand.NewPCG(seed, 8))
		for i := 0; i < perSeed; i++ {
			at := rng.IntN(total)
			mode := vfs.CrashModes[(int(seed)+i)%len(vfs.CrashModes)] // every mode, also with few points per seed
			t.Run(fmt.Sprintf("seed%d/op%d/%v", seed, at, mode), func(t *testing.T) {
				fs := vfs.NewMem()
				fs.CrashAfterOps(at)
				commits, durable := concurrentCheckpointWorkload(t, fs, seed, 80)
				after := fs.CrashedClone(mode, rand.New(rand.NewPCG(seed, uint64(i))))
				db, err := Open("db", memOptions(after))
				if err != nil {
					t.Fatalf("recovery: %v", err)
				}
				defer db.Close()
				checkCommitPrefix(t, commits, durable, scanAll(t, db))
			})
		}
	}
}

package strata

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// walSyncFS wraps a file system so that fsyncs of WAL files take a while
// (sleeping, like a device that flushes its cache) or wait until released.
type walSyncFS struct {
	vfs.FS
	delay  time.Duration
	ioGate // WAL fsyncs wait while it is held
}

func (w *walSyncFS) OpenFile(name string, flag int, perm os.FileMode, o vfs.OpenOptions) (vfs.File, error) {
	f, err := w.FS.OpenFile(name, flag, perm, o)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &walSyncFile{File: f, fs: w}, nil
}

type walSyncFile struct {
	vfs.File
	fs *walSyncFS
}

func (f *walSyncFile) Sync() error {
	f.fs.pass()
	time.Sleep(f.fs.delay)
	return f.File.Sync()
}

// TestGroupCommit runs 8 goroutines × 25 durable commits (Commit(Sync))
// on a file system whose WAL fsyncs take 5 ms, and checks from the WAL's
// counters that they shared fsyncs: at least 3 commits per fsync. Then it
// crashes the file system (dropping unsynced data) and checks that every
// commit survived.
func TestGroupCommit(t *testing.T) {
	const goroutines, perG = 8, 25
	mem := vfs.NewMem()
	db, err := Open("db", memOptions(&walSyncFS{FS: mem, delay: 5 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := db.Stats().WAL
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perG {
				b := db.NewBatch()
				b.Set(fmt.Appendf(nil, "g%d-%02d", g, i), []byte("v"))
				if err := b.Commit(Sync); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st := db.Stats().WAL
	commits, syncs := int64(goroutines*perG), st.Syncs-before.Syncs
	t.Logf("%d durable commits: %d WAL fsyncs, %.1f commits per fsync, %d writes", commits, syncs,
		float64(commits)/float64(syncs), st.Writes-before.Writes)
	if syncs*3 > commits {
		t.Errorf("%d fsyncs for %d concurrent durable commits: fewer than 3 commits per fsync", syncs, commits)
	}
	after, err := Open("db", memOptions(mem.CrashClone(vfs.CrashDropUnsynced, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if n := len(scanAll(t, after)); n != goroutines*perG {
		t.Fatalf("%d keys survived a crash, %d commits were acknowledged as durable", n, commits)
	}
}

// TestNoSyncNoFsync checks that a commit that does not ask for durability
// does no fsync in the commit path: under SyncAlways, Commit(NoSync)
// returns while the WAL's fsyncs are held (the background writer is stuck
// in one); under SyncNever, NoSync and nil-option commits, Set, Delete and
// Update leave the WAL's fsync count unchanged.
func TestNoSyncNoFsync(t *testing.T) {
	t.Run("always", func(t *testing.T) {
		mem := vfs.NewMem()
		fs := &walSyncFS{FS: mem}
		db, err := Open("db", memOptions(fs))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		fs.hold()
		defer fs.release() // before Close, if the test fails
		done := make(chan error, 1)
		go func() {
			for i := range 50 {
				b := db.NewBatch()
				b.Set(fmt.Appendf(nil, "k%02d", i), []byte("v"))
				if err := b.Commit(NoSync); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Commit(NoSync) under SyncAlways waits for an fsync")
		}
		// The writer fsyncs in the background, perhaps after the commits
		// returned: wait for it (it blocks in the held fsync).
		for deadline := time.Now().Add(10 * time.Second); fs.held.Load() == 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if fs.held.Load() == 0 {
			t.Error("the WAL writer did not fsync the NoSync commits in the background under SyncAlways")
		}
		fs.release()
		if err := db.Sync(); err != nil {
			t.Fatal(err)
		}
		if n := len(scanAll(t, db)); n != 50 {
			t.Fatalf("%d keys", n)
		}
	})
	t.Run("never", func(t *testing.T) {
		opts := memOptions(vfs.NewMem())
		opts.Sync = SyncNever
		db, err := Open("db", opts)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		before := db.Stats().WAL
		for i := range 30 {
			k := fmt.Appendf(nil, "k%02d", i)
			b := db.NewBatch()
			b.Set(k, []byte("v"))
			if err := b.Commit([]*WriteOptions{NoSync, nil}[i%2]); err != nil {
				t.Fatal(err)
			}
			if err := db.Set(k, []byte("w")); err != nil {
				t.Fatal(err)
			}
			if err := db.Update(func(tx *Tx) error { return tx.Delete(k) }); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Sync(); err != nil { // waits for the writer, then one fsync
			t.Fatal(err)
		}
		st := db.Stats().WAL
		// Sync's fsync, and perhaps one more: a round the writer was in
		// when Sync came may end with an fsync before the records queued
		// during it are written and synced. Never one per commit.
		if syncs := st.Syncs - before.Syncs; syncs < 1 || syncs > 2 {
			t.Fatalf("90 commits that do not wait and one Sync under SyncNever: %d WAL fsyncs", syncs)
		}
		if st.Records-before.Records != 90 {
			t.Fatalf("%d WAL records written, want 90", st.Records-before.Records)
		}
	})
}

// TestCrashConcurrentCommits crashes the file system under 4 goroutines
// committing concurrently, some commits durable (Sync), most not (NoSync),
// under SyncNever and SyncAlways. Recovery must hold, for every goroutine,
// a prefix of its commits, which includes every commit acknowledged as
// durable and every commit (of any goroutine) that had returned before a
// durable commit began: those come before it in the WAL.
func TestCrashConcurrentCommits(t *testing.T) {
	const points, goroutines, perG = 24, 4, 30
	run := func(fs *vfs.MemFS, mode SyncMode, seed uint64) (acked, mustHave [goroutines]int64) {
		opts := memOptions(fs)
		opts.Sync = mode
		db, err := Open("db", opts)
		if err != nil {
			if !errors.Is(err, vfs.ErrCrashed) {
				t.Fatalf("Open: %v", err)
			}
			return
		}
		var returned [goroutines]atomic.Int64 // commits acknowledged so far
		var floorMu sync.Mutex
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, uint64(g)))
				for i := range perG {
					durable := rng.IntN(3) == 0
					var before [goroutines]int64
					for h := range goroutines {
						before[h] = returned[h].Load()
					}
					b := db.NewBatch()
					b.Set(fmt.Appendf(nil, "g%d-%02d", g, i), make([]byte, rng.IntN(2000)))
					b.Set(fmt.Appendf(nil, "g%d-last", g), fmt.Appendf(nil, "%d", i))
					opt := NoSync
					if durable {
						opt = Sync
					}
					if err := b.Commit(opt); err != nil {
						if !errors.Is(err, vfs.ErrCrashed) {
							t.Errorf("Commit: %v", err)
						}
						return
					}
					returned[g].Store(int64(i + 1))
					if durable {
						floorMu.Lock()
						mustHave[g] = max(mustHave[g], int64(i+1))
						for h := range goroutines {
							mustHave[h] = max(mustHave[h], before[h])
						}
						floorMu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		db.Close()
		for g := range goroutines {
			acked[g] = returned[g].Load()
		}
		return
	}
	dry := vfs.NewMem()
	run(dry, SyncNever, 0)
	total := dry.OpCount()
	var lost, durable int64
	for p := range points {
		mode := []SyncMode{SyncNever, SyncAlways}[p%2]
		crash := vfs.CrashModes[p/2%len(vfs.CrashModes)]
		t.Run(fmt.Sprintf("point%d/%v/%v", p, mode, crash), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(p), 5))
			fs := vfs.NewMem()
			fs.CrashAfterOps(1 + rng.IntN(total))
			acked, mustHave := run(fs, mode, uint64(p))
			db, err := Open("db", memOptions(fs.CrashedClone(crash, rng)))
			if err != nil {
				t.Fatalf("recovery: %v", err)
			}
			defer db.Close()
			got := scanAll(t, db)
			for g := range goroutines {
				n := int64(0)
				for ; n < perG; n++ {
					if _, ok := got[fmt.Sprintf("g%d-%02d", g, n)]; !ok {
						break
					}
				}
				for m := n; m < perG; m++ {
					if _, ok := got[fmt.Sprintf("g%d-%02d", g, m)]; ok {
						t.Fatalf("goroutine %d: commit %d recovered without commit %d", g, m, n)
					}
				}
				if n > 0 && got[fmt.Sprintf("g%d-last", g)] != fmt.Sprint(n-1) {
					t.Fatalf("goroutine %d: commit %d recovered in part", g, n-1)
				}
				if n < mustHave[g] {
					t.Fatalf("goroutine %d: %d commits recovered, %d were durable (acknowledged: %d)", g, n, mustHave[g], acked[g])
				}
				lost += max(acked[g]-n, 0)
				durable += mustHave[g]
			}
		})
	}
	t.Logf("%d crash points: %d commits that must survive, %d acknowledged commits lost (not durable)", points, durable, lost)
	if durable == 0 || lost == 0 {
		t.Errorf("the crashes hit no durable commits (%d) or lost no commit (%d): the test tests nothing", durable, lost)
	}
}

package flashcache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// TestNoStaleEntries runs random reads, rewrites, frees and new pages
// (reusing freed ids) against a model, through a pool far smaller than the
// data, so that pages keep going through the flash cache: every read
// returns the model's version, across a clean restart too.
func TestNoStaleEntries(t *testing.T) {
	for _, policy := range []Admission{AdmitAll, AdmitSecond} {
		t.Run(policy.String(), func(t *testing.T) {
			fs := vfs.NewMem()
			s := openStack(t, fs, fs, stackOpts{tune: func(o *Options) { o.Admission = policy }})
			rng := rand.New(rand.NewPCG(1, uint64(policy)))
			model := map[pagestore.PageID]uint64{}
			var ids []pagestore.PageID
			for range 300 {
				id := s.create(1)
				model[id] = 1
				ids = append(ids, id)
			}
			if err := s.pool.FlushAll(); err != nil {
				t.Fatal(err)
			}
			// 5,000 operations (as with -short) under the race detector:
			// they go through every path of the cache (hits, rewrites
			// while queued, frees and reused ids, flushes) with its
			// writer and readers running, which is what the detector
			// needs; the 20,000 are for the model, and .ci/run runs them
			// without it.
			ops := 20000
			if testing.Short() || raceEnabled {
				ops = 5000
			}
			run := func(s *stack, ops int) {
				for op := range ops {
					id := ids[rng.IntN(len(ids))]
					switch r := rng.IntN(100); {
					case r < 70:
						if err := s.check(id, model[id]); err != nil {
							t.Fatalf("op %d: %v", op, err)
						}
					case r < 90:
						model[id]++
						s.write(id, model[id])
					case r < 95 && len(ids) > 50:
						if err := s.pool.FreePage(id); err != nil {
							t.Fatal(err)
						}
						delete(model, id)
						ids = slices.DeleteFunc(ids, func(x pagestore.PageID) bool { return x == id })
					default:
						nid := s.create(uint64(op + 1000))
						model[nid] = uint64(op + 1000)
						ids = append(ids, nid)
					}
					if op%1000 == 999 {
						if err := s.pool.FlushAll(); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			run(s, ops)
			st := s.fc.Stats()
			t.Logf("%+v", st)
			if st.Hits == 0 || st.Invalidations == 0 {
				t.Fatalf("the test did not exercise the cache: %d hits, %d invalidations", st.Hits, st.Invalidations)
			}
			s.close()

			s = openStack(t, fs, fs, stackOpts{tune: func(o *Options) { o.Admission = policy }})
			defer s.close()
			if st := s.fc.Stats(); st.OpenState != "warm" || st.Rebuilt == 0 {
				t.Fatalf("reopened %s with %d entries", st.OpenState, st.Rebuilt)
			}
			for _, id := range ids {
				if err := s.check(id, model[id]); err != nil {
					t.Fatal(err)
				}
			}
			run(s, ops/4)
			if st := s.fc.Stats(); st.Hits == 0 {
				t.Fatalf("no hits after a warm restart: %+v", st)
			}
		})
	}
}

// TestRewriteWhileQueued: a page rewritten (and written back) while its
// old image waits in the queue, or while the writer is writing it, is
// neither installed nor returned; the write-back does not wait for the
// stalled flash.
func TestRewriteWhileQueued(t *testing.T) {
	mem := vfs.NewMem()
	ffs := &stallFS{FS: mem}
	s := openStack(t, mem, ffs, stackOpts{})
	defer func() {
		ffs.resume()
		s.close()
	}()
	id := s.create(1)
	if err := s.pool.FlushAll(); err != nil {
		t.Fatal(err)
	}
	img, err := s.store.ReadImage(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	ffs.stall()
	// The image is offered as the page leaves RAM: the writer takes it
	// and blocks on the write.
	if !s.fc.WantsEvicted(id, len(img.Data)) {
		t.Fatal("the cache does not want the page")
	}
	s.fc.OfferEvicted(id, img.Codec, img.Data, false)
	// A second page stays in the queue behind it.
	id2 := s.create(1)
	if err := s.pool.FlushAll(); err != nil {
		t.Fatal(err)
	}
	img2, _ := s.store.ReadImage(id2, nil)
	s.fc.OfferEvicted(id2, img2.Codec, img2.Data, false)
	deadline := time.Now().Add(5 * time.Second)
	for ffs.blocked.Load() == 0 && time.Now().Before(deadline) {
		// The writer's idle flush will block on the stalled device.
		time.Sleep(time.Millisecond)
	}
	// Rewrite both while the writer is stuck: the write-back goes through.
	start := time.Now()
	s.write(id, 2)
	s.write(id2, 2)
	if err := s.pool.FlushAll(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("write-back took %v with the flash stalled", d)
	}
	ffs.resume()
	s.waitIdle()
	st := s.fc.Stats()
	if st.StaleRejects < 2 {
		t.Fatalf("stale images were installed: %+v", st)
	}
	for _, p := range []pagestore.PageID{id, id2} {
		if _, ok := s.fc.Read(p, nil); ok {
			t.Fatalf("page %d: the old image is served", p)
		}
		if err := s.check(p, 2); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCrashNeverStale crashes the file systems (database and flash on one
// MemFS, so a crash hits both at the same instant) at every few operations
// of three sessions that create, read, rewrite and free pages and close
// cleanly, and checks after each crash that every page read through the
// cache is exactly what the page store holds. A crashed session's flash
// contents must not be trusted: the pages it wrote after its last snapshot
// are known to the store only.
func TestCrashNeverStale(t *testing.T) {
	scenario := func(fs *vfs.MemFS, rng *rand.Rand) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		var ids []pagestore.PageID
		for session := range 3 {
			s, err := tryOpenStack(fs)
			if err != nil {
				return err
			}
			ok := func() bool { return !fs.Crashed() }
			for i := 0; i < 150 && ok(); i++ {
				pg, err := s.pool.NewPage()
				if err != nil {
					break
				}
				copy(pg.Data(), pageBytes(pg.ID(), uint64(session*1000+i)))
				ids = append(ids, pg.ID())
				pg.Release()
			}
			for i := 0; i < 600 && ok(); i++ {
				id := ids[rng.IntN(len(ids))]
				mode := bufferpool.Shared
				if rng.IntN(4) == 0 {
					mode = bufferpool.Exclusive
				}
				pg, err := s.pool.Get(id, mode)
				if err != nil {
					continue
				}
				if mode == bufferpool.Exclusive {
					copy(pg.Data(), pageBytes(id, uint64(session*1000+i+100)))
					pg.MarkDirty()
				}
				pg.Release()
				if rng.IntN(50) == 0 {
					s.pool.FreePage(id)
				}
				if rng.IntN(100) == 0 {
					s.pool.FlushAll()
				}
			}
			if !ok() {
				s.abandon()
				return nil
			}
			s.closeQuiet()
		}
		return nil
	}
	dry := vfs.NewMem()
	if err := scenario(dry, rand.New(rand.NewPCG(0, 1))); err != nil {
		t.Fatal(err)
	}
	total := dry.OpCount()
	step := max(total/60, 1)
	// 20 crash points (as with -short) under the race detector, still
	// spread over all three sessions: the detector watches the cache's
	// writer, readers and snapshots at work in each, and the 60 points
	// are for the crash states, which .ci/run checks without it.
	if testing.Short() || raceEnabled {
		step = max(total/20, 1)
	}
	crashes := 0
	for n := 1; n < total+step; n += step {
		fs := vfs.NewMem()
		fs.CrashAfterOps(n)
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		if err := scenario(fs, rng); err != nil && !errors.Is(err, vfs.ErrCrashed) {
			t.Fatalf("crash after %d ops: %v", n, err)
		}
		if !fs.Crashed() {
			continue // the scenario (its random path) ended before the crash point
		}
		crashes++
		mode := vfs.CrashModes[crashes%len(vfs.CrashModes)] // by crash, not by n: n moves in steps
		after := fs.CrashedClone(mode, rng)
		if err := checkConsistent(t, after); err != nil {
			t.Fatalf("crash after %d ops (%v): %v", n, mode, err)
		}
	}
	if crashes < 10 {
		t.Fatalf("only %d crash points", crashes)
	}
	t.Logf("%d crash points of %d operations", crashes, total)
}

// checkConsistent opens the stack on fs and compares every page read
// through the pool (and so the flash cache) with the store's own read.
func checkConsistent(t *testing.T, fs *vfs.MemFS) error {
	s, err := tryOpenStack(fs)
	if err != nil {
		return fmt.Errorf("reopen: %w", err)
	}
	defer s.closeQuiet()
	st := s.fc.Stats()
	if st.OpenState == "warm" {
		// Only a clean close can have left it warm: then the store has
		// every page it had then, and the check below proves it.
	} else if !strings.HasPrefix(st.OpenState, "cold") {
		return fmt.Errorf("open state %q", st.OpenState)
	}
	want := make([]byte, testPageSize)
	return s.store.ForEachPage(func(id pagestore.PageID) error {
		if err := s.store.ReadPage(id, want); err != nil {
			return err
		}
		// From wherever it is, then again from below the pool (the page
		// discarded from RAM: through the flash cache's lookup again, not
		// a RAM hit).
		for range 2 {
			pg, err := s.pool.Get(id, bufferpool.Shared)
			if err != nil {
				return err
			}
			same := string(pg.Data()) == string(want)
			gid, gv := pageVersion(pg.Data())
			pg.Release()
			s.pool.Discard(id)
			if !same {
				wid, wv := pageVersion(want)
				return fmt.Errorf("page %d: read page %d version %d, the store holds page %d version %d (%+v)", id, gid, gv, wid, wv, s.fc.Stats())
			}
		}
		return nil
	})
}

// tryOpenStack is openStack returning errors (for crashed file systems).
func tryOpenStack(fs vfs.FS) (s *stack, err error) {
	tb := &errTB{}
	func() {
		defer func() {
			if r := recover(); r != nil && r != errTBFatal {
				panic(r)
			}
		}()
		s = openStack(tb, fs, fs, stackOpts{})
	}()
	if tb.err != nil {
		return nil, tb.err
	}
	s.t = tb
	return s, nil
}

// closeQuiet closes the stack, ignoring errors (a crashed file system).
func (s *stack) closeQuiet() {
	err := s.pool.Close()
	if s.fc != nil {
		s.fc.Close(err == nil, testDBState)
	}
	s.store.Close()
}

// errTB is a testing.TB whose Fatal records the error and unwinds.
type errTB struct {
	testing.TB
	err error
}

var errTBFatal = errors.New("fatal")

func (e *errTB) Helper() {}
func (e *errTB) Fatal(args ...any) {
	e.err = fmt.Errorf("%s", fmt.Sprint(args...))
	if len(args) == 1 {
		if err, ok := args[0].(error); ok {
			e.err = err
		}
	}
	panic(errTBFatal)
}
func (e *errTB) Fatalf(format string, args ...any) {
	e.err = fmt.Errorf(format, args...)
	panic(errTBFatal)
}

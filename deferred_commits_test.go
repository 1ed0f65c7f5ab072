package strata

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	stdmaps "maps"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// deferEverything makes every commit that may be deferred deferred
// (deferTest) for the test: the MemFS has no asynchronous reads, with
// which alone the database defers by itself.
func deferEverything(t *testing.T) {
	deferTest = func() bool { return true }
	t.Cleanup(func() { deferTest = nil })
}

// waitApplied waits until the applier has emptied the queue.
func waitApplied(t *testing.T, db *DB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for db.Stats().DeferredQueued > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d deferred commits still queued after 30 s", db.Stats().DeferredQueued)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestDeferredCommitWaitsForNoRead: a commit to a leaf not in memory
// returns while the read of that leaf is held, a point read sees it at
// once, and the applier applies it once the read completes.
func TestDeferredCommitWaitsForNoRead(t *testing.T) {
	deferEverything(t)
	db, gfs, _, far := coldTable(t)
	db.opts.DisableDeferredCommits = false
	gfs.hold()
	done := make(chan error, 1)
	go func() { done <- db.Set(far, []byte("far")) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a deferred commit waited 10 s for a page read")
	}
	got := make(chan string, 1)
	go func() {
		v, err := db.Get(far)
		got <- fmt.Sprintf("%q, %v", v, err)
	}()
	select {
	case g := <-got:
		if want := fmt.Sprintf("%q, %v", "far", nil); g != want {
			t.Fatalf("get %s after its deferred commit: %s; want %s", far, g, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("get %s after its deferred commit waited 10 s for the read of its leaf", far)
	}
	st := db.Stats()
	if st.DeferredCommits != 1 || st.DeferredQueued != 1 {
		t.Fatalf("deferred %d, queued %d; want 1 and 1 while the read is held", st.DeferredCommits, st.DeferredQueued)
	}
	// A queue full (a limit that holds the next commit, but not beside
	// the first) makes the next commit wait for room, until the applier
	// has applied the first. (A commit over the limit would not wait: it
	// applies the queue itself.)
	next := db.NewBatch()
	if err := next.Set([]byte("k000001"), []byte("second")); err != nil {
		t.Fatal(err)
	}
	room := queueRoom(next)
	db.dq.mu.Lock()
	db.dq.limit = db.dq.bytes + room - 1
	db.dq.mu.Unlock()
	second := make(chan error, 1)
	go func() { second <- next.Commit(nil) }()
	select {
	case err := <-second:
		t.Fatalf("a commit went into a full queue (%v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	gfs.release()
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if st := db.Stats(); st.DeferredWaits != 1 {
		t.Fatalf("DeferredWaits %d, want 1", st.DeferredWaits)
	}
	waitApplied(t, db)
	if v, err := db.Get(far); err != nil || string(v) != "far" {
		t.Fatalf("get %s once applied: %q, %v", far, v, err)
	}
	if st := db.Stats(); st.DeferredApplied != 2 {
		t.Fatalf("DeferredApplied %d, want 2", st.DeferredApplied)
	}
}

// TestCachedCommitsQueueBehindMissingOnes: a commit whose pages are in
// memory, arriving while a commit that found a page missing is queued,
// queues behind it instead of applying it (which would read its pages
// holding writeMu, every other committer waiting for the read).
func TestCachedCommitsQueueBehindMissingOnes(t *testing.T) {
	db, missing, release := heldApplier(t)
	defer db.Close()
	defer release()
	if err := db.Set([]byte("cold"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if st := db.Stats(); st.DeferredCommits != 1 || st.DeferredQueued != 1 {
		t.Fatalf("deferred %d, queued %d after a cold commit with the applier held; want 1, 1", st.DeferredCommits, st.DeferredQueued)
	}
	*missing = false
	if err := db.Set([]byte("warm"), []byte("2")); err != nil {
		t.Fatal(err)
	}
	if st := db.Stats(); st.DeferredCommits != 2 || st.DeferredQueued != 2 || st.DeferredApplied != 0 {
		t.Fatalf("after a cached commit: deferred %d, queued %d, applied %d; want 2, 2, 0 (queued behind the cold one)", st.DeferredCommits, st.DeferredQueued, st.DeferredApplied)
	}
	for k, want := range map[string]string{"cold": "1", "warm": "2"} {
		if v, err := db.Get([]byte(k)); err != nil || string(v) != want {
			t.Fatalf("get %s while queued: %q, %v", k, v, err)
		}
	}
	release()
	waitApplied(t, db)
	if st := db.Stats(); st.DeferredApplied != 2 {
		t.Fatalf("DeferredApplied %d once the applier ran, want 2", st.DeferredApplied)
	}
}

// TestCachedCommitsLeaveTheQueue: once no queued commit found a page
// missing, each cached commit applies the oldest group of the queue
// (deferGroup commits, no more) and commits directly when that empties
// it, so the queue empties once the cache has warmed up, and no commit
// applies hundreds of queued ones.
func TestCachedCommitsLeaveTheQueue(t *testing.T) {
	db, missing, release := heldApplier(t)
	defer db.Close()
	defer release()
	const warm = 2*deferGroup + 8
	set := func(i int) {
		t.Helper()
		if err := db.Set([]byte(fmt.Sprintf("k%03d", i)), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	set(0) // cold: queued, marked missing
	*missing = false
	for i := 1; i <= warm; i++ {
		set(i) // queued behind it
	}
	if st := db.Stats(); st.DeferredQueued != warm+1 || st.DeferredApplied != 0 {
		t.Fatalf("queued %d, applied %d; want %d, 0", st.DeferredQueued, st.DeferredApplied, warm+1)
	}
	// Let the applier apply its first group (the cold commit, and the
	// cached ones queued when it looked); it then waits again before its
	// next apply.
	applierHold <- struct{}{}
	deadline := time.Now().Add(10 * time.Second)
	for db.Stats().DeferredApplied == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the applier did not apply its first group in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	// Each cached commit now applies one group and queues behind the
	// rest, until a group empties the queue and it commits directly.
	n := warm
	for {
		before := db.Stats()
		n++
		set(n)
		st := db.Stats()
		group := min(before.DeferredQueued, deferGroup)
		wantQueued := before.DeferredQueued - group + 1
		if wantQueued == 1 {
			wantQueued = 0 // the group emptied the queue: committed directly
		}
		if st.DeferredApplied != before.DeferredApplied+group || st.DeferredQueued != wantQueued {
			t.Fatalf("a cached commit behind %d cached ones: applied %d → %d, queued %d; want %d applied, %d queued",
				before.DeferredQueued, before.DeferredApplied, st.DeferredApplied, st.DeferredQueued, group, wantQueued)
		}
		if wantQueued == 0 {
			break
		}
	}
	if n < warm+2 {
		t.Fatalf("the queue emptied after %d cached commits; want at least 2 (one applying a group and queueing)", n-warm)
	}
	if st := db.Stats(); st.DeferredQueued != 0 || st.DeferredApplied != st.DeferredCommits {
		t.Fatalf("queued %d, applied %d of %d deferred", st.DeferredQueued, st.DeferredApplied, st.DeferredCommits)
	}
	for i := 0; i <= n; i++ {
		k := fmt.Sprintf("k%03d", i)
		if v, err := db.Get([]byte(k)); err != nil || string(v) != fmt.Sprint(i) {
			t.Fatalf("get %s: %q, %v", k, v, err)
		}
	}
}

// TestQueueKeepsItsLimit: a commit whose pages are in memory, queued
// behind commits that found pages missing, waits for room like them: the
// queue does not outgrow its limit while the applier lags.
func TestQueueKeepsItsLimit(t *testing.T) {
	db, missing, release := heldApplier(t)
	defer db.Close()
	defer release()
	for i := 0; i <= deferGroup; i++ {
		if err := db.Set([]byte(fmt.Sprintf("cold%02d", i)), []byte("1")); err != nil {
			t.Fatal(err)
		}
	}
	db.dq.mu.Lock()
	db.dq.limit = db.dq.bytes // full
	db.dq.mu.Unlock()
	*missing = false
	done := make(chan error, 1)
	go func() { done <- db.Set([]byte("warm"), []byte("2")) }()
	select {
	case err := <-done:
		t.Fatalf("a commit went into a full queue behind %d commits (%v)", deferGroup+1, err)
	case <-time.After(200 * time.Millisecond):
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if v, err := db.Get([]byte("warm")); err != nil || string(v) != "2" {
		t.Fatalf("get warm: %q, %v", v, err)
	}
}

// TestDeferredCommitsMatchModel runs random batches, point reads,
// iterators, snapshots, Update transactions and reopens with every commit
// deferred, against a map, with the applier applying concurrently: every
// read sees every commit that returned before it, snapshots keep their
// state, and a reopen (Close applies the queue) loses nothing.
func TestDeferredCommitsMatchModel(t *testing.T) {
	// Three commits in four deferred, the others with their pages in
	// memory: they apply a short queue themselves (commitQueued).
	pick := rand.New(rand.NewPCG(8, 8))
	deferTest = func() bool { return pick.IntN(4) != 0 }
	t.Cleanup(func() { deferTest = nil })
	fs := vfs.NewMem()
	opts := memOptions(fs)
	opts.CacheSize = 256 << 10 // small: the applier reads evicted leaves
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	model := map[string]string{}
	rng := rand.New(rand.NewPCG(7, 7))
	key := func() string { return fmt.Sprintf("key%04d", rng.IntN(800)) }
	check := func(k string) {
		t.Helper()
		v, err := db.Get([]byte(k))
		want, ok := model[k]
		switch {
		case ok && (err != nil || string(v) != want):
			t.Fatalf("get %s: %.20q, %v; want %.20q", k, v, err, want)
		case !ok && !errors.Is(err, ErrNotFound):
			t.Fatalf("get %s: %.20q, %v; want not found", k, v, err)
		}
	}
	var deferred int64
	for i := 0; i < 3000; i++ {
		switch r := rng.IntN(100); {
		case r < 60:
			b := db.NewBatch()
			var keys []string
			for j := 0; j < 1+rng.IntN(8); j++ {
				k := key()
				keys = append(keys, k)
				if rng.IntN(4) == 0 {
					b.Delete([]byte(k))
					delete(model, k)
				} else {
					v := fmt.Sprintf("v%d-%d-%s", i, j, strings.Repeat("x", rng.IntN(200)))
					b.Set([]byte(k), []byte(v))
					model[k] = v
				}
			}
			if err := b.Commit(nil); err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				check(k) // read-your-writes, queued or applied
			}
		case r < 61:
			// Larger than the queue: applied directly, after the queue.
			b := db.NewBatch()
			var keys []string
			for j := 0; j < 12; j++ {
				k := key()
				keys = append(keys, k)
				v := fmt.Sprintf("big%d-%d-%s", i, j, strings.Repeat("y", 25<<10))
				b.Set([]byte(k), []byte(v))
				model[k] = v
			}
			if err := b.Commit(nil); err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				check(k)
			}
		case r < 85:
			check(key())
		case r < 90:
			if got := scanAll(t, db); !stdmaps.Equal(got, model) {
				t.Fatalf("op %d: a scan saw %d keys, the model has %d", i, len(got), len(model))
			}
		case r < 94:
			s, err := db.NewSnapshot()
			if err != nil {
				t.Fatal(err)
			}
			then := stdmaps.Clone(model)
			k := key()
			if err := db.Set([]byte(k), []byte("after the snapshot")); err != nil {
				t.Fatal(err)
			}
			model[k] = "after the snapshot"
			v, err := s.Get([]byte(k))
			if want, ok := then[k]; ok && (err != nil || string(v) != want) || !ok && !errors.Is(err, ErrNotFound) {
				t.Fatalf("snapshot get %s: %.20q, %v; want %.20q (present %v)", k, v, err, want, ok)
			}
			s.Close()
		case r < 98:
			k := key()
			err := db.Update(func(tx *Tx) error {
				v, err := tx.Get([]byte(k))
				if errors.Is(err, ErrNotFound) {
					v = nil
				} else if err != nil {
					return err
				}
				if want := model[k]; string(v) != want {
					return fmt.Errorf("update read %s: %.20q, want %.20q", k, v, want)
				}
				return tx.Set([]byte(k), append(v, '+'))
			})
			if err != nil {
				t.Fatal(err)
			}
			model[k] += "+"
		default:
			deferred += db.Stats().DeferredCommits
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if db, err = Open("db", opts); err != nil {
				t.Fatal(err)
			}
		}
	}
	deferred += db.Stats().DeferredCommits
	if got := scanAll(t, db); !stdmaps.Equal(got, model) {
		t.Fatalf("final scan: %d keys, the model has %d", len(got), len(model))
	}
	if deferred < 800 {
		t.Fatalf("%d commits deferred: the test did not exercise the queue", deferred)
	}
}

// TestDeferredApplyFailure: when the applier cannot read a page, the
// database refuses writes (the queued commits are in the WAL), point reads
// of queued keys still return them, and a reopen recovers every commit.
func TestDeferredApplyFailure(t *testing.T) {
	fs, opts, db := coldDeferredTable(t)
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	var fail atomic.Bool
	fs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpRead && fail.Load() && !strings.Contains(path, "/wal/") {
			return vfs.InjectedError(op, path)
		}
		return nil
	})
	fail.Store(true)
	// Commits to leaves evicted long ago: the applier's reads fail.
	committed := map[string]string{}
	var werr error
	for i := 0; i < 4000 && werr == nil; i += 97 {
		k := fmt.Sprintf("k%05d", i)
		if werr = db.Set([]byte(k), []byte("new")); werr == nil {
			committed[k] = "new"
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for werr == nil {
		if time.Now().After(deadline) {
			t.Fatal("writes still accepted 30 s after the applier's reads began to fail")
		}
		werr = db.Set([]byte("late"), []byte("x"))
		if werr == nil {
			committed["late"] = "x"
		}
		time.Sleep(time.Millisecond)
	}
	if !errors.Is(werr, vfs.ErrInjected) {
		t.Fatalf("write after the applier failed: %v, want the injected error", werr)
	}
	queuedKeys := 0
	for k, want := range committed {
		if _, ok := db.dq.lookup([]byte(k)); !ok {
			continue // applied before the failure: its leaf may be unreadable now
		}
		queuedKeys++
		if v, err := db.Get([]byte(k)); err != nil || string(v) != want {
			t.Fatalf("get %s, queued, after the failure: %q, %v; want %q", k, v, err, want)
		}
	}
	if queuedKeys == 0 {
		t.Fatal("no committed key still queued after the failure: the test checks no read of the queue")
	}
	fail.Store(false)
	fs.SetInjector(nil)
	db.Close()
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for k, want := range committed {
		if v, err := db.Get([]byte(k)); err != nil || string(v) != want {
			t.Fatalf("get %s after reopen: %q, %v; want %q", k, v, err, want)
		}
	}
}

// TestCrashRecoveryDeferred is TestCrashRecovery's check with every commit
// deferred: crashes while commits are queued, while the applier applies
// them and during the checkpoints after, recover a prefix of the
// acknowledged commits that includes every durable one.
func TestCrashRecoveryDeferred(t *testing.T) {
	deferEverything(t)
	const seeds, nops = 8, 60
	perSeed := 10
	if raceEnabled {
		perSeed = 3
	}
	points := atCrashPoints(t, 101, seeds, perSeed, nops, func(t *testing.T, after *vfs.MemFS, commits []commitRec, durable int) {
		db, err := Open("db", memOptions(after))
		if err != nil {
			t.Fatalf("recovery: %v", err)
		}
		defer db.Close()
		checkCommitPrefix(t, commits, durable, scanAll(t, db))
		if leaked := unreachablePages(t, db); len(leaked) != 0 {
			t.Fatalf("%d pages leaked after recovery", len(leaked))
		}
	})
	if points < seeds*perSeed {
		t.Fatalf("%d crash points", points)
	}
}

// TestDeferredApplyRetries: a read error the applier meets once is tried
// again, and the commits are applied with writes still accepted. The
// applier is held before its apply until its read-ahead is over and the
// commits' leaves were evicted again; then exactly one read fails, the
// apply's own (a second failure could land in the failed apply's undo,
// which then leaves the database refusing writes by design: DB.abort).
func TestDeferredApplyRetries(t *testing.T) {
	var logged lockedBuffer
	fs, _, db := coldDeferredTableWith(t, func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	})
	defer db.Close()
	hold := make(chan struct{})
	applierHold = hold                      // read by the applier after the kick of a commit below
	t.Cleanup(func() { applierHold = nil }) // after db.Close: the applier is gone
	var failing atomic.Bool
	var failed atomic.Int64
	fs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpRead && failing.Load() && !strings.Contains(path, "/wal/") && failed.Add(1) == 1 {
			return vfs.InjectedError(op, path)
		}
		return nil
	})
	read := db.Stats().PrefetchedPages
	for i := 0; i < 4000; i += 131 {
		if err := db.Set([]byte(fmt.Sprintf("k%05d", i)), []byte("new")); err != nil {
			t.Fatal(err)
		}
	}
	// The applier's read-ahead: over once its count stops moving.
	deadline := time.Now().Add(10 * time.Second)
	for last, since := read, time.Now(); ; time.Sleep(time.Millisecond) {
		if n := db.Stats().PrefetchedPages; n != last {
			last, since = n, time.Now()
		} else if n > read && time.Since(since) > 100*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the applier read nothing ahead: the commits' leaves were in memory (test setup)")
		}
	}
	// Evict the leaves it read (the cache holds a quarter of the table).
	for i := 0; i < 4000; i++ {
		if _, err := db.Get([]byte(fmt.Sprintf("k%05d", i))); err != nil {
			t.Fatal(err)
		}
	}
	failing.Store(true)
	close(hold)
	deadline = time.Now().Add(10 * time.Second)
	for db.Stats().DeferredQueued > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d deferred commits still queued after 10 s; log:\n%s", db.Stats().DeferredQueued, logged.String())
		}
		time.Sleep(time.Millisecond)
	}
	failing.Store(false)
	if failed.Load() == 0 || !strings.Contains(logged.String(), "trying again") {
		t.Fatalf("the apply met no read error (%d reads failed; its leaves still in memory?): log %q", failed.Load(), logged.String())
	}
	if err := db.Set([]byte("after"), []byte("x")); err != nil {
		t.Fatalf("a write after a transient read error: %v; log:\n%s", err, logged.String())
	}
	for i := 0; i < 4000; i += 131 {
		if v, err := db.Get([]byte(fmt.Sprintf("k%05d", i))); err != nil || string(v) != "new" {
			t.Fatalf("k%05d: %q, %v", i, v, err)
		}
	}
}

// TestDeferQueueKeepsNewerWrites: applying an older queued commit drops
// from the index only the keys no newer queued commit wrote; a read of a
// key written by both still finds the newer write.
func TestDeferQueueKeepsNewerWrites(t *testing.T) {
	var q deferQueue
	q.init(1 << 20)
	enc := func(k, v string) [][]byte { // a batch's encoding of one set
		b := []byte{opSet}
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(v)))
		return [][]byte{append(b, v...)}
	}
	for i, kv := range [][2]string{{"a", "1"}, {"b", "1"}, {"a", "2"}} {
		if err := q.add(enc(kv[0], kv[1]), uint64(i+1), true); err != nil {
			t.Fatal(err)
		}
	}
	q.done(2) // the commits of a=1 and b=1 are in the tree
	if w, ok := q.lookup([]byte("a")); !ok || string(w.value) != "2" {
		t.Fatalf("a after the older commit was applied: %q, %v; want the queued 2", w.value, ok)
	}
	if _, ok := q.lookup([]byte("b")); ok {
		t.Fatal("b still indexed after its commit was applied")
	}
	if got := q.upTo(3); got != 1 {
		t.Fatalf("upTo(3) = %d, want 1", got)
	}
	if got := q.after(2, 10); len(got) != 1 || got[0].seq != 3 {
		t.Fatalf("after(2) = %v, want the third commit", got)
	}
}

// TestDeferredOnDirectAsyncFiles: on a file system with direct I/O and
// Linux AIO, commits to leaves not in memory are deferred without the
// test hook, and what they wrote reads back before and after a reopen.
func TestDeferredOnDirectAsyncFiles(t *testing.T) {
	dir := t.TempDir()
	opts := &Options{PageSize: 4096, CacheSize: 1 << 20, Codec: "lz4"}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !db.asyncReads() {
		db.Close()
		t.Skip("no direct I/O through AIO here")
	}
	rng := rand.New(rand.NewPCG(9, 9))
	value := func() []byte {
		v := make([]byte, 300)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		return v
	}
	load := db.NewBatch()
	for i := 0; i < 20000; i++ {
		load.Set([]byte(fmt.Sprintf("k%06d", i)), value())
	}
	if err := load.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := 0; i < 300; i++ {
		k := fmt.Sprintf("k%06d", rng.IntN(20000))
		v := value()
		if err := db.Set([]byte(k), v); err != nil {
			t.Fatal(err)
		}
		want[k] = string(v)
		if got, err := db.Get([]byte(k)); err != nil || string(got) != want[k] {
			t.Fatalf("get %s right after its commit: %v", k, err)
		}
	}
	if st := db.Stats(); st.DeferredCommits == 0 {
		t.Fatalf("no commit deferred (%d pages read before commits)", st.PrefetchedPages)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for k, v := range want {
		if got, err := db.Get([]byte(k)); err != nil || string(got) != v {
			t.Fatalf("get %s after reopen: %v", k, err)
		}
	}
}

// coldDeferredTable opens a database with every commit deferred and a 256
// KiB cache, on a MemFS, loaded with k00000..k03999 = 250 incompressible
// bytes (four times the cache: most leaves are read from the store), all
// applied. The caller closes it.
func coldDeferredTable(t *testing.T) (*vfs.MemFS, *Options, *DB) {
	t.Helper()
	return coldDeferredTableWith(t, func(*Options) {})
}

// coldDeferredTableWith is coldDeferredTable with options set by set.
func coldDeferredTableWith(t *testing.T, set func(*Options)) (*vfs.MemFS, *Options, *DB) {
	t.Helper()
	deferEverything(t)
	fs := vfs.NewMem()
	opts := memOptions(fs)
	opts.CacheSize = 256 << 10
	set(opts)
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	load := db.NewBatch()
	for i := 0; i < 4000; i++ {
		v := make([]byte, 250)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		load.Set([]byte(fmt.Sprintf("k%05d", i)), v)
	}
	if err := load.Commit(nil); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, db)
	return fs, opts, db
}

// heldApplier opens a database on a MemFS whose commits are deferred
// while *missing is true (deferTest), and whose applier waits before each
// apply until release is called (idempotent; before Close).
func heldApplier(t *testing.T) (db *DB, missing *bool, release func()) {
	t.Helper()
	m := true
	deferTest = func() bool { return m }
	hold := make(chan struct{})
	applierHold = hold
	t.Cleanup(func() { deferTest = nil; applierHold = nil })
	db, err := Open("db", memOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	return db, &m, func() { once.Do(func() { close(hold) }) }
}

// lockedBuffer is a bytes.Buffer safe for a logger's writes from other
// goroutines while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestFailureNamesThePackageOnce: the error of a database that refuses
// writes after its deferred commits failed names "strata" once (its cause
// came wrapped as "strata: apply deferred commits: …") and still unwraps
// to the cause.
func TestFailureNamesThePackageOnce(t *testing.T) {
	db, _, release := heldApplier(t)
	defer func() { release(); db.Close() }()
	cause := vfs.InjectedError(vfs.OpRead, "db/00000001.seg")
	db.writeMu.Lock()
	err := db.failDeferred(db.readErr(fmt.Errorf("apply deferred commits: %w", cause)))
	db.writeMu.Unlock()
	if n := strings.Count(err.Error(), "strata:"); n != 1 {
		t.Fatalf("%q names strata %d times", err, n)
	}
	if !errors.Is(err, cause) || !strings.Contains(err.Error(), "apply deferred commits") {
		t.Fatalf("%q lost its cause", err)
	}
	if err := db.Set([]byte("k"), []byte("v")); !errors.Is(err, cause) {
		t.Fatalf("a write after the failure: %v", err)
	}
}

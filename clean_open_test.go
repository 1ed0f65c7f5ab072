package strata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/btree"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// unreachablePages are the pages of db's store that neither page 0 nor the
// current tree reaches: leaked, when no free is pending (the test fails if
// one is: those pages are not leaked yet). It reads every page of the tree.
func unreachablePages(t testing.TB, db *DB) []btree.PageID {
	t.Helper()
	if n := db.Stats().PendingFreePages; n != 0 {
		t.Fatalf("%d frees pending: cannot count leaked pages", n)
	}
	live := map[btree.PageID]bool{0: true}
	if err := db.tree.Walk(db.root, func(id btree.PageID) { live[id] = true }); err != nil {
		t.Fatalf("walk the tree: %v", err)
	}
	var leaked []btree.PageID
	if err := db.store.ForEachPage(func(id pagestore.PageID) error {
		if !live[id] {
			leaked = append(leaked, id)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return leaked
}

// commitRows commits n rows key%06d → value (128 bytes, compressible) in
// batches of 1000, and every 97th row a value in overflow pages.
func commitRows(t testing.TB, db *DB, n int) {
	t.Helper()
	for i := 0; i < n; i += 1000 {
		b := db.NewBatch()
		for j := i; j < min(i+1000, n); j++ {
			v := fmt.Sprintf("value-%06d-%0120d", j, j)
			if j%97 == 0 {
				v += string(make([]byte, 3*db.tree.MaxInlineValueSize()))
			}
			b.Set([]byte(fmt.Sprintf("key%06d", j)), []byte(v))
		}
		if err := b.Commit(nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCleanOpenReadsFewPages: Open of a cleanly closed database reads the
// meta page, not the tree (it used to walk every page to look for
// unreachable ones, which a clean Close leaves none of).
func TestCleanOpenReadsFewPages(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	commitRows(t, db, 30000)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := db.Stats()
	if st.Store.LivePages < 1000 {
		t.Fatalf("only %d pages: too few to tell a walk from none", st.Store.LivePages)
	}
	if st.Store.PagesRead > 4 || st.Pool.Misses > 4 {
		t.Fatalf("Open of a cleanly closed database of %d pages read %d pages (%d pool misses)", st.Store.LivePages, st.Store.PagesRead, st.Pool.Misses)
	}
	if db.walkedAtOpen {
		t.Fatal("Open walked the tree of a cleanly closed database")
	}
	for _, i := range []int{0, 97, 12345, 19999} {
		v, err := db.Get([]byte(fmt.Sprintf("key%06d", i)))
		if err != nil || len(v) < 10 || string(v[:12]) != fmt.Sprintf("value-%06d", i) {
			t.Fatalf("key %d after a clean reopen: %.20q, %v", i, v, err)
		}
	}
	if leaked := unreachablePages(t, db); len(leaked) != 0 {
		t.Fatalf("%d pages leaked across a clean Close: %v", len(leaked), leaked[:min(10, len(leaked))])
	}
}

// TestOpenClearsCleanFlag: the meta page on disk says clean only between a
// clean Close and the next Open; Open's checkpoint clears it before Open
// returns, so a crash of the session finds it clear.
func TestOpenClearsCleanFlag(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	commitRows(t, db, 100)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if m := storedMeta(t, fs); !m.clean {
		t.Fatal("the meta page of a clean Close is not marked clean")
	}
	db, err = Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	// The image a crash right after Open would leave.
	crashed := fs.CrashClone(vfs.CrashDropUnsynced, nil)
	if m := storedMeta(t, crashed); m.clean {
		t.Fatal("the meta page still says clean after Open returned")
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if m := storedMeta(t, fs.CrashClone(vfs.CrashDropUnsynced, nil)); m.clean {
		t.Fatal("a checkpoint while open marked the meta page clean")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// storedMeta reads the meta page from the page store in fs (which must not
// be open).
func storedMeta(t testing.TB, fs vfs.FS) meta {
	t.Helper()
	var m meta
	editStore(t, fs, func(s *pagestore.Store) {
		page := make([]byte, s.PageSize())
		if err := s.ReadPage(0, page); err != nil {
			t.Fatal(err)
		}
		var err error
		if m, err = decodeMeta(page); err != nil {
			t.Fatal(err)
		}
	})
	return m
}

// editStore opens the page store of the database "db" in fs, calls fn and
// closes it.
func editStore(t testing.TB, fs vfs.FS, fn func(*pagestore.Store)) {
	t.Helper()
	s, err := pagestore.Open("db", pagestore.Options{FS: fs, DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	fn(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// rewriteMeta changes the stored meta page of the database "db" in fs with
// edit, and writes an orphan page (a page no tree reaches) if orphan.
func rewriteMeta(t testing.TB, fs vfs.FS, orphan bool, edit func(page []byte)) {
	t.Helper()
	editStore(t, fs, func(s *pagestore.Store) {
		page := make([]byte, s.PageSize())
		if err := s.ReadPage(0, page); err != nil {
			t.Fatal(err)
		}
		edit(page)
		if _, _, err := s.WritePage(0, page); err != nil {
			t.Fatal(err)
		}
		if orphan {
			id, err := s.Allocate()
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.WritePage(id, make([]byte, s.PageSize())); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestOpenWalksOldFormatMeta: a meta page of the format before the clean
// flag (nothing after byte 44) is not clean: Open walks the tree and frees
// an unreachable page.
func TestOpenWalksOldFormatMeta(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	commitRows(t, db, 3000)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rewriteMeta(t, fs, true, func(page []byte) {
		if binary.LittleEndian.Uint32(page[44:]) != metaClean {
			t.Fatalf("meta page of a clean Close has flags %#x", binary.LittleEndian.Uint32(page[44:]))
		}
		clear(page[44:]) // what a binary built before the flag wrote
	})
	db, err = Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	if !db.walkedAtOpen {
		t.Fatal("Open of an old-format meta page did not walk the tree")
	}
	if n := db.Stats().OrphansFreed; n != 1 {
		t.Fatalf("Open freed %d unreachable pages, want the 1 planted", n)
	}
	if leaked := unreachablePages(t, db); len(leaked) != 0 {
		t.Fatalf("%d pages leaked", len(leaked))
	}
	if v, err := db.Get([]byte("key002999")); err != nil || len(v) == 0 {
		t.Fatalf("get after reopen: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenWalksWhenWALFollowsCleanMeta: a meta page marked clean with WAL
// records after its LSN (which a clean Close does not leave, but a copy of
// files might) is not trusted: Open replays the records and walks.
func TestOpenWalksWhenWALFollowsCleanMeta(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	commitRows(t, db, 3000)
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := db.Set([]byte("after"), []byte("checkpoint")); err != nil { // synced: SyncAlways
		t.Fatal(err)
	}
	after := fs.CrashClone(vfs.CrashDropUnsynced, nil)
	db.Close()
	rewriteMeta(t, after, true, func(page []byte) {
		m, err := decodeMeta(page)
		if err != nil {
			t.Fatal(err)
		}
		m.clean = true
		m.encode(page)
	})
	db, err = Open("db", memOptions(after))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.Get([]byte("after")); err != nil || string(v) != "checkpoint" {
		t.Fatalf("the commit in the WAL: %q, %v", v, err)
	}
	if !db.walkedAtOpen || db.Stats().OrphansFreed < 1 {
		t.Fatalf("Open with WAL records after a clean meta page: walked %v, freed %d", db.walkedAtOpen, db.Stats().OrphansFreed)
	}
	if leaked := unreachablePages(t, db); len(leaked) != 0 {
		t.Fatalf("%d pages leaked", len(leaked))
	}
}

// TestCloseWithOpenSnapshotFreesItsPages: a snapshot left open at Close is
// dead from then on (it answers ErrClosed), so the pages it kept from being
// freed go with Close's checkpoint: the meta page is marked clean, the next
// Open does not walk, and no page leaks.
func TestCloseWithOpenSnapshotFreesItsPages(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	commitRows(t, db, 3000)
	snap, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !it.First() {
		t.Fatalf("iterator over 3,000 rows: %v", it.Error())
	}
	commitRows(t, db, 3000) // rewrites every row: the snapshots' pages wait
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := snap.Get([]byte("k")); !errors.Is(err, ErrClosed) {
		t.Fatalf("snapshot Get after Close: %v, want ErrClosed", err)
	}
	if err := snap.Close(); err != nil {
		t.Fatalf("closing a snapshot left open at Close: %v", err)
	}
	it.Close()
	if !storedMeta(t, fs).clean {
		t.Fatal("Close with a snapshot and an iterator open did not mark the meta page clean")
	}
	db, err = Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.walkedAtOpen {
		t.Fatal("Open after a clean Close with a snapshot left open walked the tree")
	}
	if leaked := unreachablePages(t, db); len(leaked) != 0 {
		t.Fatalf("%d pages leaked", len(leaked))
	}
}

// TestCrashAfterCleanOpenFreesOrphans: the pages that commits after a
// clean Open write to the store (evictions; here made durable by a sync of
// the store, as the OS may write them back) are orphans if the crash loses
// the commits from the WAL (SyncNever). The next Open must walk and free
// them, though the last Close was clean.
func TestCrashAfterCleanOpenFreesOrphans(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs)
	opts.Sync = SyncNever
	opts.CacheSize = 256 << 10
	opts.CheckpointReplaced = -1 // no checkpoint makes the second session's pages durable
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	commitRows(t, db, 3000)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open("db", opts); err != nil {
		t.Fatal(err)
	}
	if db.walkedAtOpen {
		t.Fatal("Open after a clean Close walked the tree")
	}
	commitRows(t, db, 3000) // every row again: new pages, the old ones replaced
	if err := db.store.Sync(); err != nil {
		t.Fatal(err)
	}
	after := fs.CrashClone(vfs.CrashDropUnsynced, nil)
	db.Close()
	db, err = Open("db", memOptions(after))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !db.walkedAtOpen || db.Stats().OrphansFreed == 0 {
		t.Fatalf("Open after a crash of a session begun by a clean Open: walked %v, freed %d", db.walkedAtOpen, db.Stats().OrphansFreed)
	}
	if leaked := unreachablePages(t, db); len(leaked) != 0 {
		t.Fatalf("%d pages leaked", len(leaked))
	}
}

// cleanOpenWorkload is the session TestCrashAfterCleanOpenLeaksNothing
// crashes: from a cleanly closed database, Open (no walk), commits whose
// pages reach the store by eviction before any checkpoint (SyncNever, a
// cache smaller than the sessions' pages), a checkpoint, more commits, Close, and a second session
// of commits and Close. It returns at the first error (the crash).
func cleanOpenWorkload(fs vfs.FS, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	noise := make([]byte, 64<<10)
	for i := 0; i < len(noise); i += 8 {
		binary.LittleEndian.PutUint64(noise[i:], rng.Uint64())
	}
	opts := memOptions(fs)
	opts.Sync = SyncNever
	// A commit's pages fit the cache many times over (after the crash no
	// dirty page can be written back, and a commit that needs a frame
	// then waits for one), the sessions' pages do not.
	opts.CacheSize = 1 << 20
	for session := 0; session < 2; session++ {
		db, err := Open("db", opts)
		if err != nil {
			return err
		}
		for i := 0; i < 20; i++ {
			if i == 14 {
				if err := db.Checkpoint(); err != nil {
					db.Close()
					return err
				}
			}
			b := db.NewBatch()
			for j := 0; j < 60; j++ {
				k := []byte(fmt.Sprintf("key%06d", rng.IntN(3000)))
				switch r := rng.IntN(10); {
				case r == 0:
					b.Delete(k)
				case r == 1:
					// Overflow pages, incompressible: evictions fill
					// the store's write buffers.
					n := 5000 + rng.IntN(20000)
					off := rng.IntN(len(noise) - n)
					b.Set(k, noise[off:off+n])
				default:
					b.Set(k, []byte(fmt.Sprintf("s%d-%d-%0200d", session, i, j)))
				}
			}
			if err := b.Commit(nil); err != nil {
				db.Close()
				return err
			}
		}
		if err := db.Close(); err != nil {
			return err
		}
	}
	return nil
}

// TestCrashAfterCleanOpenLeaksNothing crashes sessions that start from a
// cleanly closed database (Open skips the walk) at every point, the
// commits, checkpoints, Close (its final checkpoint, the frees after it and
// the clean meta page) and the next Open included, dropping or tearing
// unsynced writes. After recovery no page leaks: the store holds exactly
// the pages the tree reaches, and so after a further clean Close and Open.
func TestCrashAfterCleanOpenLeaksNothing(t *testing.T) {
	base := vfs.NewMem()
	db, err := Open("db", memOptions(base))
	if err != nil {
		t.Fatal(err)
	}
	commitRows(t, db, 3000)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	const seed = 1
	dry := base.CrashClone(vfs.CrashDropUnsynced, nil)
	if err := cleanOpenWorkload(dry, seed); err != nil {
		t.Fatal(err)
	}
	total := dry.OpCount()
	t.Logf("%d operations", total)
	// Under the race detector 10 points, evenly spaced, still land in
	// each part of the workload (both sessions' commits, the checkpoint,
	// each Close, the second Open), run by the database's goroutines,
	// which is what the detector needs; up to 4 s of CPU a point under
	// it (the pool compresses the incompressible values), and the 60
	// points are for the leaks, which .ci/run checks without it.
	points := 60
	switch {
	case testing.Short():
		points = 15
	case raceEnabled:
		points = 10
	}
	step := max(1, total/points)
	rng := rand.New(rand.NewPCG(seed, 8))
	for at := 1 + rng.IntN(step); at < total+step; at += step {
		at := min(at, total)
		// Torn crashes keep some unsynced page writes: evicted pages of
		// commits that a crash loses from the WAL.
		mode := vfs.CrashTorn
		if at%3 == 0 {
			mode = vfs.CrashDropUnsynced
		}
		t.Run(fmt.Sprintf("op%d/%v", at, mode), func(t *testing.T) {
			fs := base.CrashClone(vfs.CrashDropUnsynced, nil)
			fs.CrashAfterOps(at)
			// Errors after the crash need not say so (a commit that
			// finds no frame it can write back says that).
			if err := cleanOpenWorkload(fs, seed); err != nil && !errors.Is(err, vfs.ErrCrashed) && !fs.Crashed() {
				t.Fatalf("workload: %v", err)
			}
			after := fs.CrashedClone(mode, rand.New(rand.NewPCG(seed, uint64(at))))
			db, err := Open("db", memOptions(after))
			if err != nil {
				t.Fatalf("recovery: %v", err)
			}
			if leaked := unreachablePages(t, db); len(leaked) != 0 {
				t.Fatalf("%d pages leaked after recovery (walked at Open: %v): %v", len(leaked), db.walkedAtOpen, leaked[:min(10, len(leaked))])
			}
			keys := len(scanAll(t, db))
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if db, err = Open("db", memOptions(after)); err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if db.walkedAtOpen {
				t.Fatal("Open after the recovered database's clean Close walked the tree")
			}
			if leaked := unreachablePages(t, db); len(leaked) != 0 {
				t.Fatalf("%d pages leaked across the clean Close after recovery", len(leaked))
			}
			if n := len(scanAll(t, db)); n != keys {
				t.Fatalf("%d keys after a clean reopen, %d before", n, keys)
			}
		})
	}
}

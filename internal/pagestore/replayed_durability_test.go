package pagestore

// What recovery replays, and the map-log deltas it applies, are durable
// before the new session builds on them; a crash before a new store's
// first sync leaves a store that opens. (Found by a review in the
// thirty-second session; each test failed before its fix in recover.go.)

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestNewStoreReopensAfterCrashBeforeFirstSync: a new store whose first
// segment's directory entry became durable before any of its bytes (here:
// the dictionary install's directory sync) opens after a crash before its
// first Sync (the segment was taken for a replay head that must hold data:
// "short segment header", ErrCorrupt).
func TestNewStoreReopensAfterCrashBeforeFirstSync(t *testing.T) {
	fs := vfs.NewMem()
	o := dictOptions(fs)
	o.WriteBufferSize = 1 << 20
	o.SegmentSize = 4 << 20
	s, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	writePages(t, s, 0, 64, jsonPage)
	after := fs.CrashClone(vfs.CrashDropUnsynced, nil)
	s3, err := Open("db", dictOptions(after))
	if err != nil {
		t.Fatalf("reopen after crash (nothing was synced): %v", err)
	}
	s3.Close()
}

// TestNewStoreReopensWithItsSegmentsEntryDurable: the same, the directory
// entry made durable as a file system's journal commit may make it.
func TestNewStoreReopensWithItsSegmentsEntryDurable(t *testing.T) {
	fs := vfs.NewMem()
	o := testOptions(fs, mustCodec(t, "zstd"))
	s, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	_ = s
	// What ext4's periodic journal commit does to the new file's entry.
	if err := fs.SyncDir("db"); err != nil {
		t.Fatal(err)
	}
	after := fs.CrashClone(vfs.CrashDropUnsynced, nil)
	// strata check agrees (it called the empty head corrupt).
	in, err := Inspect(after, "db")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range in.Findings {
		if !f.Repairable {
			t.Errorf("Inspect: %s: %s, which Open accepts", f.File, f.Msg)
		}
	}
	in.Close()
	s3, err := Open("db", testOptions(after, mustCodec(t, "zstd")))
	if err != nil {
		t.Fatalf("reopen after crash: %v", err)
	}
	s3.Close()
}

// killStore simulates the process dying: nothing more is done with s, and
// its lock is released (the kernel does that for a dead process). The
// MemFS keeps everything written, synced or not, like the page cache.
func killStore(t *testing.T, s *Store) {
	t.Helper()
	if err := s.lock.Close(); err != nil {
		t.Fatal(err)
	}
}

// storeWithUnsyncedWrites leaves in a memory file system a store whose
// pages 0–2 were synced at version 1 and written at version 2 (enough to
// seal and write buffers), and whose process died inside the Sync after,
// between the segment write and its fsync (modelled by failing the fsync
// with vfs.NotIssuedError, which loses no cached data, as a process death
// does not; then abandoning the store).
func storeWithUnsyncedWrites(t *testing.T) (*vfs.MemFS, Options) {
	t.Helper()
	fs := vfs.NewMem()
	o := testOptions(fs, mustCodec(t, "none"))
	storeWithFailedSync(t, fs, o, func(op vfs.Op, path string) error {
		if op == vfs.OpSync {
			return vfs.NotIssuedError(op, path) // a process death: the cache keeps the writes
		}
		return nil
	})
	return fs, o
}

// storeWithFailedSync writes pages 0–2 at version 1 and syncs, writes them
// at version 2 and syncs with inject failing the sync, then abandons the
// store (killStore).
func storeWithFailedSync(t *testing.T, fs *vfs.MemFS, o Options, inject vfs.Injector) {
	t.Helper()
	s, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	for ver := 1; ver <= 2; ver++ {
		for id := PageID(0); id < 3; id++ {
			if _, _, err := s.WritePage(id, pageContent(id, ver, testPageSize)); err != nil {
				t.Fatal(err)
			}
		}
		if ver == 2 {
			fs.SetInjector(inject)
		}
		if err := s.Sync(); (err == nil) != (ver == 1) {
			t.Fatalf("sync of version %d: %v", ver, err)
		}
	}
	fs.SetInjector(nil)
	killStore(t, s)
}

// TestReplayedRecordsSyncedBeforeCheckpoint: recovery replays records
// that were written to a segment but never synced (a process crash keeps
// them in the OS's cache); the next session's checkpoint then makes a
// durable map point at them. Recovery syncs them, so a power loss after
// that checkpoint loses nothing (before: the store did not open, "beyond
// the end of segment").
func TestReplayedRecordsSyncedBeforeCheckpoint(t *testing.T) {
	fs, o := storeWithUnsyncedWrites(t)
	s2, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, testPageSize)
	if err := s2.ReadPage(0, buf); err != nil || !bytes.Equal(buf, pageContent(0, 2, testPageSize)) {
		t.Fatalf("after restart page 0: %v", err)
	}
	if err := s2.Checkpoint(); err != nil { // the recovered state is now durable
		t.Fatal(err)
	}
	killStore(t, s2)
	fs.Crash(vfs.CrashDropUnsynced, nil) // power loss

	s3, err := Open("db", o)
	if err != nil {
		t.Fatalf("open after power loss, following a successful checkpoint: %v", err)
	}
	defer s3.Close()
	for id := PageID(0); id < 3; id++ {
		if err := s3.ReadPage(id, buf); err != nil || !bytes.Equal(buf, pageContent(id, 2, testPageSize)) {
			t.Fatalf("page %d after a successful checkpoint and a power loss: %v", id, err)
		}
	}
}

// storeWithUnsyncedCleaning leaves in a memory file system a store whose
// cleaning pass wrote its map-log delta and died before the delta's sync
// (modelled by failing it with vfs.NotIssuedError, then abandoning the
// store): recovery applies the delta and finds the pass's victims
// obsolete.
func storeWithUnsyncedCleaning(t *testing.T) (*vfs.MemFS, Options) {
	t.Helper()
	fs := vfs.NewMem()
	o := testOptions(fs, mustCodec(t, "none"))
	o = storeWithFailedCleaning(t, fs, o, func(op vfs.Op, path string) error {
		if op == vfs.OpSync && strings.HasSuffix(path, mapLogName) {
			return vfs.NotIssuedError(op, path) // a process death: the cache keeps the writes
		}
		return nil
	})
	return fs, o
}

// storeWithFailedCleaning writes 40 pages, rewrites every second one (two
// checkpoints), runs a cleaning pass with inject failing its syncs, then
// abandons the store (killStore). It returns o as the store used it.
func storeWithFailedCleaning(t *testing.T, fs *vfs.MemFS, o Options, inject vfs.Injector) Options {
	t.Helper()
	o.MapLogRatio = 40
	o.CleanerThreshold = 0.1
	s, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	for id := PageID(0); id < 40; id++ {
		if _, _, err := s.WritePage(id, pageContent(id, 1, testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	for id := PageID(0); id < 40; id += 2 { // garbage in the old segments
		if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	fs.SetInjector(inject)
	if _, err := s.Clean(); err == nil {
		t.Fatal("clean did not fail")
	}
	fs.SetInjector(nil)
	killStore(t, s)
	return o
}

// TestMapLogSyncedBeforeObsoleteSegmentsRemoved: a cleaning pass's delta
// is written to the map log and the process dies before its sync.
// Recovery applies the delta and removes the victims as obsolete; a later
// Sync makes the removals durable. Recovery syncs the map log first, so a
// power loss then still finds the delta (before: the durable map pointed
// into the removed victims, "checkpoint references missing segment").
func TestMapLogSyncedBeforeObsoleteSegmentsRemoved(t *testing.T) {
	fs, o := storeWithUnsyncedCleaning(t)
	checkCleaningSurvivesPowerLoss(t, fs, o)
}

// checkCleaningSurvivesPowerLoss reopens the store storeWithFailedCleaning
// left, writes and syncs a page (which makes the recovery's removal of the
// pass's victims durable too), then crashes and checks every page.
func checkCleaningSurvivesPowerLoss(t *testing.T, fs *vfs.MemFS, o Options) {
	t.Helper()
	s2, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s2.WritePage(100, pageContent(100, 1, testPageSize)); err != nil {
		t.Fatal(err)
	}
	if err := s2.Sync(); err != nil {
		t.Fatal(err)
	}
	killStore(t, s2)
	fs.Crash(vfs.CrashDropUnsynced, nil)

	s3, err := Open("db", o)
	if err != nil {
		t.Fatalf("open after power loss: %v", err)
	}
	defer s3.Close()
	buf := make([]byte, testPageSize)
	for id := PageID(0); id < 40; id++ {
		want := 1
		if id%2 == 0 {
			want = 2
		}
		if err := s3.ReadPage(id, buf); err != nil || !bytes.Equal(buf, pageContent(id, want, testPageSize)) {
			t.Fatalf("page %d: %v", id, err)
		}
	}
}

// TestReplayedRecordsSyncedBeforeNewHead: as
// TestReplayedRecordsSyncedBeforeCheckpoint, without a checkpoint: the
// second session writes and syncs a new head. A power loss that tears
// unsynced writes then found the replayed old head torn although it was no
// longer the stream's newest segment (before: ErrCorrupt in 42 of 50).
func TestReplayedRecordsSyncedBeforeNewHead(t *testing.T) {
	fs, o := storeWithUnsyncedWrites(t)
	s2, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s2.WritePage(50, pageContent(50, 1, testPageSize)); err != nil {
		t.Fatal(err)
	}
	if err := s2.Sync(); err != nil {
		t.Fatal(err)
	}
	killStore(t, s2)
	fails := 0
	for i := 0; i < 50; i++ {
		after := fs.CrashClone(vfs.CrashTorn, rand.New(rand.NewPCG(uint64(i), 9)))
		s3, err := Open("db", testOptions(after, mustCodec(t, "none")))
		if err != nil {
			fails++
			if fails == 1 {
				t.Logf("seed %d: %v", i, err)
			}
			continue
		}
		buf := make([]byte, testPageSize)
		for _, p := range []struct {
			id  PageID
			ver int
		}{{0, 2}, {1, 2}, {2, 2}, {50, 1}} {
			if err := s3.ReadPage(p.id, buf); err != nil || !bytes.Equal(buf, pageContent(p.id, p.ver, testPageSize)) {
				t.Fatalf("seed %d: page %d not at version %d after a power loss: %v", i, p.id, p.ver, err)
			}
		}
		s3.Close()
	}
	if fails > 0 {
		t.Fatalf("%d of 50 torn power losses left the store unopenable", fails)
	}
}

// TestCorruptStoreKeepsObsoleteSegments: recovery removes the segments a
// cleaning pass left obsolete only once everything else checked out. It
// removed them first, and then found a replayed segment corrupt: the
// store reported corrupt had lost files. (Found by a reviewer.)
func TestCorruptStoreKeepsObsoleteSegments(t *testing.T) {
	fs, o := storeWithUnsyncedCleaning(t)
	before, _ := fs.List("db")
	slices.Sort(before)
	var segs []string
	for _, n := range before {
		if strings.HasSuffix(n, ".seg") {
			segs = append(segs, n)
		}
	}
	f, err := fs.OpenFile("db/"+segs[len(segs)-1], os.O_RDWR, 0, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{0xff, 0xff, 0xff, 0xff}, 0) // the newest segment's header damaged
	f.Close()
	if _, err := Open("db", o); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open: %v, want ErrCorrupt", err)
	}
	after, _ := fs.List("db")
	slices.Sort(after)
	if !slices.Equal(before, after) {
		t.Errorf("the store reported corrupt lost files: before %v, after %v", before, after)
	}
}

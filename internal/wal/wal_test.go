package wal

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

const testDir = "db/wal"

// record is one replayed record.
type record struct {
	lsn     uint64
	payload []byte
}

func mustOpen(t testing.TB, dir string, opts Options) *Log {
	t.Helper()
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

// appendWait appends payload and, if durable, waits for it to be durable:
// what a committer does (Append under its lock, WaitDurable after).
func appendWait(l *Log, payload []byte, durable bool) (uint64, error) {
	lsn, err := l.Append(payload)
	if err == nil && durable {
		err = l.WaitDurable(lsn)
	}
	return lsn, err
}

// settle waits until the writer has nothing left to do (every appended
// record written and, as the mode says, synced; every Rotate served) and
// returns the log's sticky error. It makes a single-goroutine workload's
// file system operations deterministic.
func (l *Log) settle() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.err == nil && !l.stopped && (l.inRound || l.hasWorkLocked()) {
		l.progress.Wait()
	}
	return l.err
}

// replayAll returns the records with LSN >= from, copying the payloads.
func replayAll(t testing.TB, l *Log, from uint64) []record {
	t.Helper()
	var recs []record
	err := l.Replay(from, func(lsn uint64, p []byte) error {
		recs = append(recs, record{lsn, slices.Clone(p)})
		return nil
	})
	if err != nil {
		t.Fatalf("Replay(%d): %v", from, err)
	}
	return recs
}

// randPayload returns n bytes that identify lsn, so that a record replayed
// under the wrong LSN is caught even when payloads repeat.
func randPayload(rng *rand.Rand, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(rng.Uint32())
	}
	return p
}

// checkRecords verifies that recs are exactly want[from-1:] with LSNs from
// on (want[i] is the payload of LSN i+1).
func checkRecords(t testing.TB, recs []record, want [][]byte, from uint64) {
	t.Helper()
	if from < 1 {
		from = 1
	}
	if int(from-1) > len(want) {
		from = uint64(len(want)) + 1
	}
	if len(recs) != len(want)-int(from-1) {
		t.Fatalf("replayed %d records from LSN %d, want %d", len(recs), from, len(want)-int(from-1))
	}
	for i, r := range recs {
		lsn := from + uint64(i)
		if r.lsn != lsn {
			t.Fatalf("record %d has LSN %d, want %d", i, r.lsn, lsn)
		}
		if !bytes.Equal(r.payload, want[lsn-1]) {
			t.Fatalf("LSN %d: payload differs (%d bytes, want %d)", lsn, len(r.payload), len(want[lsn-1]))
		}
	}
}

// walFiles lists the WAL file names in dir.
func walFiles(t testing.TB, fs vfs.FS, dir string) []string {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if _, ok := parseFileName(n); ok {
			out = append(out, n)
		}
	}
	return out
}

// TestRoundTrip appends records of random sizes (0 to 100 KiB) with mixed
// sync flags, reopens the log and checks that Replay gives them all back,
// from the start and from every kind of middle point, and that the log
// goes on after the last LSN.
func TestRoundTrip(t *testing.T) {
	fs := vfs.NewMem()
	opts := Options{FS: fs, SyncMode: SyncNever}
	l := mustOpen(t, testDir, opts)
	if got := l.NextLSN(); got != 1 {
		t.Fatalf("NextLSN of a new log = %d, want 1", got)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	var want [][]byte
	for i := 0; i < 200; i++ {
		n := rng.IntN(100<<10 + 1)
		if i%17 == 0 {
			n = 0 // empty payloads are records too
		}
		p := randPayload(rng, n)
		lsn, err := appendWait(l, p, rng.IntN(4) == 0)
		if err != nil {
			t.Fatal(err)
		}
		if lsn != uint64(i+1) {
			t.Fatalf("append %d got LSN %d", i, lsn)
		}
		want = append(want, p)
	}
	// Replay before Close sees everything written so far.
	checkRecords(t, replayAll(t, l, 0), want, 1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l = mustOpen(t, testDir, opts)
	defer l.Close()
	if got := l.NextLSN(); got != uint64(len(want))+1 {
		t.Fatalf("NextLSN after reopen = %d, want %d", got, len(want)+1)
	}
	if got := l.SyncedLSN(); got != uint64(len(want)) {
		t.Fatalf("SyncedLSN after reopen = %d, want %d", got, len(want))
	}
	for _, from := range []uint64{0, 1, 2, 17, 100, 199, 200, 201, 1000} {
		checkRecords(t, replayAll(t, l, from), want, from)
	}
	// Appending continues the LSN sequence.
	p := []byte("after reopen")
	lsn, err := appendWait(l, p, true)
	if err != nil || lsn != uint64(len(want))+1 {
		t.Fatalf("Append after reopen = %d, %v", lsn, err)
	}
	want = append(want, p)
	checkRecords(t, replayAll(t, l, 150), want, 150)
}

// TestReplayCallbackError checks that Replay stops at fn's error and
// returns it unchanged.
func TestReplayCallbackError(t *testing.T) {
	l := mustOpen(t, testDir, Options{FS: vfs.NewMem()})
	defer l.Close()
	for i := 0; i < 10; i++ {
		if _, err := appendWait(l, []byte{byte(i)}, false); err != nil {
			t.Fatal(err)
		}
	}
	stop := errors.New("stop here")
	var seen []uint64
	err := l.Replay(3, func(lsn uint64, p []byte) error {
		seen = append(seen, lsn)
		if lsn == 5 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("Replay returned %v, want the callback's error itself", err)
	}
	if !slices.Equal(seen, []uint64{3, 4, 5}) {
		t.Fatalf("callback saw %v", seen)
	}
}

// fileFirsts reads the first LSN of every WAL file in dir from its header.
func fileFirsts(t *testing.T, fs vfs.FS, dir string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, name := range walFiles(t, fs, dir) {
		num, _ := parseFileName(name)
		hdr, _, err := readHeader(fs, filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		first, err := decodeFileHeader(hdr, num)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = first
	}
	return out
}

// TestRotationAndTruncate writes a log across many small files and checks
// that TruncateBefore removes exactly the files all of whose records are
// below its argument (computed independently from the file headers), that
// the remaining records replay, and that LSNs go on even when every record
// has been truncated away.
func TestRotationAndTruncate(t *testing.T) {
	fs := vfs.NewMem()
	opts := Options{FS: fs, SyncMode: SyncNever, FileSize: 1 << 10}
	l := mustOpen(t, testDir, opts)
	rng := rand.New(rand.NewPCG(2, 2))
	var want [][]byte
	for i := 0; i < 400; i++ {
		p := randPayload(rng, rng.IntN(600))
		if _, err := appendWait(l, p, false); err != nil {
			t.Fatal(err)
		}
		if err := l.settle(); err != nil { // batches of one record
			t.Fatal(err)
		}
		want = append(want, p)
		if i%97 == 0 {
			if err := l.Rotate(); err != nil {
				t.Fatal(err)
			}
		}
	}
	files := walFiles(t, fs, testDir)
	if len(files) < 50 {
		t.Fatalf("only %d files with FileSize 1 KiB", len(files))
	}
	if st := l.Stats(); st.Files != len(files) || st.Rotations != int64(len(files)-1) {
		t.Fatalf("Stats %+v, %d files on disk", st, len(files))
	}
	// A file is closed once it reaches FileSize, so none exceeds it by
	// more than one record (settled appends: batches of one).
	for _, name := range files {
		st, err := fs.Stat(filepath.Join(testDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() >= opts.FileSize+recordHeaderSize+600 {
			t.Fatalf("%s is %d bytes, FileSize %d", name, st.Size(), opts.FileSize)
		}
	}
	checkRecords(t, replayAll(t, l, 0), want, 1)

	for _, x := range []uint64{1, 2, 50, 51, 52, 200, 390, 401, 5000} {
		firsts := fileFirsts(t, fs, testDir)
		before := walFiles(t, fs, testDir)
		var expect []string
		for i, name := range before {
			// File i's records are firsts[i] .. firsts[i+1]-1; it goes
			// if they are all below x, unless it is the newest.
			if i < len(before)-1 && firsts[before[i+1]] <= x {
				continue
			}
			expect = append(expect, name)
		}
		if err := l.TruncateBefore(x); err != nil {
			t.Fatal(err)
		}
		if got := walFiles(t, fs, testDir); !slices.Equal(got, expect) {
			t.Fatalf("TruncateBefore(%d) left %v, want %v", x, got, expect)
		}
		if fl := l.FirstLSN(); fl != firsts[expect[0]] || fl > x && x <= uint64(len(want)) {
			t.Fatalf("TruncateBefore(%d): FirstLSN %d, first file starts at %d", x, fl, firsts[expect[0]])
		}
		if x <= uint64(len(want)) {
			checkRecords(t, replayAll(t, l, x), want, x)
		}
	}
	if got := walFiles(t, fs, testDir); len(got) != 1 {
		t.Fatalf("after truncating everything: %v", got)
	}
	// Make the active file removable too: the log is then empty, and
	// must still remember its next LSN across a reopen.
	if err := l.Rotate(); err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateBefore(l.NextLSN()); err != nil {
		t.Fatal(err)
	}
	if n := len(walFiles(t, fs, testDir)); n != 1 {
		t.Fatalf("%d files after truncating all", n)
	}
	if l.FirstLSN() != l.NextLSN() {
		t.Fatalf("empty log: FirstLSN %d, NextLSN %d", l.FirstLSN(), l.NextLSN())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, testDir, opts)
	defer l.Close()
	if got := l.NextLSN(); got != uint64(len(want))+1 {
		t.Fatalf("NextLSN of the emptied log after reopen = %d, want %d", got, len(want)+1)
	}
	if recs := replayAll(t, l, 0); len(recs) != 0 {
		t.Fatalf("replayed %d records from an emptied log", len(recs))
	}
	if err := l.Rotate(); err != nil { // no record in the active file: nothing to do
		t.Fatal(err)
	}
	if n := len(walFiles(t, fs, testDir)); n != 1 {
		t.Fatalf("Rotate of an empty file made %d files", n)
	}
}

// TestSyncModes checks what each mode makes durable, by crashing a clone of
// the file system (dropping unsynced data) right after the appends.
func TestSyncModes(t *testing.T) {
	recovered := func(t *testing.T, fs *vfs.MemFS) int {
		t.Helper()
		c := fs.CrashClone(vfs.CrashDropUnsynced, nil)
		l := mustOpen(t, testDir, Options{FS: c})
		defer l.Close()
		return len(replayAll(t, l, 0))
	}
	t.Run("always", func(t *testing.T) {
		fs := vfs.NewMem()
		l := mustOpen(t, testDir, Options{FS: fs})
		defer l.Close()
		// Nobody waits, but the writer fsyncs every batch.
		lsn, err := l.Append([]byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.settle(); err != nil || l.SyncedLSN() != lsn {
			t.Fatalf("SyncAlways, unwaited Append: lsn %d err %v, SyncedLSN %d", lsn, err, l.SyncedLSN())
		}
		if n := recovered(t, fs); n != 1 {
			t.Fatalf("%d records survived, want 1", n)
		}
	})
	t.Run("never", func(t *testing.T) {
		fs := vfs.NewMem()
		l := mustOpen(t, testDir, Options{FS: fs, SyncMode: SyncNever})
		defer l.Close()
		for i := 0; i < 3; i++ {
			if _, err := appendWait(l, []byte("x"), false); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.settle(); err != nil || l.Stats().Records != 3 {
			t.Fatalf("settle: %v, Stats %+v", err, l.Stats())
		}
		if l.SyncedLSN() != 0 {
			t.Fatalf("SyncNever: SyncedLSN %d after unsynced appends", l.SyncedLSN())
		}
		if n := recovered(t, fs); n != 0 {
			t.Fatalf("%d unsynced records survived a crash that drops unsynced data", n)
		}
		lsn, err := appendWait(l, []byte("y"), true)
		if err != nil || l.SyncedLSN() != lsn {
			t.Fatalf("Append(true): lsn %d err %v, SyncedLSN %d", lsn, err, l.SyncedLSN())
		}
		if n := recovered(t, fs); n != 4 {
			t.Fatalf("%d records survived, want 4", n)
		}
		if _, err := appendWait(l, []byte("z"), false); err != nil {
			t.Fatal(err)
		}
		if err := l.Sync(); err != nil || l.SyncedLSN() != 5 {
			t.Fatalf("Sync: %v, SyncedLSN %d", err, l.SyncedLSN())
		}
		if n := recovered(t, fs); n != 5 {
			t.Fatalf("%d records survived, want 5", n)
		}
	})
	t.Run("periodic", func(t *testing.T) {
		fs := vfs.NewMem()
		l := mustOpen(t, testDir, Options{FS: fs, SyncMode: SyncPeriodic, SyncInterval: 2 * time.Millisecond})
		defer l.Close()
		lsn, err := appendWait(l, []byte("x"), false)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for l.SyncedLSN() < lsn {
			if time.Now().After(deadline) {
				t.Fatal("the periodic syncer never synced")
			}
			time.Sleep(time.Millisecond)
		}
		if n := recovered(t, fs); n != 1 {
			t.Fatalf("%d records survived, want 1", n)
		}
	})
}

// TestNewFileDurability checks the directory fsyncs: a synced record
// survives a crash right after the log (and its directory, and its parent)
// was created, and right after the log moved to a new file.
func TestNewFileDurability(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, "a/b/wal", Options{FS: fs, SyncMode: SyncNever, FileSize: 64})
	defer l.Close()
	check := func(want int) {
		t.Helper()
		c := fs.CrashClone(vfs.CrashDropUnsynced, nil)
		l2 := mustOpen(t, "a/b/wal", Options{FS: c})
		defer l2.Close()
		if n := len(replayAll(t, l2, 0)); n != want {
			t.Fatalf("%d records survived, want %d", n, want)
		}
	}
	if _, err := appendWait(l, bytes.Repeat([]byte("a"), 100), true); err != nil {
		t.Fatal(err)
	}
	check(1)
	// The file is full: this append goes to a new file.
	if _, err := appendWait(l, []byte("b"), true); err != nil {
		t.Fatal(err)
	}
	if l.Stats().Files != 2 {
		t.Fatalf("%d files, want 2", l.Stats().Files)
	}
	check(2)
	if err := l.Rotate(); err != nil {
		t.Fatal(err)
	}
	if _, err := appendWait(l, []byte("c"), true); err != nil {
		t.Fatal(err)
	}
	check(3)
}

// TestClosed checks that every operation after Close fails with ErrClosed.
func TestClosed(t *testing.T) {
	l := mustOpen(t, testDir, Options{FS: vfs.NewMem()})
	if _, err := appendWait(l, []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := appendWait(l, nil, false); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	if err := l.Sync(); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync after Close: %v", err)
	}
	if err := l.Rotate(); !errors.Is(err, ErrClosed) {
		t.Errorf("Rotate after Close: %v", err)
	}
	if err := l.TruncateBefore(10); !errors.Is(err, ErrClosed) {
		t.Errorf("TruncateBefore after Close: %v", err)
	}
	if err := l.Replay(0, func(uint64, []byte) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Replay after Close: %v", err)
	}
	if err := l.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
}

// TestTooLarge checks the record size limit and that exceeding it does not
// harm the log.
func TestTooLarge(t *testing.T) {
	l := mustOpen(t, testDir, Options{FS: vfs.NewMem()})
	defer l.Close()
	if _, err := appendWait(l, make([]byte, MaxRecordSize+1), true); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Append of MaxRecordSize+1 bytes: %v", err)
	}
	if lsn, err := appendWait(l, []byte("fine"), true); err != nil || lsn != 1 {
		t.Fatalf("Append after a refused one: %d, %v", lsn, err)
	}
}

// TestLocked checks that a log cannot be opened twice at once.
func TestLocked(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, testDir, Options{FS: fs})
	if _, err := Open(testDir, Options{FS: fs}); !errors.Is(err, vfs.ErrLocked) {
		t.Fatalf("second Open: %v", err)
	}
	l.Close()
	l = mustOpen(t, testDir, Options{FS: fs})
	l.Close()
}

// TestOptions checks validation.
func TestOptions(t *testing.T) {
	for _, o := range []Options{{SyncMode: 7}, {FileSize: -1}, {SyncInterval: -time.Second}} {
		o.FS = vfs.NewMem()
		if _, err := Open(testDir, o); err == nil {
			t.Errorf("Open accepted %+v", o)
		}
	}
	if SyncAlways.String() != "always" || SyncPeriodic.String() != "periodic" || SyncNever.String() != "never" {
		t.Error("SyncMode.String")
	}
}

// TestFileNames checks the file name scheme.
func TestFileNames(t *testing.T) {
	for num, name := range map[uint32]string{1: "wal-00000001.log", 12345678: "wal-12345678.log",
		123456789: "wal-123456789.log", 4294967295: "wal-4294967295.log"} {
		if got := fileName(num); got != name {
			t.Errorf("fileName(%d) = %q", num, got)
		}
		if got, ok := parseFileName(name); !ok || got != num {
			t.Errorf("parseFileName(%q) = %d, %v", name, got, ok)
		}
	}
	for _, bad := range []string{"wal-00000000.log", "wal-0000001.log", "wal-012345678.log", "wal-4294967296.log",
		"wal-0000000a.log", "wal-+0000001.log", "wal-00000001.lo", "00000001.log", "wal.lock", "wal-00000001.log.tmp"} {
		if n, ok := parseFileName(bad); ok {
			t.Errorf("parseFileName(%q) = %d, accepted", bad, n)
		}
	}
}

// TestOSFileSystem runs the basic cycle on the real file system.
func TestOSFileSystem(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wal")
	opts := Options{FileSize: 4 << 10}
	l := mustOpen(t, dir, opts)
	rng := rand.New(rand.NewPCG(3, 3))
	var want [][]byte
	for i := 0; i < 100; i++ {
		p := randPayload(rng, rng.IntN(2000))
		if _, err := appendWait(l, p, i%10 == 0); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	if err := l.TruncateBefore(50); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// A torn tail on a real file: append half a record by hand.
	names := walFiles(t, vfs.Default, dir)
	last := filepath.Join(dir, names[len(names)-1])
	f, err := os.OpenFile(last, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(appendRecord(nil, 101, []byte("torn record"), payloadCRC([]byte("torn record")))[:20])
	f.Close()

	l = mustOpen(t, dir, opts)
	defer l.Close()
	checkRecords(t, replayAll(t, l, 50), want, 50)
	if l.FirstLSN() > 50 || l.NextLSN() != 101 {
		t.Fatalf("FirstLSN %d NextLSN %d", l.FirstLSN(), l.NextLSN())
	}
}

// TestConcurrentReplay runs Replay while other goroutines append: it must
// see a contiguous run of valid records, never a half-written one.
func TestConcurrentReplay(t *testing.T) {
	l := mustOpen(t, testDir, Options{FS: vfs.NewMem(), SyncMode: SyncNever, FileSize: 8 << 10})
	defer l.Close()
	payload := func(id int) []byte {
		return []byte(fmt.Sprintf("record %d %s", id, bytes.Repeat([]byte{'x'}, id%300)))
	}
	// The LSN a payload gets is known only when Append returns: got maps
	// LSNs to payloads for the appends that have returned.
	var mu sync.Mutex
	got := map[uint64][]byte{}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				p := payload(g*1000 + i)
				lsn, err := appendWait(l, p, false)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got[lsn] = p
				mu.Unlock()
			}
		}()
	}
	for r := 0; r < 5; r++ {
		var last uint64
		err := l.Replay(0, func(lsn uint64, p []byte) error {
			if lsn != last+1 {
				return fmt.Errorf("LSN %d after %d", lsn, last)
			}
			last = lsn
			mu.Lock()
			want, ok := got[lsn]
			mu.Unlock()
			// A record replayed is written, but its Append may not have
			// returned yet; if it has, the payload must match.
			if ok && !bytes.Equal(p, want) {
				return fmt.Errorf("LSN %d: wrong payload", lsn)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	all := replayAll(t, l, 0)
	if len(all) != 800 {
		t.Fatalf("%d records", len(all))
	}
	for _, r := range all {
		if !bytes.Equal(r.payload, got[r.lsn]) {
			t.Fatalf("LSN %d: wrong payload", r.lsn)
		}
	}
}

package pagestore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// syncHookFS wraps an FS so that a test can stop the next File.Sync (or
// File.ReadAt) of a segment file in its tracks: the hook, if set, is taken
// (once) and called before the operation reaches the file system. It also
// counts Close calls per segment file.
type syncHookFS struct {
	vfs.FS
	hook     atomic.Pointer[func()]
	readHook atomic.Pointer[func()]

	mu     sync.Mutex
	closes map[string]int
}

type syncHookFile struct {
	vfs.File
	fs *syncHookFS
}

func (h *syncHookFS) OpenFile(name string, flag int, perm os.FileMode, opts vfs.OpenOptions) (vfs.File, error) {
	f, err := h.FS.OpenFile(name, flag, perm, opts)
	if err != nil {
		return nil, err
	}
	return &syncHookFile{File: f, fs: h}, nil
}

func isSegment(name string) bool {
	_, ok := parseSegmentFileName(filepath.Base(name))
	return ok
}

func (f *syncHookFile) Sync() error {
	if isSegment(f.Name()) {
		if fn := f.fs.hook.Swap(nil); fn != nil {
			(*fn)()
		}
	}
	return f.File.Sync()
}

func (f *syncHookFile) ReadAt(p []byte, off int64) (int, error) {
	if isSegment(f.Name()) {
		if fn := f.fs.readHook.Swap(nil); fn != nil {
			(*fn)()
		}
	}
	return f.File.ReadAt(p, off)
}

func (f *syncHookFile) Close() error {
	f.fs.mu.Lock()
	if f.fs.closes == nil {
		f.fs.closes = map[string]int{}
	}
	f.fs.closes[f.Name()]++
	f.fs.mu.Unlock()
	return f.File.Close()
}

func headNum(s *Store) uint32 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.streams[streamHot].head.num
}

// TestReviewEmptySegmentBreaksSecondRecovery: Sync fsyncs the head outside
// the mutex and then syncs the directory. A rollover during that fsync
// creates the next segment, whose header is still only in the write buffer;
// the directory sync makes its (empty) entry durable. After a crash,
// recovery drops the empty newest segment n+1 ("dropping empty torn
// segment") but still advances nextSegNum past it and creates n+2. Once a
// Sync makes n+2 (and the removal of n+1) durable, the next crash leaves a
// gap n, n+2 and Open fails with ErrCorrupt: synced data becomes
// unrecoverable. (A real file system can also make an empty segment's entry
// durable on its own, e.g. an ext4 journal commit right after a rollover.)
func TestReviewEmptySegmentBreaksSecondRecovery(t *testing.T) {
	mem := vfs.NewMem()
	hfs := &syncHookFS{FS: mem}
	s, err := Open("db", testOptions(hfs, mustCodec(t, "none")))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for id := PageID(0); id < 3; id++ {
		if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	entered, release := make(chan struct{}), make(chan struct{})
	fn := func() { close(entered); <-release }
	hfs.hook.Store(&fn)
	syncErr := make(chan error, 1)
	go func() { syncErr <- s.Sync() }() // head 1 is new: this Sync will SyncDir
	<-entered                           // Sync is in its fsync, outside s.mu

	// Meanwhile the log rolls over to segment 2 (raw 4 KiB pages, 64 KiB
	// segments: about 15 pages).
	first := headNum(s)
	ver := 3
	for id := PageID(3); headNum(s) == first; id++ {
		if _, _, err := s.WritePage(id%24, pageContent(id%24, ver, testPageSize)); err != nil {
			t.Fatal(err)
		}
		ver++
	}
	close(release)
	if err := <-syncErr; err != nil {
		t.Fatal(err)
	}
	// The Sync acknowledged pages 0..2; segment 2's entry is now durable
	// and the file is empty.
	crashed := mem.CrashClone(vfs.CrashDropUnsynced, nil)
	if st, err := crashed.Stat(filepath.Join("db", segmentFileName(first+1))); err != nil || st.Size() != 0 {
		t.Fatalf("expected an empty durable segment %d after the race: %v", first+1, err)
	}

	s2, err := Open("db", testOptions(crashed, nil))
	if err != nil {
		t.Fatalf("first recovery: %v", err)
	}
	if _, _, err := s2.WritePage(0, pageContent(0, 100, testPageSize)); err != nil {
		t.Fatal(err)
	}
	if err := s2.Sync(); err != nil {
		t.Fatal(err)
	}
	crashed2 := crashed.CrashClone(vfs.CrashDropUnsynced, nil)
	s2.Close()
	s3, err := Open("db", testOptions(crashed2, nil))
	if err != nil {
		names, _ := crashed2.List("db")
		t.Fatalf("second recovery of synced data failed: %v (files %v)", err, names)
	}
	defer s3.Close()
	buf := make([]byte, testPageSize)
	for id, ver := range map[PageID]int{0: 100, 1: 2, 2: 2} {
		if err := s3.ReadPage(id, buf); err != nil || !bytes.Equal(buf, pageContent(id, ver, testPageSize)) {
			t.Fatalf("page %d: want synced version %d: %v", id, ver, err)
		}
	}
}

// TestReviewAllocateDuplicate: Free appends the id to freeIDs every time, so
// an id freed, rewritten and freed again is in the list twice, and Allocate
// hands it out twice (it only checks that the id is not present, and an
// allocated id is not present until it is written).
func TestReviewAllocateDuplicate(t *testing.T) {
	s, err := Open("db", testOptions(vfs.NewMem(), nil))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for id := PageID(0); id < 4; id++ {
		if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	// Page 2 is freed, rewritten in place (e.g. a rolled-back free) and
	// freed again.
	for i := 0; i < 2; i++ {
		if err := s.Free(2); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if _, _, err := s.WritePage(2, pageContent(2, 3, testPageSize)); err != nil {
				t.Fatal(err)
			}
		}
	}
	a, err := s.Allocate()
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Allocate()
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatalf("Allocate returned page %d twice", a)
	}
}

// TestReviewConcurrentClose: Close checks s.closed but sets it only after
// the final checkpoint, so two concurrent Closes both reach
// close(s.bgStop): "close of closed channel".
func TestReviewConcurrentClose(t *testing.T) {
	for i := 0; i < 300; i++ {
		opts := testOptions(vfs.NewMem(), nil)
		opts.DisableBackground = false
		s, err := Open("db", opts)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var panicked atomic.Value
		start := make(chan struct{})
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					if r := recover(); r != nil {
						panicked.Store(fmt.Sprint(r))
					}
				}()
				<-start
				s.Close()
			}()
		}
		close(start)
		wg.Wait()
		if p := panicked.Load(); p != nil {
			t.Fatalf("iteration %d: concurrent Close panicked: %v", i, p)
		}
	}
}

// TestReviewStatsDuringClose: closeFiles deletes from s.segs without s.mu
// while Stats (which does not check closed) ranges over it under RLock.
// Run with -race: the race detector reports the conflicting accesses
// (without it the runtime may instead die with "concurrent map iteration
// and map write"). A concurrent Checkpoint that passed its closed check
// before Close set the flag ranges over and deletes from the same map.
func TestReviewStatsDuringClose(t *testing.T) {
	for i := 0; i < 20; i++ {
		s, err := Open("db", testOptions(vfs.NewMem(), mustCodec(t, "none")))
		if err != nil {
			t.Fatal(err)
		}
		for id := PageID(0); id < 60; id++ { // a few segments
			if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
				t.Fatal(err)
			}
		}
		var stop atomic.Bool
		done, started := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			close(started)
			var n int
			for !stop.Load() {
				n += s.Stats().Segments
			}
			directSink.Add(int64(n))
		}()
		<-started
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		stop.Store(true)
		<-done
	}
}

// TestReviewStatsAfterClose: after Close the segment table is empty but the
// page map is not, so Stats reports live pages with no live record bytes
// and a negative StoredBytes.
func TestReviewStatsAfterClose(t *testing.T) {
	s, err := Open("db", testOptions(vfs.NewMem(), nil))
	if err != nil {
		t.Fatal(err)
	}
	for id := PageID(0); id < 10; id++ {
		if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.StoredBytes < 0 || st.GarbageBytes < 0 || st.LiveRecordBytes < 0 {
		t.Fatalf("Stats after Close: LivePages %d, LiveRecordBytes %d, StoredBytes %d, GarbageBytes %d",
			st.LivePages, st.LiveRecordBytes, st.StoredBytes, st.GarbageBytes)
	}
}

// directSink keeps the race tests' reads from being optimised away.
var directSink atomic.Int64

// TestReviewDirectIORace: DirectIO reads s.direct without the lock while a
// rollover's newHead (noteDirect) writes it under s.mu. Run with -race (the
// race detector reports each race once per process).
func TestReviewDirectIORace(t *testing.T) {
	for i := 0; i < 10; i++ {
		s, err := Open("db", testOptions(vfs.NewMem(), mustCodec(t, "none")))
		if err != nil {
			t.Fatal(err)
		}
		var stop atomic.Bool
		done, started := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			close(started)
			n := 0
			for !stop.Load() {
				if s.DirectIO() {
					n++
				}
			}
			directSink.Add(int64(n))
		}()
		<-started
		for id := PageID(0); id < 150; id++ { // ten rollovers
			if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
				t.Fatal(err)
			}
		}
		stop.Store(true)
		<-done
		s.Close()
	}
}

// TestReviewCorruptHeaderOfNewestSegment: a bit flip in the header of the
// newest segment, which was synced, makes recovery treat the segment as a
// never-written torn one: it deletes the file and silently returns the
// older version of a page whose newer version was synced. Corruption of
// synced data must be ErrCorrupt, not a silent rollback.
func TestReviewCorruptHeaderOfNewestSegment(t *testing.T) {
	fs := vfs.NewMem()
	buildStore(t, fs, 5) // pages 0..4, version = id; clean close
	s, err := Open("db", testOptions(fs, nil))
	if err != nil {
		t.Fatal(err)
	}
	newest := headNum(s) // created by Open; the checkpoint references nothing in it
	if _, _, err := s.WritePage(3, pageContent(3, 99, testPageSize)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	// Crash (nothing lost: everything was synced), then bit rot in the
	// newest segment's header.
	after := fs.CrashClone(vfs.CrashDropUnsynced, nil)
	s.Close()
	flipByte(t, after, filepath.Join("db", segmentFileName(newest)), 2, 0x40)
	s2, err := Open("db", testOptions(after, nil))
	if err != nil {
		if errors.Is(err, ErrCorrupt) {
			return // the right answer
		}
		t.Fatal(err)
	}
	defer s2.Close()
	buf := make([]byte, testPageSize)
	if err := s2.ReadPage(3, buf); err == nil && !bytes.Equal(buf, pageContent(3, 99, testPageSize)) {
		t.Fatalf("synced version of page 3 silently lost: recovery returned the older version (segment %s deleted)", segmentFileName(newest))
	}
}

// TestReviewSegmentNumberOverflow: segment file names have exactly eight
// digits and parseSegmentFileName rejects anything else, but nothing stops
// numbers at 99,999,999. Segment 100,000,000 is written as a nine-digit
// name that recovery ignores, so its pages are "missing". (A store with
// 64 KiB segments reaches that after ~6.5 TB of log writes; every Open
// also consumes a number.)
func TestReviewSegmentNumberOverflow(t *testing.T) {
	fs := vfs.NewMem()
	s, err := Open("db", testOptions(fs, mustCodec(t, "none")))
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.nextSegNum = 99_999_999 // as after ~10^8 segments
	s.mu.Unlock()
	m := model{}
	for id := PageID(0); id < 40; id++ { // two rollovers: 99999999, 100000000
		if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
			t.Fatal(err)
		}
		m[id] = 2
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open("db", testOptions(fs, nil))
	if err != nil {
		names, _ := fs.List("db")
		t.Fatalf("reopen after segment 99999999: %v (files %v)", err, names)
	}
	defer s.Close()
	checkModel(t, s, m, 40)
}

// TestReviewConcurrentCleanPasses: clean does not serialize with other
// cleaning passes (the comment on ckptMu says it does). A pass that picked
// its victims before another pass relocated and deleted them goes on to
// pin segments whose reference count already reached zero (their file is
// closed a second time on unpin) and counts them as cleaned again.
func TestReviewConcurrentCleanPasses(t *testing.T) {
	hfs := &syncHookFS{FS: vfs.NewMem()}
	s, err := Open("db", testOptions(hfs, mustCodec(t, "none")))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Segments 1 and 2 hold pages 0..14 and 15..29 (15 raw records
	// each); overwriting 0..9 and 15..22 leaves both over the garbage
	// threshold with live records left.
	for id := PageID(0); id < 30; id++ {
		if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	for id := PageID(0); id < 23; id++ {
		if id >= 10 && id < 15 {
			continue
		}
		if _, _, err := s.WritePage(id, pageContent(id, 3, testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	entered, release := make(chan struct{}), make(chan struct{})
	fn := func() { close(entered); <-release }
	hfs.readHook.Store(&fn)
	type result struct {
		res CleanResult
		err error
	}
	first := make(chan result, 1)
	go func() {
		res, err := s.Clean()
		first <- result{res, err}
	}()
	<-entered // pass A chose its victims and is reading the first record
	second := make(chan result, 1)
	go func() {
		res, err := s.Clean()
		second <- result{res, err}
	}()
	// Passes are serialized, so B waits for A; give B a moment to run
	// ahead if it could, then let A go on.
	var b result
	select {
	case b = <-second:
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	a := <-first
	if a.err != nil {
		t.Fatal(a.err)
	}
	if b == (result{}) {
		b = <-second
	}
	if b.err != nil {
		t.Fatal(b.err)
	}
	resB := b.res
	if got := int64(a.res.SegmentsCleaned + resB.SegmentsCleaned); got != s.Stats().SegmentsCleaned {
		t.Fatalf("passes report %d segments cleaned, stats %d", got, s.Stats().SegmentsCleaned)
	}
	resB.SegmentsCleaned += a.res.SegmentsCleaned
	st := s.Stats()
	hfs.mu.Lock()
	var doubleClosed []string
	for name, n := range hfs.closes {
		if n > 1 && isSegment(name) {
			doubleClosed = append(doubleClosed, fmt.Sprintf("%s×%d", filepath.Base(name), n))
		}
	}
	hfs.mu.Unlock()
	if len(doubleClosed) > 0 || st.SegmentsCleaned > int64(resB.SegmentsCleaned) {
		t.Fatalf("pass B cleaned %d segments, pass A then claimed %d more (stats: %d cleaned); segment files closed more than once: %v",
			resB.SegmentsCleaned, a.res.SegmentsCleaned, st.SegmentsCleaned, doubleClosed)
	}
}

// TestReviewCorruptHeaderDeletesReferencedSegment: the same bit flip in the
// header of a newest segment that the checkpoint references (here the only
// segment, holding every page) makes Open delete the file and only then
// fail with ErrCorrupt ("page 0 in missing segment"): recovery destroys the
// only copy of the data it reports as corrupt.
func TestReviewCorruptHeaderDeletesReferencedSegment(t *testing.T) {
	fs := vfs.NewMem()
	buildStore(t, fs, 5)
	name := filepath.Join("db", segmentFileName(1))
	flipByte(t, fs, name, 2, 0x40)
	s, err := Open("db", testOptions(fs, nil))
	if err == nil {
		s.Close()
		t.Fatal("corrupt segment header accepted")
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Fatal(err)
	}
	if _, serr := fs.Stat(name); serr != nil {
		t.Fatalf("Open failed with %q after deleting the segment it reports: %v", err, serr)
	}
}

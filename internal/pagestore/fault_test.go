package pagestore

import (
	"bytes"
	"errors"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestIOErrors fails writes and syncs of segment files: the failing call
// returns the error, the store refuses further writes (the log's state on
// disk is unknown after a failed write or fsync), and reopening recovers
// every page synced before the failure.
func TestIOErrors(t *testing.T) {
	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync} {
		t.Run(op.String(), func(t *testing.T) {
			fs := vfs.NewMem()
			s, err := Open("db", testOptions(fs, mustCodec(t, "lz4")))
			if err != nil {
				t.Fatal(err)
			}
			m := model{}
			for id := PageID(0); id < 30; id++ {
				if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
					t.Fatal(err)
				}
				m[id] = 2
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			fs.SetInjector(vfs.InjectAfter(0, op))
			var failed error
			for id := PageID(0); id < 30 && failed == nil; id++ {
				_, _, failed = s.WritePage(id, pageContent(id, 3, testPageSize))
				if failed == nil {
					failed = s.Sync()
				}
			}
			if !errors.Is(failed, vfs.ErrInjected) {
				t.Fatalf("injected %v fault not reported: %v", op, failed)
			}
			fs.SetInjector(nil)
			if _, _, err := s.WritePage(1, pageContent(1, 4, testPageSize)); err == nil {
				t.Fatal("write accepted after a failed write path")
			}
			s.Close() // may fail: the checkpoint needs a sync
			fs.Crash(vfs.CrashDropUnsynced, rand.New(rand.NewPCG(1, 1)))
			s, err = Open("db", testOptions(fs, nil))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			buf := make([]byte, testPageSize)
			for id := PageID(0); id < 30; id++ {
				if err := s.ReadPage(id, buf); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf, pageContent(id, 2, testPageSize)) && !bytes.Equal(buf, pageContent(id, 3, testPageSize)) {
					t.Fatalf("page %d: neither the synced nor the later version", id)
				}
			}
		})
	}
}

// TestShortWrite: a write that transfers only part of its bytes fails the
// store's write path like any I/O error.
func TestShortWrite(t *testing.T) {
	fs := vfs.NewMem()
	s, err := Open("db", testOptions(fs, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fs.SetShortWrites(func(path string, off int64, n int) int { return n / 2 })
	var failed error
	for id := PageID(0); id < 100 && failed == nil; id++ {
		_, _, failed = s.WritePage(id, pageContent(id, 0, testPageSize))
	}
	if failed == nil {
		failed = s.Sync()
	}
	if failed == nil {
		t.Fatal("short write not reported")
	}
}

// TestConcurrent runs writers, readers, syncs and the background cleaner at
// once (run it with -race). Each writer owns a set of pages, so readers can
// check that a page always holds one of its writer's versions.
func TestConcurrent(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs, mustCodec(t, "lz4"))
	opts.DisableBackground = false
	opts.CleanerThreshold = 0.2
	opts.CheckpointBytes = 256 << 10
	s, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	const writers, pagesPer, rounds = 4, 8, 150
	var latest [writers * pagesPer]atomic.Int64
	var wg sync.WaitGroup
	var stop atomic.Bool
	errs := make(chan error, 16)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for r := 2; r < rounds; r++ {
				for p := 0; p < pagesPer; p++ {
					id := PageID(w*pagesPer + p)
					if _, _, err := s.WritePage(id, pageContent(id, r, testPageSize)); err != nil {
						errs <- err
						return
					}
					latest[id].Store(int64(r))
				}
				if r%10 == 0 {
					if err := s.Sync(); err != nil {
						errs <- err
						return
					}
				}
			}
		}(w)
	}
	var readers sync.WaitGroup
	for rd := 0; rd < 3; rd++ {
		readers.Add(1)
		go func(seed uint64) {
			defer readers.Done()
			rng := rand.New(rand.NewPCG(seed, 0))
			buf := make([]byte, testPageSize)
			for !stop.Load() {
				id := PageID(rng.IntN(writers * pagesPer))
				min := latest[id].Load()
				if min == 0 {
					continue
				}
				if err := s.ReadPage(id, buf); err != nil {
					errs <- err
					return
				}
				var ok bool
				for v := min; v < rounds && !ok; v++ {
					ok = bytes.Equal(buf, pageContent(id, int(v), testPageSize))
				}
				if !ok {
					errs <- errors.New("reader saw a page older than acknowledged or foreign bytes")
					return
				}
			}
		}(uint64(rd))
	}
	wg.Wait()
	stop.Store(true)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// refusingFS opens every file buffered, as a file system that refuses
// O_DIRECT makes vfs.Default do (tmpfs before Linux 6.6, for instance).
type refusingFS struct{ vfs.FS }

func (r refusingFS) OpenFile(name string, flag int, perm os.FileMode, opts vfs.OpenOptions) (vfs.File, error) {
	opts.Direct = false
	return r.FS.OpenFile(name, flag, perm, opts)
}

// TestDirectIOFallback: where direct I/O is refused, the store falls back
// to buffered I/O, says so in its stats and its log, and works.
func TestDirectIOFallback(t *testing.T) {
	var logged bytes.Buffer
	opts := testOptions(refusingFS{vfs.Default}, nil)
	opts.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	dir := t.TempDir()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Stats().DirectIO {
		t.Fatal("stats claim direct I/O on a file system that refused it")
	}
	if !bytes.Contains(logged.Bytes(), []byte("refused direct I/O")) {
		t.Fatalf("fallback not logged: %q", logged.String())
	}
	want := pageContent(1, 2, testPageSize)
	if _, _, err := s.WritePage(1, want); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, testPageSize)
	if err := s.ReadPage(1, buf); err != nil || !bytes.Equal(buf, want) {
		t.Fatalf("read: %v", err)
	}
	// With DisableDirectIO the store neither asks for it nor warns.
	logged.Reset()
	opts.FS = vfs.Default
	opts.DisableDirectIO = true
	s2, err := Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.Stats().DirectIO || logged.Len() != 0 {
		t.Fatalf("DisableDirectIO: direct %v, log %q", s2.Stats().DirectIO, logged.String())
	}
}

// TestDirectIOOnDisk runs a store on the real file system with direct I/O
// (where the file system supports it) across reopen.
func TestDirectIOOnDisk(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, testOptions(vfs.Default, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("direct I/O: %v", s.DirectIO())
	for id := PageID(0); id < 200; id++ {
		if _, _, err := s.WritePage(id, pageContent(id, int(id), testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, testOptions(vfs.Default, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := model{}
	for id := PageID(0); id < 200; id++ {
		m[id] = int(id)
	}
	checkModel(t, s, m, 210)
}

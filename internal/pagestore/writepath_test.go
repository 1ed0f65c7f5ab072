package pagestore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// blockFS stops the next segment write (or sync) that finds its hook set
// until the test releases it.
type blockFS struct {
	vfs.FS
	onWrite, onSync atomic.Pointer[func()]
}

type blockFile struct {
	vfs.File
	fs *blockFS
}

func (b *blockFS) OpenFile(name string, flag int, perm os.FileMode, opts vfs.OpenOptions) (vfs.File, error) {
	f, err := b.FS.OpenFile(name, flag, perm, opts)
	if err != nil {
		return nil, err
	}
	return &blockFile{File: f, fs: b}, nil
}

func (f *blockFile) WriteAt(p []byte, off int64) (int, error) {
	if isSegment(f.Name()) {
		if fn := f.fs.onWrite.Swap(nil); fn != nil {
			(*fn)()
		}
	}
	return f.File.WriteAt(p, off)
}

func (f *blockFile) Sync() error {
	if isSegment(f.Name()) {
		if fn := f.fs.onSync.Swap(nil); fn != nil {
			(*fn)()
		}
	}
	return f.File.Sync()
}

// within fails the test if fn does not return within a generous time.
func within(t *testing.T, what string, fn func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s waited for a segment write in progress", what)
	}
}

// TestSegmentIOOutsideLock: while one writer is stopped in the write of a
// full buffer (or in the fsync of a segment the log rolled over from),
// reads of pages in the file and in the buffers, Allocate, writes that fit
// in the current buffer, frees and Stats all complete.
func TestSegmentIOOutsideLock(t *testing.T) {
	for _, what := range []string{"write", "rollover sync"} {
		t.Run(what, func(t *testing.T) {
			bfs := &blockFS{FS: vfs.NewMem()}
			s, err := Open("db", testOptions(bfs, mustCodec(t, "none")))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// Pages 0..2 in the file.
			for id := PageID(0); id < 3; id++ {
				if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			entered, release := make(chan struct{}), make(chan struct{})
			var releaseOnce sync.Once
			letGo := func() { releaseOnce.Do(func() { close(release) }) }
			defer letGo() // before Close, if the test fails while the writer waits
			fn := func() { close(entered); <-release }
			if what == "write" {
				bfs.onWrite.Store(&fn)
			} else {
				bfs.onSync.Store(&fn)
			}
			// Raw 4 KiB pages: a 16 KiB buffer seals every 3 pages, a
			// 64 KiB segment rolls over after 15.
			writerDone := make(chan error, 1)
			var written atomic.Int64
			go func() {
				for id := PageID(10); ; id++ {
					if _, _, err := s.WritePage(id, pageContent(id, 3, testPageSize)); err != nil {
						writerDone <- err
						return
					}
					written.Store(int64(id))
					select {
					case <-entered:
						writerDone <- nil
						return
					default:
					}
				}
			}()
			// The page being appended when the write stopped is the
			// one after the last acknowledged.
			<-entered
			last := PageID(written.Load())
			buf := make([]byte, testPageSize)
			within(t, "read of a page in the file", func() error {
				if err := s.ReadPage(1, buf); err != nil || !bytes.Equal(buf, pageContent(1, 2, testPageSize)) {
					return fmt.Errorf("wrong page: %v", err)
				}
				return nil
			})
			within(t, "read of a page in a buffer", func() error {
				if err := s.ReadPage(last, buf); err != nil || !bytes.Equal(buf, pageContent(last, 3, testPageSize)) {
					return fmt.Errorf("wrong page: %v", err)
				}
				return nil
			})
			within(t, "Allocate", func() error { _, err := s.Allocate(); return err })
			within(t, "a write into the current buffer", func() error {
				_, _, err := s.WritePage(2, pageContent(2, 4, testPageSize))
				return err
			})
			within(t, "Free", func() error { return s.Free(0) })
			within(t, "Stats", func() error { s.Stats(); return nil })
			letGo()
			if err := <-writerDone; err != nil {
				t.Fatal(err)
			}
			last = PageID(written.Load())
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			m := model{1: 2, 2: 4}
			for id := PageID(10); id <= last; id++ {
				m[id] = 3
			}
			checkModel(t, s, m, last+1)
		})
	}
}

// TestConcurrentAllocateWriteFree runs writers that allocate pages, write
// them, read them back and free them, as a copy-on-write tree does, with a
// reader of every writer's pages, syncs, checkpoints and the background
// cleaner, under -race. Allocate must never hand out a page id that is in
// use, and every read must return the version its writer wrote last.
func TestConcurrentAllocateWriteFree(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs, mustCodec(t, "lz4"))
	opts.DisableBackground = false
	opts.CleanerThreshold = 0.2
	opts.CheckpointBytes = 256 << 10
	opts.MapLogRatio = 8
	s, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	const writers, rounds = 4, 300
	var owner sync.Map // PageID → writer
	var versions sync.Map
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 5))
			var mine []PageID
			buf := make([]byte, testPageSize)
			for r := 0; r < rounds; r++ {
				id, err := s.Allocate()
				if err != nil {
					errs <- err
					return
				}
				if prev, loaded := owner.LoadOrStore(id, w); loaded {
					errs <- fmt.Errorf("writer %d: Allocate returned page %d, in use by writer %d", w, id, prev)
					return
				}
				ver := 2 + r
				versions.Store(id, ver)
				if _, _, err := s.WritePage(id, pageContent(id, ver, testPageSize)); err != nil {
					errs <- err
					return
				}
				mine = append(mine, id)
				// Rewrite one of ours, read one back, free one.
				p := mine[rng.IntN(len(mine))]
				ver = 2 + rounds + r
				versions.Store(p, ver)
				if _, _, err := s.WritePage(p, pageContent(p, ver, testPageSize)); err != nil {
					errs <- err
					return
				}
				q := mine[rng.IntN(len(mine))]
				v, _ := versions.Load(q)
				if err := s.ReadPage(q, buf); err != nil || !bytes.Equal(buf, pageContent(q, v.(int), testPageSize)) {
					errs <- fmt.Errorf("writer %d: page %d: not version %d: %v", w, q, v, err)
					return
				}
				if len(mine) > 8 {
					i := rng.IntN(len(mine))
					f := mine[i]
					mine = append(mine[:i], mine[i+1:]...)
					owner.Delete(f) // before Free: once freed, another writer may get it
					if err := s.Free(f); err != nil {
						errs <- err
						return
					}
				}
				if r%50 == 49 {
					var err error
					if w%2 == 0 {
						err = s.Sync()
					} else {
						err = s.Checkpoint()
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}
		}(w)
	}
	var stop atomic.Bool
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		buf := make([]byte, testPageSize)
		for !stop.Load() {
			for id := PageID(0); id < 64; id++ {
				err := s.ReadPage(id, buf)
				if err != nil && !errors.Is(err, ErrNotFound) {
					errs <- err
					return
				}
				if err == nil && !bytes.HasPrefix(buf, []byte(fmt.Sprintf("page %d version ", id))) {
					errs <- fmt.Errorf("reader: page %d holds another page's bytes", id)
					return
				}
			}
		}
	}()
	wg.Wait()
	stop.Store(true)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	m := model{}
	owner.Range(func(k, _ any) bool {
		v, _ := versions.Load(k)
		m[k.(PageID)] = v.(int)
		return true
	})
	var maxID PageID
	for id := range m {
		maxID = max(maxID, id)
	}
	checkModel(t, s, m, maxID+1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open("db", testOptions(fs, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkModel(t, s, m, maxID+1)
}

// TestSpareBuffersBounded: a burst of concurrent seals fills the pending
// queue while a segment write is stopped; once the writes are done the
// store keeps at most maxSpareBuffers of those buffers for reuse.
func TestSpareBuffersBounded(t *testing.T) {
	bfs := &blockFS{FS: vfs.NewMem()}
	opts := testOptions(bfs, mustCodec(t, "none"))
	opts.SegmentSize = 1 << 20
	s, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	entered, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	defer letGo()
	fn := func() { close(entered); <-release }
	bfs.onWrite.Store(&fn)
	// Raw 4 KiB pages: a 16 KiB buffer seals every 3 pages. Each writer
	// seals a buffer, then waits for the stopped write to write it.
	const writers = maxPendingBuffers + 2
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				id := PageID(100*w + i)
				if _, _, err := s.WritePage(id, pageContent(id, 2, testPageSize)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	<-entered
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		n := len(s.pending)
		s.mu.Unlock()
		if n == maxPendingBuffers {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d buffers pending, want %d", n, maxPendingBuffers)
		}
		time.Sleep(time.Millisecond)
	}
	letGo()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	spares := len(s.spareBufs)
	s.mu.Unlock()
	if spares > maxSpareBuffers {
		t.Errorf("%d spare buffers kept after the burst, want at most %d", spares, maxSpareBuffers)
	}
	m := model{}
	for w := range writers {
		for i := range 8 {
			m[PageID(100*w+i)] = 2
		}
	}
	checkModel(t, s, m, PageID(100*writers))
}

package flashcache

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// The test stack: a page store and a buffer pool over it, with a flash
// cache in between, on MemFS (the database's directory and the flash file
// may be on different file systems).

const (
	testPageSize = 4096
	dbDir        = "/db"
	flashPath    = "/flash/cache"
)

// testDBState is the database state the test stack opens and closes the
// cache in: it has no database (the root package's tests check states).
var testDBState = DBState{1}

type stack struct {
	t     testing.TB
	fs    vfs.FS // the database's
	ffs   vfs.FS // the flash file's
	store *pagestore.Store
	fc    *Cache
	pool  *bufferpool.Pool
}

type stackOpts struct {
	flashSize int64
	cache     int64 // pool budget
	tune      func(*Options)
	noFlash   bool
}

func (o stackOpts) withDefaults() stackOpts {
	if o.flashSize == 0 {
		o.flashSize = 4 << 20
	}
	if o.cache == 0 {
		o.cache = 256 << 10
	}
	return o
}

func flashOptions(fs, ffs vfs.FS, o stackOpts) Options {
	fo := Options{
		Path:       flashPath,
		Size:       o.flashSize,
		FS:         ffs,
		PageSize:   testPageSize,
		DBFS:       fs,
		DBDir:      dbDir,
		DBState:    testDBState,
		RegionSize: 64 << 10,
		WriteUnit:  16 << 10,
		QueueBytes: 64 << 10,
		WriteRate:  -1,
		// The race detector and a loaded machine make MemFS reads slow
		// now and then; a generous deadline keeps the tests deterministic
		// (the stall test sets its own).
		ReadTimeout: 2 * time.Second,
		Readers:     4,
	}
	if o.tune != nil {
		o.tune(&fo)
	}
	return fo
}

func openStack(t testing.TB, fs, ffs vfs.FS, o stackOpts) *stack {
	t.Helper()
	o = o.withDefaults()
	if err := fs.MkdirAll(dbDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := ffs.MkdirAll("/flash", 0o755); err != nil {
		t.Fatal(err)
	}
	lz4, _ := codec.New(codec.LZ4, 0)
	store, err := pagestore.Open(dbDir, pagestore.Options{FS: fs, PageSize: testPageSize, Codec: lz4, DisableBackground: true, SegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{t: t, fs: fs, ffs: ffs, store: store}
	// As the database does (Options.DBDir): the marker's directory sync
	// must not make a segment file durable before its header.
	if err := store.Sync(); err != nil {
		store.Close()
		t.Fatal(err)
	}
	var ps bufferpool.Store = store
	if o.noFlash {
		if err := Detach(fs, dbDir); err != nil {
			t.Fatal(err)
		}
	} else {
		s.fc, err = Open(flashOptions(fs, ffs, o))
		if err != nil {
			store.Close()
			t.Fatal(err)
		}
		ps = Wrap(store, s.fc)
	}
	s.pool, err = bufferpool.New(ps, bufferpool.Options{CacheSize: o.cache, Partitions: 1, Codec: lz4})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// close closes the pool, the cache (cleanly if the pool closed cleanly)
// and the store.
func (s *stack) close() {
	s.t.Helper()
	err := s.pool.Close()
	if s.fc != nil {
		if ferr := s.fc.Close(err == nil, testDBState); err == nil {
			err = ferr
		}
	}
	if serr := s.store.Close(); err == nil {
		err = serr
	}
	if err != nil {
		s.t.Fatal(err)
	}
}

// abandon leaves everything as a crash would (the caller crashes the file
// systems afterwards); it only stops the goroutines.
func (s *stack) abandon() {
	s.pool.Close()
	if s.fc != nil {
		s.fc.Close(false, DBState{})
	}
	s.store.Close()
}

// pageBytes is page id's content at version v: id and version in the
// first 16 bytes, then compressible filler.
func pageBytes(id pagestore.PageID, v uint64) []byte {
	p := make([]byte, testPageSize)
	binary.LittleEndian.PutUint64(p, uint64(id))
	binary.LittleEndian.PutUint64(p[8:], v)
	r := rand.New(rand.NewPCG(uint64(id), v))
	for i := 16; i < len(p); i += 8 {
		// Text-like: a small alphabet, so the page compresses about 2×.
		w := r.Uint64()
		for j := 0; j < 8 && i+j < len(p); j++ {
			p[i+j] = 'a' + byte(w>>(8*j))%16
		}
	}
	return p
}

func pageVersion(p []byte) (pagestore.PageID, uint64) {
	return pagestore.PageID(binary.LittleEndian.Uint64(p)), binary.LittleEndian.Uint64(p[8:])
}

// write writes page id at version v through the pool.
func (s *stack) write(id pagestore.PageID, v uint64) {
	s.t.Helper()
	pg, err := s.pool.Get(id, bufferpool.Exclusive)
	if err != nil {
		s.t.Fatalf("get page %d for writing: %v", id, err)
	}
	copy(pg.Data(), pageBytes(id, v))
	pg.MarkDirty()
	pg.Release()
}

// create makes a new page at version v and returns its id.
func (s *stack) create(v uint64) pagestore.PageID {
	s.t.Helper()
	pg, err := s.pool.NewPage()
	if err != nil {
		s.t.Fatal(err)
	}
	id := pg.ID()
	copy(pg.Data(), pageBytes(id, v))
	pg.Release()
	return id
}

// check reads page id through the pool and compares it with version v.
func (s *stack) check(id pagestore.PageID, v uint64) error {
	pg, err := s.pool.Get(id, bufferpool.Shared)
	if err != nil {
		return fmt.Errorf("get page %d: %w", id, err)
	}
	defer pg.Release()
	gotID, gotV := pageVersion(pg.Data())
	if gotID != id || gotV != v {
		return fmt.Errorf("page %d: read page %d version %d, want version %d", id, gotID, gotV, v)
	}
	if string(pg.Data()) != string(pageBytes(id, v)) {
		return fmt.Errorf("page %d version %d: bytes differ", id, v)
	}
	return nil
}

// waitIdle waits until the writer has nothing queued or buffered.
func (s *stack) waitIdle() {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if s.fc.w.idle.Load() && s.fc.q.pendingItems() == 0 && s.fc.ix.count() == s.fc.ix.written() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	s.t.Fatalf("writer not idle: %+v", s.fc.Stats())
}

// waitQueue waits until the writer has taken every queued admission (it
// may still be writing them).
func (s *stack) waitQueue() {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.fc.q.pendingItems() > 0 {
		if time.Now().After(deadline) {
			s.t.Fatalf("queue not drained: %+v", s.fc.Stats())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// stallFS wraps an FS so that the reads, writes and syncs of its files
// block while it is stalled: a flash device that stops answering.
type stallFS struct {
	vfs.FS
	mu      sync.Mutex
	release chan struct{} // nil: not stalled
	blocked atomic.Int64  // operations that waited
	// superblocksOnly: a stall holds only writes to the superblocks.
	superblocksOnly atomic.Bool
}

func (s *stallFS) stall() {
	s.mu.Lock()
	if s.release == nil {
		s.release = make(chan struct{})
	}
	s.mu.Unlock()
}

func (s *stallFS) resume() {
	s.mu.Lock()
	if s.release != nil {
		close(s.release)
		s.release = nil
	}
	s.mu.Unlock()
}

func (s *stallFS) wait() {
	s.mu.Lock()
	ch := s.release
	s.mu.Unlock()
	if ch != nil {
		s.blocked.Add(1)
		<-ch
	}
}

func (s *stallFS) OpenFile(name string, flag int, perm os.FileMode, opts vfs.OpenOptions) (vfs.File, error) {
	f, err := s.FS.OpenFile(name, flag, perm, opts)
	if err != nil {
		return nil, err
	}
	return &stallFile{File: f, fs: s}, nil
}

type stallFile struct {
	vfs.File
	fs *stallFS
}

func (f *stallFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.wait()
	return f.File.ReadAt(p, off)
}

func (f *stallFile) WriteAt(p []byte, off int64) (int, error) {
	if !f.fs.superblocksOnly.Load() || off < superblockSlots*blockSize {
		f.fs.wait()
	}
	return f.File.WriteAt(p, off)
}

func (f *stallFile) Sync() error {
	if !f.fs.superblocksOnly.Load() {
		f.fs.wait()
	}
	return f.File.Sync()
}

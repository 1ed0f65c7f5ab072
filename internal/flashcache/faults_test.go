package flashcache

import (
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// onFlash limits an injector to the flash file.
func onFlash(inj vfs.Injector) vfs.Injector {
	return func(op vfs.Op, path string) error {
		if path != flashPath {
			return nil
		}
		return inj(op, path)
	}
}

// checkAll reads every page through the pool and compares it with the
// store's own copy.
func (s *stack) checkAll(ids []pagestore.PageID) {
	s.t.Helper()
	want := make([]byte, testPageSize)
	for _, id := range ids {
		if err := s.store.ReadPage(id, want); err != nil {
			s.t.Fatal(err)
		}
		_, v := pageVersion(want)
		if err := s.check(id, v); err != nil {
			s.t.Fatal(err)
		}
	}
}

// TestReadErrors: flash reads that fail disable their regions; every read
// falls through to the page store and returns the right page.
func TestReadErrors(t *testing.T) {
	db := vfs.NewMem()
	flash := vfs.NewMem()
	s := openStack(t, db, flash, stackOpts{})
	ids := s.fill(300)
	s.close()
	s = openStack(t, db, flash, stackOpts{})
	defer s.close()
	flash.SetInjector(onFlash(vfs.InjectRandom(rand.New(rand.NewPCG(1, 1)), 0.2, vfs.OpRead)))
	for range 3 {
		s.checkAll(ids)
	}
	flash.SetInjector(nil)
	st := s.fc.Stats()
	t.Logf("%+v", st)
	if st.ReadErrors == 0 || st.BadRegions == 0 || st.Hits == 0 {
		t.Fatalf("read errors %d, bad regions %d, hits %d", st.ReadErrors, st.BadRegions, st.Hits)
	}
	if !st.Active {
		t.Fatal("read errors disabled the whole cache")
	}
}

// TestWriteErrors: a failed flash write disables its region and drops
// its images; with every write failing the cache disables itself. Nothing
// is lost, and reads stay right, across a restart too.
func TestWriteErrors(t *testing.T) {
	for _, p := range []float64{0.3, 1} {
		db := vfs.NewMem()
		flash := vfs.NewMem()
		s := openStack(t, db, flash, stackOpts{})
		flash.SetInjector(onFlash(vfs.InjectRandom(rand.New(rand.NewPCG(2, 2)), p, vfs.OpWrite)))
		var ids []pagestore.PageID
		for range 300 {
			ids = append(ids, s.create(1))
		}
		if err := s.pool.FlushAll(); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			s.checkAll(ids)
		}
		st := s.fc.Stats()
		t.Logf("p=%v: %+v", p, st)
		if st.WriteErrors == 0 || st.BadRegions == 0 {
			t.Fatalf("p=%v: write errors %d, bad regions %d", p, st.WriteErrors, st.BadRegions)
		}
		if p == 1 && (st.Active || st.DisabledBy == "") {
			t.Fatalf("every write failed and the cache is still active: %+v", st)
		}
		s.close()
		flash.SetInjector(nil)
		s = openStack(t, db, flash, stackOpts{})
		st = s.fc.Stats()
		if p == 1 && st.OpenState == "warm" {
			t.Fatal("a cache disabled by errors reopened warm")
		}
		if p < 1 && st.OpenState == "warm" && st.BadRegions == 0 {
			t.Fatal("the bad regions were forgotten")
		}
		s.checkAll(ids)
		s.close()
	}
}

// TestCorruptEntries: bytes of the cached images corrupted on flash while
// the database was closed are caught by the entries' checksums; the pages
// are read from the store.
func TestCorruptEntries(t *testing.T) {
	fs := vfs.NewMem()
	s := openStack(t, fs, fs, stackOpts{})
	ids := s.fill(300)
	lay := s.fc.lay
	s.close()
	rng := rand.New(rand.NewPCG(3, 3))
	var offs []int64
	for r := 0; r < lay.regions; r++ {
		for range 20 {
			offs = append(offs, lay.regionBase(r)+rng.Int64N(lay.regionSize))
		}
	}
	corrupt(t, fs, flashPath, offs...)
	s = openStack(t, fs, fs, stackOpts{})
	defer s.close()
	if st := s.fc.Stats(); st.OpenState != "warm" {
		t.Fatalf("opened %s", st.OpenState)
	}
	for range 2 {
		s.checkAll(ids)
	}
	st := s.fc.Stats()
	t.Logf("%+v", st)
	if st.ChecksumErrors == 0 {
		t.Fatal("no checksum error")
	}
}

// TestUnusableFlash: a flash file whose superblock cannot be written at
// open leaves the database running without the cache, and its marker
// gone, so that a later open does not trust what is on flash.
func TestUnusableFlash(t *testing.T) {
	db := vfs.NewMem()
	flash := vfs.NewMem()
	s := openStack(t, db, flash, stackOpts{})
	ids := s.fill(200)
	s.close()
	flash.SetInjector(onFlash(vfs.InjectAfter(0, vfs.OpWrite)))
	s = openStack(t, db, flash, stackOpts{})
	st := s.fc.Stats()
	if st.Active || st.OpenState != "disabled" {
		t.Fatalf("opened %q, active %v", st.OpenState, st.Active)
	}
	if _, err := db.Stat(filepath.Join(dbDir, markerName)); err == nil {
		t.Fatal("the marker is still there")
	}
	for _, id := range ids {
		s.write(id, 2)
	}
	if err := s.pool.FlushAll(); err != nil {
		t.Fatal(err)
	}
	s.checkAll(ids)
	s.close()
	flash.SetInjector(nil)
	s = openStack(t, db, flash, stackOpts{})
	defer s.close()
	if st := s.fc.Stats(); st.OpenState == "warm" {
		t.Fatal("reopened warm after a session without the cache")
	}
	s.checkAll(ids)
}

// TestUnusableFlashAndMarker: a flash file that cannot be used and a
// marker that cannot be removed make Open fail, and leave nothing running.
func TestUnusableFlashAndMarker(t *testing.T) {
	db := vfs.NewMem()
	flash := vfs.NewMem()
	s := openStack(t, db, flash, stackOpts{})
	s.fill(50)
	s.close()
	before := runtime.NumGoroutine()
	flash.SetInjector(onFlash(vfs.InjectAfter(0, vfs.OpWrite)))
	db.SetInjector(vfs.InjectAfter(0, vfs.OpRemove))
	c, err := Open(flashOptions(db, flash, stackOpts{}.withDefaults()))
	if err == nil {
		c.Close(false, DBState{})
		t.Fatal("opened with a marker that cannot be removed")
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines left running after a failed Open (%d before)", n-before, before)
	}
}

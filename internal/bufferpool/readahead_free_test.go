package bufferpool

import (
	"testing"
	"time"

	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// freeInsideInstallStore lets a FreePage's store free land while a read
// ahead of the same page holds the partition's lock between its IsCurrent
// check and the image's insertion, and (with the bug) FreePage return
// meanwhile.
type freeInsideInstallStore struct {
	*pagestore.Store
	inFree, proceed, freed chan struct{}
	armed                  bool
}

func (s *freeInsideInstallStore) Free(id PageID) error {
	close(s.inFree)
	<-s.proceed
	return s.Store.Free(id)
}

func (s *freeInsideInstallStore) IsCurrent(id PageID, at pagestore.Stamp) bool {
	ok := s.Store.IsCurrent(id, at)
	if s.armed {
		s.armed = false
		close(s.proceed) // the store's free lands now, the installer holding pt.mu
		select {
		case <-s.freed: // FreePage returned (its dropReadAhead looked without the lock)
		case <-time.After(200 * time.Millisecond): // FreePage waits for the lock: fixed
		}
	}
	return ok
}

// TestFreeDuringReadAheadInstall: a page freed while a read ahead of it
// is being installed leaves no image behind. FreePage's drop of read-ahead
// images looked without the partition's lock and could miss an image
// about to go in: the freed page stayed readable at its old version and
// its id could not be created again. (The database never reads ahead pages
// it frees meanwhile; this is FreePage's own promise. Found by a reviewer,
// thirty-second session.)
func TestFreeDuringReadAheadInstall(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "zstd")
	defer s.Close()
	opts := Options{CacheSize: 512 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.5}
	coldPool(t, s, 50, opts).Close()
	fs := &freeInsideInstallStore{Store: s, inFree: make(chan struct{}), proceed: make(chan struct{}), freed: make(chan struct{}), armed: true}
	p, err := New(fs, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	go func() {
		if err := p.FreePage(7); err != nil {
			t.Error(err)
		}
		close(fs.freed)
	}()
	<-fs.inFree // the pool dropped page 7; the store's free is under way
	n := p.ReadAhead([]PageID{7})
	<-fs.freed
	_ = n
	if p.InMemory(7) {
		pg, err := p.Get(7, Shared)
		if err == nil {
			t.Errorf("freed page 7 still readable from the pool (version %d), store says: %v", pageVersion(t, pg.Data(), 7), func() error { _, e := s.ReadImage(7, nil); return e }())
			pg.Release()
		}
		if pg, err := p.Create(7); err != nil {
			t.Errorf("reuse of the freed id fails: %v", err)
		} else {
			pg.Release()
		}
	}
}

package bufferpool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// TestHitsTakeNoPartitionLock: a page in a frame is handed out, in either
// mode, while another goroutine holds the partition mutex exclusively.
// Hits take no partition lock (tryHit), so they do not wait for a load or
// an eviction in the same partition, and write no shared reader count.
func TestHitsTakeNoPartitionLock(t *testing.T) {
	p := newHitTestPool(t)
	pt := p.parts[0]
	for _, mode := range []Mode{Shared, Exclusive} {
		pt.mu.Lock()
		got := make(chan error, 1)
		go func() {
			pg, err := p.Get(2, mode)
			if err == nil {
				pageVersion(t, pg.Data(), 2)
				pg.Release()
			}
			got <- err
		}()
		err, ok := waitDone(got, 2*time.Second)
		pt.mu.Unlock()
		if !ok {
			<-got
			t.Fatalf("mode %v: a frame hit waited for the partition mutex", mode)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if hits := p.Stats().HitsUncompressed; hits != 2 {
		t.Fatalf("%d frame hits counted, want 2", hits)
	}
}

// newHitTestPool returns a pool of one partition, 1 MiB, fixed R, holding
// pages 0–3 (version 1) in frames; closed at the test's end.
func newHitTestPool(t *testing.T) *Pool {
	t.Helper()
	s := openStore(t, vfs.NewMem(), "lz4")
	t.Cleanup(func() { s.Close() })
	p, err := New(s, Options{CacheSize: 1 << 20, Partitions: 1, FixedShare: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	populate(t, p, 4)
	return p
}

// TestHitsDuringEvictionAndFree: goroutines read pages of a pool a third
// of their size (each read a hit or a load that evicts) while another frees
// and recreates pages with new contents. Every page handed out must be the
// page asked for, whole, at a version that existed: a hit that pinned a
// page as it left its frame, or found a descriptor reused for another page,
// would see another page's bytes.
func TestHitsDuringEvictionAndFree(t *testing.T) {
	p := newChurnPool(t)
	const n = churnPages
	var (
		wg sync.WaitGroup
		rf raceFailures
	)
	rounds := 20000
	if raceEnabled {
		rounds = 5000
	}
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for i := 0; i < rounds && !rf.stop.Load(); i++ {
				// Skewed: a hot tenth stays in the frames (hits), the rest
				// moves through them (loads and evictions).
				id := PageID(rng.IntN(n / 10))
				if rng.IntN(2) == 0 {
					id = PageID(rng.IntN(n))
				}
				pg, err := p.Get(id, Shared)
				if errors.Is(err, pagestore.ErrNotFound) {
					continue // freed by the other goroutine, not yet made again
				}
				if err != nil {
					rf.fail(err)
					return
				}
				_, err = pageIntact(pg.Data(), id)
				pg.Release()
				if err != nil {
					rf.fail(err)
					return
				}
			}
		}(g)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(99, 7))
		for ver := uint64(2); !rf.stop.Load() && ver < 3000; ver++ {
			if err := recreatePage(p, PageID(rng.IntN(n/10)), ver); err != nil { // hot pages: most often in frames
				rf.fail(err)
				return
			}
		}
	}()
	wg.Wait()
	rf.check(t)
	checkInvariants(t, p)
}

// churnPages is how many pages newChurnPool holds: three times its frames.
const churnPages = 96

// newChurnPool returns a pool of two partitions, fixed R 0.25, a third the
// size of its churnPages pages (ids 0..churnPages-1, version 1), so that
// reads load and evict; closed at the test's end.
func newChurnPool(t *testing.T) *Pool {
	t.Helper()
	s := openStore(t, vfs.NewMem(), "lz4")
	t.Cleanup(func() { s.Close() })
	p, err := New(s, Options{CacheSize: 256 << 10, Partitions: 2, FixedShare: true, CompressedShare: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	populate(t, p, churnPages)
	return p
}

// raceFailures collects the first errors of a test's goroutines and tells
// them all to stop.
type raceFailures struct {
	stop atomic.Bool
	mu   sync.Mutex
	errs []error
}

func (rf *raceFailures) fail(err error) {
	rf.mu.Lock()
	if len(rf.errs) < 8 {
		rf.errs = append(rf.errs, err)
	}
	rf.mu.Unlock()
	rf.stop.Store(true)
}

// check fails t with the errors collected, once the goroutines are done.
func (rf *raceFailures) check(t *testing.T) {
	t.Helper()
	for _, err := range rf.errs {
		t.Error(err)
	}
	if len(rf.errs) > 0 {
		t.FailNow()
	}
}

// recreatePage frees page id and creates it again at version ver, with
// new contents. A reader that loaded the page between the pool dropping it
// and the store freeing it (a tree frees only pages no one can reach;
// these tests do not), or is loading it now to find it gone, makes the
// create fail: that copy is dropped and the create tried again. A page a
// reader holds (ErrPinned) is left as it is.
func recreatePage(p *Pool, id PageID, ver uint64) error {
	if err := p.FreePage(id); err != nil {
		if errors.Is(err, ErrPinned) {
			return nil
		}
		return err
	}
	pg, err := p.Create(id)
	for tries := 0; errors.Is(err, errCached) && tries < 10000; tries++ {
		time.Sleep(10 * time.Microsecond)
		if err = p.FreePage(id); err == nil || errors.Is(err, ErrPinned) {
			pg, err = p.Create(id)
		}
	}
	if err != nil {
		return err
	}
	fillPage(pg.Data(), id, ver)
	pg.Release()
	return nil
}

// TestHitRacingFreeAndReuse: between a hit's lookup and its latch, the
// page is freed and its frame and descriptor go to another page. The hit
// must notice (under the latch) and not hand out the other page's bytes
// as its own: here page 2 is gone, so Get reports it not found.
func TestHitRacingFreeAndReuse(t *testing.T) {
	p := newHitTestPool(t)
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	const other = 1000
	var fired bool
	hitRaceHook = func(id PageID, latched bool) {
		if id != 2 || latched || fired {
			return
		}
		fired = true
		if err := p.FreePage(2); err != nil {
			t.Error(err)
			return
		}
		pg, err := p.Create(other)
		if err != nil {
			t.Error(err)
			return
		}
		fillPage(pg.Data(), other, 1)
		pg.Release()
	}
	defer func() { hitRaceHook = nil }()
	_, st, f2, _, _ := stateOf(p, 2)
	if st != stFrame {
		t.Fatalf("page 2 in state %d, want a frame", st)
	}
	pg, err := p.Get(2, Shared)
	if !fired {
		t.Fatal("the hook did not run")
	}
	if err == nil {
		got := PageID(binary.LittleEndian.Uint64(pg.Data()))
		pg.Release()
		t.Fatalf("Get(2) after page 2 was freed returned a page holding page %d", got)
	}
	if !errors.Is(err, pagestore.ErrNotFound) {
		t.Fatalf("Get(2) after page 2 was freed: %v, want ErrNotFound", err)
	}
	if _, st, f, _, _ := stateOf(p, other); st != stFrame || f != f2 {
		t.Logf("page %d took frame %d (page 2 had %d): the race was not the one aimed at", other, f, f2)
	}
	checkInvariants(t, p)
}

// TestFreeWaitsForLatchedHit: a page freed while a hit holds its latch
// (and no pin) stays until the hit releases it: FreePage reports it in
// use, and the hit's bytes are the page's.
func TestFreeWaitsForLatchedHit(t *testing.T) {
	p := newHitTestPool(t)
	var freeErr error
	hitRaceHook = func(id PageID, latched bool) {
		if id == 2 && latched {
			freeErr = p.FreePage(2)
		}
	}
	defer func() { hitRaceHook = nil }()
	pg, err := p.Get(2, Shared)
	hitRaceHook = nil
	if err != nil {
		t.Fatal(err)
	}
	pageVersion(t, pg.Data(), 2)
	pg.Release()
	if !errors.Is(freeErr, ErrPinned) {
		t.Fatalf("FreePage of a page a hit holds: %v, want ErrPinned", freeErr)
	}
	if _, st, _, _, _ := stateOf(p, 2); st != stFrame {
		t.Fatalf("page 2 in state %d after the failed free, want a frame", st)
	}
	checkInvariants(t, p)
}

// TestPageTableModel runs random inserts, removes and lookups on a page
// table against a map, through tombstone rebuilds and growth.
func TestPageTableModel(t *testing.T) {
	var tb pageTable
	tb.resize(tableSlotsFor(0))
	model := map[PageID]int32{}
	rng := rand.New(rand.NewPCG(1, 2))
	capacity := 8 // descriptors the table is sized for
	for i := 0; i < 200000; i++ {
		id := PageID(rng.IntN(300))
		if rng.IntN(50) == 0 {
			id = pagestore.MaxPageID - PageID(rng.IntN(3)) // the largest ids
		}
		switch op := rng.IntN(10); {
		case op < 4:
			if _, ok := model[id]; ok || len(model) >= capacity {
				break
			}
			di := int32(rng.IntN(1 << 30))
			tb.insert(id, di)
			model[id] = di
		case op < 7:
			if di, ok := model[id]; ok {
				tb.remove(id, di+1) // not its descriptor: stays
				tb.remove(id, di)
				delete(model, id)
			}
		default:
			di, ok := tb.lookup(id)
			if want, wok := model[id]; ok != wok || (ok && di != want) {
				t.Fatalf("op %d: lookup(%d) = %d, %v; want %d, %v", i, id, di, ok, want, wok)
			}
		}
		if rng.IntN(5000) == 0 && capacity < 256 {
			capacity *= 2
			tb.resize(tableSlotsFor(capacity))
		}
		if tb.live != len(model) {
			t.Fatalf("op %d: %d live entries, model has %d", i, tb.live, len(model))
		}
		if 4*(tb.live+tb.dead) > 3*len(*tb.slots.Load())+4 {
			t.Fatalf("op %d: %d live + %d tombstones in %d slots", i, tb.live, tb.dead, len(*tb.slots.Load()))
		}
	}
	for _, id := range []PageID{pagestore.MaxPageID + 1, 1 << 40} {
		if _, ok := tb.lookup(id); ok {
			t.Fatalf("lookup(%d) found an id above MaxPageID", id)
		}
	}
}

// TestPageIDAboveMax: ids the store cannot hold are refused with clear
// errors, not entered in the table.
func TestPageIDAboveMax(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 1 << 20, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Get(pagestore.MaxPageID+1, Shared); !errors.Is(err, pagestore.ErrNotFound) {
		t.Fatalf("Get above MaxPageID: %v, want ErrNotFound", err)
	}
	if _, err := p.Create(1 << 40); err == nil {
		t.Fatal("Create above MaxPageID succeeded")
	}
}

// TestPageTableConcurrentLookups: lookups without the lock, while a writer
// (holding the lock, as the partition does) inserts, removes and rebuilds.
// A lookup may miss or be out of date, but whatever it returns for an id
// must be a descriptor that id was given at some time: never another id's.
func TestPageTableConcurrentLookups(t *testing.T) {
	var tb pageTable
	tb.resize(tableSlotsFor(64))
	// Descriptor indexes encode their id: di = id*1000 + generation, so a
	// reader can tell whose it is.
	const ids = 100
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 3))
			for !stop.Load() {
				id := PageID(rng.IntN(ids))
				if di, ok := tb.lookup(id); ok && PageID(di/1000) != id {
					errs <- fmt.Errorf("lookup(%d) returned descriptor %d, given to page %d", id, di, di/1000)
					return
				}
			}
		}(g)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	live := map[PageID]int32{}
	gen := int32(0)
	rounds := 300000
	if raceEnabled {
		rounds = 30000
	}
	for i := 0; i < rounds; i++ {
		id := PageID(rng.IntN(ids))
		if di, ok := live[id]; ok {
			tb.remove(id, di)
			delete(live, id)
		} else if len(live) < 64 {
			gen = (gen + 1) % 1000
			di := int32(id)*1000 + gen
			tb.insert(id, di)
			live[id] = di
		}
		if i%5000 == 0 {
			tb.resize(len(*tb.slots.Load())) // a rebuild while readers probe
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for id, di := range live {
		if got, ok := tb.lookup(id); !ok || got != di {
			t.Fatalf("after the writer stopped: lookup(%d) = %d, %v; want %d", id, got, ok, di)
		}
	}
}

// TestSpareDirtiedByHitStays: the CLOCK sweep, finding only protected
// inner pages, remembers the first as its spare and unlatches it; a hit
// (no mutex, no pin) changes that page before the sweep evicts it. The
// eviction must see it dirty and leave it: demoted as if clean, the change
// was lost (read back from the store at its old version).
func TestSpareDirtiedByHitStays(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 96 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pt := p.parts[0]
	frames := pt.avail / testPageSize
	populate(t, p, frames)
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	for id := PageID(0); id < PageID(frames); id++ {
		pg, err := p.Get(id, Shared)
		if err != nil {
			t.Fatal(err)
		}
		pg.MarkInner()
		pg.Release()
	}
	changed := PageID(1 << 30)
	spareHook = func(pt *partition, f int32) {
		if changed != 1<<30 {
			return
		}
		d := pt.desc(pt.frameDesc[f])
		if d.hasImage.Load() {
			t.Error("the spare has an image: MarkDirty would take the mutex the sweep holds")
			return
		}
		changed = d.pageID()
		pg, ok := pt.tryHit(changed, Exclusive, true)
		if !ok {
			t.Error("the spare's frame was not free to a hit")
			return
		}
		fillPage(pg.Data(), changed, 2)
		pg.MarkDirty()
		pg.Release()
	}
	defer func() { spareHook = nil }()
	pg, err := p.Create(PageID(frames)) // needs a frame: the sweep runs
	spareHook = nil
	if err != nil {
		t.Fatal(err)
	}
	fillPage(pg.Data(), PageID(frames), 1)
	pg.Release()
	if changed == 1<<30 {
		t.Skip("the sweep evicted without a spare")
	}
	pg, err = p.Get(changed, Shared)
	if err != nil {
		t.Fatal(err)
	}
	ver := pageVersion(t, pg.Data(), changed)
	pg.Release()
	if ver != 2 {
		t.Fatalf("page %d changed by a hit while it was the sweep's spare: version %d, want 2 (the change was lost)", changed, ver)
	}
}

package flashcache

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// TestConcurrentAccess runs readers and writers on disjoint and shared
// pages through a small pool with the flash cache, a page cleaner and a
// writer that recycles regions all the time (a flash far smaller than the
// data), under the race detector in CI. Each page holds a counter only
// its writer increments; readers check that what they see never goes
// backwards, and that the bytes are whole.
func TestConcurrentAccess(t *testing.T) {
	fs := vfs.NewMem()
	s := openStack(t, fs, fs, stackOpts{flashSize: 1 << 20, cache: 160 << 10})
	const pages = 400
	ids := make([]pagestore.PageID, pages)
	for i := range ids {
		ids[i] = s.create(0)
	}
	if err := s.pool.FlushAll(); err != nil {
		t.Fatal(err)
	}
	versions := make([]atomic.Uint64, pages) // last version written (monotonic)
	writers := 2
	readers := 4
	dur := 3 * time.Second
	if testing.Short() {
		dur = time.Second
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var failed atomic.Value
	fail := func(err error) {
		failed.CompareAndSwap(nil, err)
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Writer w owns the pages i with i % writers == w.
				i := rng.IntN(pages/writers)*writers + w
				pg, err := s.pool.Get(ids[i], bufferpool.Exclusive)
				if err != nil {
					fail(err)
					return
				}
				v := versions[i].Load() + 1
				copy(pg.Data(), pageBytes(ids[i], v))
				pg.MarkDirty()
				versions[i].Store(v)
				pg.Release()
			}
		}()
	}
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 10))
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := rng.IntN(pages)
				min := versions[i].Load()
				pg, err := s.pool.Get(ids[i], bufferpool.Shared)
				if err != nil {
					fail(err)
					return
				}
				id, v := pageVersion(pg.Data())
				whole := string(pg.Data()) == string(pageBytes(id, v))
				pg.Release()
				if id != ids[i] || v < min || !whole {
					fail(&staleError{id: ids[i], got: v, min: min})
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // checkpoints now and then
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				if err := s.pool.FlushAll(); err != nil {
					fail(err)
					return
				}
			}
		}
	}()
	time.Sleep(dur)
	close(stop)
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	st := s.fc.Stats()
	t.Logf("%+v", st)
	if st.Hits == 0 || st.Evictions == 0 || st.Invalidations == 0 {
		t.Fatalf("the cache was not exercised: %d hits, %d evictions, %d invalidations", st.Hits, st.Evictions, st.Invalidations)
	}
	s.close()
}

type staleError struct {
	id       pagestore.PageID
	got, min uint64
}

func (e *staleError) Error() string {
	return "page " + itoa(uint64(e.id)) + ": read version " + itoa(e.got) + " after version " + itoa(e.min) + " was written (or torn bytes)"
}

func itoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}

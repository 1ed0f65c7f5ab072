package strata

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// BenchmarkFlashWarmRestart measures how long the flash cache's hit ratio
// takes to come back after a restart, with persistence (a clean Close
// wrote the index snapshot: the next Open rebuilds it) and without (the
// marker removed, as after a crash: the cache starts cold), on simulated
// devices: the data on an HDD (vfs.HDD), the flash cache on a SATA SSD
// (vfs.SATASSD). Random point reads by 2 goroutines over data ~2× the
// RAM cache (compressed; 4× raw) that the flash cache holds whole. It logs
// the hit ratio of each second after the reopen and reports the seconds
// from the start of Open until it is back to 90% of what it was before
// the restart, and how long Open took. Run it once:
//
//	go test -run '^$' -bench FlashWarmRestart -benchtime 1x -v .
//
// (STRATA_BENCH_DIR sets the directory, default a temporary one.)
func BenchmarkFlashWarmRestart(b *testing.B) {
	base := os.Getenv("STRATA_BENCH_DIR")
	if base == "" {
		base = b.TempDir()
	} else {
		var err error
		if base, err = os.MkdirTemp(base, "flashrestart"); err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(base)
	}
	const rows = 150_000
	hdd := vfs.NewLatency(vfs.Default, vfs.HDD)
	ssd := vfs.NewLatency(vfs.Default, vfs.SATASSD)
	dir := filepath.Join(base, "db")
	opts := &Options{CacheSize: 8 << 20, Sync: SyncNever, fs: hdd, flashFS: ssd,
		FlashCache: FlashCache{Path: filepath.Join(base, "flash"), Size: 128 << 20}}
	key := func(i int) []byte { return fmt.Appendf(nil, "row-%08d", i) }
	value := func(i int) []byte {
		r := rand.New(rand.NewPCG(uint64(i), 1))
		v := make([]byte, 180)
		for j := range v {
			v[j] = 'a' + byte(r.Uint32N(16)) // compresses about 2×
		}
		return v
	}
	db, err := Open(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	for first := 0; first < rows; first += 1000 {
		batch := db.NewBatch()
		for i := first; i < min(first+1000, rows); i++ {
			batch.Set(key(i), value(i))
		}
		if err := batch.Commit(NoSync); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Checkpoint(); err != nil {
		b.Fatal(err)
	}
	st := db.Stats()
	b.Logf("loaded %d rows: %d pages, %.1f MiB stored; RAM cache %d MiB; flash cache %d entries",
		rows, st.Store.LivePages, float64(st.Store.StoredBytes)/(1<<20), opts.CacheSize>>20, st.FlashCache.Entries)

	// readFor runs point reads until stop says so, sampling the flash
	// cache's hit ratio every second.
	readFor := func(db *DB, label string, stop func(elapsed time.Duration, ratio float64) bool) (elapsed time.Duration, last float64) {
		var done atomic.Bool
		var ops atomic.Int64
		var wg sync.WaitGroup
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
				for !done.Load() {
					i := r.IntN(rows)
					if v, err := db.Get(key(i)); err != nil || string(v) != string(value(i)) {
						b.Errorf("get %d: %v", i, err)
						done.Store(true)
						return
					}
					ops.Add(1)
				}
			}()
		}
		start := time.Now()
		prev := db.Stats().FlashCache
		prevOps := int64(0)
		for {
			time.Sleep(time.Second)
			cur := db.Stats().FlashCache
			lookups, hits := cur.Lookups-prev.Lookups, cur.Hits-prev.Hits
			n := ops.Load()
			ratio := 0.0
			if lookups > 0 {
				ratio = float64(hits) / float64(lookups)
			}
			elapsed = time.Since(start)
			b.Logf("%s %5.1f s: flash hit ratio %.3f (%d RAM misses), %d reads/s", label, elapsed.Seconds(), ratio, lookups, n-prevOps)
			prev, prevOps, last = cur, n, ratio
			if stop(elapsed, ratio) {
				break
			}
		}
		done.Store(true)
		wg.Wait()
		return elapsed, last
	}
	// Steady state before the restart: the flash cache holds the data.
	var recent []float64
	readFor(db, "before", func(e time.Duration, r float64) bool {
		recent = append(recent, r)
		return e > 20*time.Second
	})
	steady := 0.0
	for _, r := range recent[len(recent)-5:] {
		steady += r / 5
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	target := 0.9 * steady
	b.Logf("steady flash hit ratio %.3f; target after a restart %.3f", steady, target)

	for _, mode := range []string{"persistent", "cold"} {
		if mode == "cold" {
			if err := os.Remove(filepath.Join(dir, "FLASHCACHE")); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		db, err := Open(dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		openTime := time.Since(start)
		fst := db.Stats().FlashCache
		b.Logf("%s: opened in %v (%s, %d entries rebuilt in %v)", mode, openTime, fst.OpenState, fst.Rebuilt, fst.RebuildTime)
		recovered := time.Duration(-1)
		readFor(db, mode, func(e time.Duration, r float64) bool {
			if r >= target && recovered < 0 {
				recovered = e
			}
			return e >= 10*time.Second && (recovered >= 0 || e > 240*time.Second)
		})
		// The time until the hit ratio is back counts from the start of
		// Open. (Before the meta page's clean flag, Open read every page
		// of the tree, the orphan walk, even after a clean Close: from the
		// flash when warm, from the disk otherwise, filling a cold cache.)
		if recovered < 0 {
			b.Logf("%s: not back to %.3f within 240 s", mode, target)
		} else {
			b.ReportMetric((openTime + recovered).Seconds(), "s-to-90%-"+mode)
		}
		b.ReportMetric(openTime.Seconds(), "s-open-"+mode)
		b.ReportMetric(fst.RebuildTime.Seconds()*1e3, "ms-rebuild-"+mode)
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

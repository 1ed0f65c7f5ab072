package strata

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// benchCommits runs b.N one-row commits (8-byte random key, 100-byte
// value) spread over committers goroutines, each with its own batch, and
// reports the WAL's commits per fsync and writes per commit.
func benchCommits(b *testing.B, db *DB, committers int, opts *WriteOptions) {
	b.Helper()
	var next atomic.Int64
	before := db.Stats().WAL
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := range committers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			batch := db.NewBatch()
			key := make([]byte, 8)
			val := make([]byte, 100)
			for next.Add(1) <= int64(b.N) {
				binary.BigEndian.PutUint64(key, rng.Uint64())
				binary.BigEndian.PutUint64(val, rng.Uint64())
				batch.Reset()
				if err := batch.Set(key, val); err != nil {
					b.Error(err)
					return
				}
				if err := batch.Commit(opts); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	after := db.Stats().WAL
	if syncs := after.Syncs - before.Syncs; syncs > 0 {
		b.ReportMetric(float64(b.N)/float64(syncs), "commits/fsync")
	} else {
		b.ReportMetric(0, "commits/fsync")
	}
	b.ReportMetric(float64(after.Writes-before.Writes)/float64(b.N), "writes/commit")
}

// BenchmarkCommitDurable: durable one-row commits (Commit(Sync)) from 1, 8
// and 32 goroutines on the OS file system (b.TempDir), to measure group
// commit: commits/fsync is how many commits shared each WAL fsync.
func BenchmarkCommitDurable(b *testing.B) {
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("committers=%d", n), func(b *testing.B) {
			db := openBench(b, 64<<20)
			benchCommits(b, db, n, Sync)
		})
	}
}

// BenchmarkCommitNoSync: one-row commits that do not wait for durability,
// from one goroutine: Commit(NoSync) under the default SyncAlways, and
// Commit(nil) under SyncNever.
func BenchmarkCommitNoSync(b *testing.B) {
	for _, c := range []struct {
		name string
		mode SyncMode
		opts *WriteOptions
	}{{"always/NoSync", SyncAlways, NoSync}, {"never/nil", SyncNever, nil}} {
		b.Run(c.name, func(b *testing.B) {
			db, err := Open(b.TempDir(), &Options{CacheSize: 64 << 20, Sync: c.mode})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			benchCommits(b, db, 1, c.opts)
		})
	}
}

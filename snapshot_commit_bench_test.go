package strata

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkCommitUnderSnapshot: four-row commits, each made while a
// snapshot taken just before it is open (as an oltp_read_write
// transaction's iterators are while the other thread commits), on a
// cached table of 100,000 rows: every page a commit changes is frozen by
// the snapshot. Reports the pages copied (Stats.ReplacedFresh) and the
// versions kept (Stats.SnapshotVersions) per commit.
func BenchmarkCommitUnderSnapshot(b *testing.B) {
	const rows = 100000
	db, err := Open(b.TempDir(), &Options{CacheSize: 64 << 20, Sync: SyncNever, CheckpointWAL: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%08d", i)) }
	val := make([]byte, 100)
	batch := db.NewBatch()
	for i := 0; i < rows; i++ {
		batch.Set(key(i), val)
	}
	if err := batch.Commit(nil); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	before := db.Stats()
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		snap, err := db.NewSnapshot()
		if err != nil {
			b.Fatal(err)
		}
		batch.Reset()
		for i := 0; i < 4; i++ {
			val[0] = byte(n)
			batch.Set(key(rng.IntN(rows)), val)
		}
		if err := batch.Commit(nil); err != nil {
			b.Fatal(err)
		}
		snap.Close()
	}
	b.StopTimer()
	after := db.Stats()
	b.ReportMetric(float64(after.ReplacedFresh-before.ReplacedFresh)/float64(b.N), "copies/op")
	b.ReportMetric(float64(after.SnapshotVersions-before.SnapshotVersions)/float64(b.N), "versions/op")
}

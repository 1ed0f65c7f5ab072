package strata

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// BenchmarkOpen times Open of a database of 200,000 rows (180-byte values
// that compress about 2x; default page and cache sizes) on an in-memory
// file system and on simulated devices over it (vfs.SATASSD, vfs.HDD:
// simulated, not measured on real ones):
//
//   - clean: after a clean Close (Open reads the meta page, not the tree);
//   - walk: after a Close that could not mark the meta page clean (a
//     snapshot left open kept replaced pages from being freed), so Open
//     walks the tree for unreachable pages, as it did at every Open before
//     the clean flag (and does after a crash, less the WAL replay).
//
// Each iteration times Open alone; the Close (and, for walk, the commits
// and the snapshot that make it unclean) is outside the timer. Run:
//
//	go test -run '^$' -bench 'Open/' -benchtime 3x .
func BenchmarkOpen(b *testing.B) {
	const rows = 200_000
	for _, dev := range []vfs.Device{{Name: "mem"}, vfs.SATASSD, vfs.HDD} {
		mem := vfs.NewMem()
		var fs vfs.FS = mem
		if dev.Name != "mem" {
			fs = vfs.NewLatency(mem, dev)
		}
		opts := &Options{PageSize: 16 << 10, Sync: SyncNever, fs: fs} // as docs/KVSTORE.md measured it
		db, err := Open("db", opts)
		if err != nil {
			b.Fatal(err)
		}
		for first := 0; first < rows; first += 5000 {
			batch := db.NewBatch()
			for i := first; i < min(first+5000, rows); i++ {
				r := rand.New(rand.NewPCG(uint64(i), 1))
				v := make([]byte, 180)
				for j := range v {
					v[j] = 'a' + byte(r.Uint32N(16))
				}
				batch.Set(fmt.Appendf(nil, "row-%08d", i), v)
			}
			if err := batch.Commit(NoSync); err != nil {
				b.Fatal(err)
			}
		}
		if err := db.Checkpoint(); err != nil {
			b.Fatal(err)
		}
		pages := db.Stats().Store.LivePages
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		// reopen opens and closes the database, leaving its meta page
		// clean or not, and returns the pages Open read.
		reopen := func(b *testing.B, clean bool) int64 {
			b.StartTimer()
			db, err := Open("db", opts)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			read := db.Stats().Store.PagesRead
			if err := db.Close(); err != nil {
				b.Fatal(err)
			}
			if !clean {
				// As a Close that did not mark it clean (a crash after
				// the checkpoint): the next Open walks the tree.
				rewriteMeta(b, mem, false, func(page []byte) {
					m, err := decodeMeta(page)
					if err != nil {
						b.Fatal(err)
					}
					m.clean = false
					m.encode(page)
				})
			}
			return read
		}
		for _, mode := range []string{"clean", "walk"} {
			b.Run(fmt.Sprintf("%s/%s", dev.Name, mode), func(b *testing.B) {
				clean := mode == "clean"
				b.StopTimer()
				reopen(b, clean) // the state each timed Open starts from
				var read int64
				for i := 0; i < b.N; i++ {
					read += reopen(b, clean)
				}
				b.ReportMetric(float64(read)/float64(b.N), "pages-read/op")
				b.ReportMetric(float64(pages), "pages")
			})
		}
	}
}

package wal

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// BenchmarkAppend: appends of 128-byte records that nobody waits for
// (SyncNever), from one goroutine, on the OS file system (b.TempDir). The
// timed region ends once every record is written (to the OS page cache),
// so the writer's work counts; the final fsync is not timed.
func BenchmarkAppend(b *testing.B) {
	l, err := Open(b.TempDir(), Options{FS: vfs.Default, SyncMode: SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	p := make([]byte, 128)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Append(p); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.settle(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if err := l.Sync(); err != nil {
		b.Fatal(err)
	}
	st := l.Stats()
	b.ReportMetric(float64(st.Records)/float64(max(st.Writes, 1)), "records/write")
}

// BenchmarkAppendDurable: 128-byte records appended and waited for
// (WaitDurable) by 1, 8 and 32 goroutines on the OS file system: records
// per fsync is the group commit.
func BenchmarkAppendDurable(b *testing.B) {
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("goroutines=%d", n), func(b *testing.B) {
			l, err := Open(b.TempDir(), Options{FS: vfs.Default, SyncMode: SyncNever})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			before := l.Stats()
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := make([]byte, 128)
					for next.Add(1) <= int64(b.N) {
						lsn, err := l.Append(p)
						if err == nil {
							err = l.WaitDurable(lsn)
						}
						if err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			st := l.Stats()
			b.ReportMetric(float64(b.N)/float64(st.Syncs-before.Syncs), "records/fsync")
		})
	}
}

package wal

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// TestGroupCommit runs 16 goroutines × 100 synced appends on a device whose
// fsync takes 1 ms, and checks that they shared fsyncs (fewer than half as
// many as appends, counted both by the log and by the device), that every
// acknowledged record was synced when its Append returned, that the LSNs
// handed out are unique and contiguous and each goroutine's increase, and
// that every record reads back with its own payload.
func TestGroupCommit(t *testing.T) {
	const goroutines, perG = 16, 100
	mem := vfs.NewMem()
	dev := vfs.NewLatency(mem, vfs.Device{Name: "test", SyncLatency: time.Millisecond})
	l := mustOpen(t, testDir, Options{FS: dev, SyncMode: SyncNever})
	base := dev.Stats().Syncs
	baseLog := l.Stats()

	lsns := make([][]uint64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perG {
				lsn, err := appendWait(l, groupPayload(g, i), true)
				if err != nil {
					t.Error(err)
					return
				}
				// Acknowledged as synced: this record and every one
				// before it are durable.
				if s := l.SyncedLSN(); s < lsn {
					t.Errorf("Append(sync) returned LSN %d with SyncedLSN %d", lsn, s)
				}
				lsns[g] = append(lsns[g], lsn)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	const total = goroutines * perG
	devSyncs := dev.Stats().Syncs - base
	st := l.Stats()
	logSyncs, writes := st.Syncs-baseLog.Syncs, st.Writes-baseLog.Writes
	t.Logf("%d synced appends: %d fsyncs (device count %d), %d writes, %.1f records per fsync",
		total, logSyncs, devSyncs, writes, float64(total)/float64(logSyncs))
	if devSyncs >= total/2 || logSyncs >= total/2 {
		t.Errorf("%d fsyncs (device: %d) for %d synced appends: no group commit", logSyncs, devSyncs, total)
	}
	if logSyncs != devSyncs {
		t.Errorf("log counted %d fsyncs, device %d", logSyncs, devSyncs)
	}
	if st.Records-baseLog.Records != total || writes > total {
		t.Errorf("Stats %+v", st)
	}

	var all []uint64
	for g, ls := range lsns {
		if !slices.IsSorted(ls) {
			t.Errorf("goroutine %d got decreasing LSNs", g)
		}
		all = append(all, ls...)
	}
	slices.Sort(all)
	for i, lsn := range all {
		if lsn != uint64(i+1) {
			t.Fatalf("LSNs not unique and contiguous: position %d holds %d", i, lsn)
		}
	}

	// Every record is durable and holds its own payload.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, testDir, Options{FS: mem.CrashClone(vfs.CrashDropUnsynced, nil)})
	defer l.Close()
	byLSN := map[uint64][]byte{}
	for g, ls := range lsns {
		for i, lsn := range ls {
			byLSN[lsn] = groupPayload(g, i)
		}
	}
	recs := replayAll(t, l, 0)
	if len(recs) != total {
		t.Fatalf("%d records after crash, want %d", len(recs), total)
	}
	for _, r := range recs {
		if !bytes.Equal(r.payload, byLSN[r.lsn]) {
			t.Fatalf("LSN %d: payload %q, want %q", r.lsn, r.payload, byLSN[r.lsn])
		}
	}
}

func groupPayload(g, i int) []byte {
	return []byte(fmt.Sprintf("goroutine %d append %d %s", g, i, bytes.Repeat([]byte{byte('a' + g)}, i)))
}

// TestGroupCommitSharedWrite checks the write half of group commit: while
// one batch is being written (slowly), appends queue up and go out in a
// single later write, even without fsyncs.
func TestGroupCommitSharedWrite(t *testing.T) {
	mem := vfs.NewMem()
	dev := vfs.NewLatency(mem, vfs.Device{Name: "test", WriteLatency: time.Millisecond})
	l := mustOpen(t, testDir, Options{FS: dev, SyncMode: SyncNever})
	defer l.Close()
	const goroutines, perG = 8, 50
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perG {
				if _, err := appendWait(l, groupPayload(g, i), false); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := l.settle(); err != nil {
		t.Fatal(err)
	}
	st := l.Stats()
	t.Logf("%d appends in %d writes, %d fsyncs", st.Records, st.Writes, st.Syncs)
	if st.Records != goroutines*perG || st.Writes >= st.Records/2 {
		t.Fatalf("Stats %+v: no write batching", st)
	}
	if got := len(replayAll(t, l, 0)); got != goroutines*perG {
		t.Fatalf("replayed %d", got)
	}
}

package wal

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// faultAt is an injector that counts every file system operation and fails
// the one numbered n (from 0), or none if n < 0.
type faultAt struct {
	mu     sync.Mutex
	n, cnt int
	failed string // the operation it failed
}

func (f *faultAt) inject(op vfs.Op, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := f.cnt
	f.cnt++
	if i == f.n {
		f.failed = fmt.Sprintf("%v %s", op, path)
		return vfs.InjectedError(op, path)
	}
	return nil
}

func (f *faultAt) ops() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cnt
}

func isInjected(err error) bool { return errors.Is(err, vfs.ErrInjected) }

// TestFaultSweep runs the crash workload with one injected I/O error at
// each of 300 points (any operation: open, read, write, fsync, truncate,
// remove, directory fsync, list, lock), a third of them inside moves to a
// new file and a sixth inside TruncateBefore. The error must reach the
// caller (except inside the freeing of a file TruncateBefore already took
// out of the log, which is only logged); a failed write or fsync must
// make the log refuse appends and syncs from then on, while a failed
// rename or remove, or a read error, must not; and
// reopening the log (without a crash) must give back every acknowledged
// record, with a torn tail from a partial write removed.
func TestFaultSweep(t *testing.T) {
	const seeds, nops = 25, 120
	failedOps := map[string]int{}
	for seed := uint64(101); seed < 101+seeds; seed++ {
		opts := crashOptions(seed)
		dry := vfs.NewMem()
		counter := &faultAt{n: -1}
		dry.SetInjector(counter.inject)
		opts.FS = dry
		w := &workload{fs: dry, opts: opts, ops: counter.ops, expected: isInjected, faults: true}
		h, l := w.run(t, seed, nops)
		if l != nil {
			l.Close()
		}
		total := counter.ops()
		rng := rand.New(rand.NewPCG(seed, 5))
		for i := 0; i < 12; i++ {
			n := rng.IntN(total)
			switch {
			case i%3 == 1 && len(h.rotations) > 0:
				r := h.rotations[rng.IntN(len(h.rotations))]
				n = r[0] + rng.IntN(max(r[1]-r[0], 1))
			case i%6 == 2 && len(h.truncations) > 0:
				r := h.truncations[rng.IntN(len(h.truncations))]
				n = r[0] + rng.IntN(max(r[1]-r[0], 1))
			}
			t.Run(fmt.Sprintf("seed%d/op%d", seed, n), func(t *testing.T) {
				fs := vfs.NewMem()
				inj := &faultAt{n: n}
				fs.SetInjector(inj.inject)
				opts.FS = fs
				w := &workload{fs: fs, opts: opts, ops: inj.ops, expected: isInjected, faults: true}
				h, l := w.run(t, seed, nops)
				fs.SetInjector(nil)
				if l != nil {
					l.Close() // returns the sticky error, if any
				}
				if inj.failed != "" {
					op, _, _ := cutSpace(inj.failed)
					failedOps[op]++
				}
				verifyRecovered(t, fs, opts, h, h.acked)
			})
		}
	}
	t.Logf("failed operations: %v", failedOps)
	for _, op := range []string{"write", "sync", "syncdir", "open", "read", "remove"} {
		if failedOps[op] == 0 {
			t.Errorf("no %s was failed", op)
		}
	}
}

func cutSpace(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// TestWriteErrorSticky checks that a failed write is returned to the
// appender and makes the log refuse every later append, sync and rotation,
// even once the fault is gone; and that the records before it survive.
func TestWriteErrorSticky(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, testDir, Options{FS: fs, SyncMode: SyncNever})
	for i := 0; i < 3; i++ {
		if _, err := appendWait(l, []byte{byte(i)}, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.settle(); err != nil {
		t.Fatal(err)
	}
	fs.SetInjector(vfs.InjectAfter(0, vfs.OpWrite))
	// Append only queues the record; the writer's write fails, and the
	// next call learns it.
	if _, err := appendWait(l, []byte("lost"), false); err != nil {
		t.Fatalf("Append: %v", err)
	}
	if err := l.settle(); !isInjected(err) {
		t.Fatalf("the writer's write did not fail: %v", err)
	}
	fs.SetInjector(nil)
	if _, err := appendWait(l, []byte("refused"), true); !isInjected(err) {
		t.Fatalf("Append after a failed write: %v", err)
	}
	if err := l.Sync(); !isInjected(err) {
		t.Fatalf("Sync after a failed write: %v", err)
	}
	if err := l.Rotate(); !isInjected(err) {
		t.Fatalf("Rotate after a failed write: %v", err)
	}
	if err := l.Close(); !isInjected(err) {
		t.Fatalf("Close after a failed write: %v", err)
	}
	l = mustOpen(t, testDir, Options{FS: fs})
	defer l.Close()
	checkRecords(t, replayAll(t, l, 0), [][]byte{{0}, {1}, {2}}, 1)
}

// TestSyncErrorConcurrent fails one fsync while 8 goroutines commit synced
// appends on a device with 1 ms fsyncs, so that the failure hits a group.
// Every Append waiting on that fsync, and every one after, must fail; and
// every Append that returned nil must be durable (survive a crash that
// drops unsynced data): a failed fsync must never acknowledge its group.
func TestSyncErrorConcurrent(t *testing.T) {
	mem := vfs.NewMem()
	dev := vfs.NewLatency(mem, vfs.Device{Name: "test", SyncLatency: time.Millisecond})
	l := mustOpen(t, testDir, Options{FS: dev, SyncMode: SyncNever})
	mem.SetInjector(vfs.InjectAfter(10, vfs.OpSync))
	var mu sync.Mutex
	var acked []uint64
	var failures int
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				lsn, err := appendWait(l, groupPayload(g, i), true)
				mu.Lock()
				if err != nil {
					failures++
					mu.Unlock()
					if !isInjected(err) {
						t.Errorf("Append: %v", err)
					}
					return
				}
				acked = append(acked, lsn)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if failures != 8 || len(acked) == 0 {
		t.Fatalf("%d acknowledged, %d failed", len(acked), failures)
	}
	l.Close()
	mem.SetInjector(nil)
	l = mustOpen(t, testDir, Options{FS: mem.CrashClone(vfs.CrashDropUnsynced, nil)})
	defer l.Close()
	n := uint64(len(replayAll(t, l, 0)))
	for _, lsn := range acked {
		if lsn > n {
			t.Fatalf("LSN %d was acknowledged as synced but only %d records are durable", lsn, n)
		}
	}
	t.Logf("%d acknowledged before the failed fsync, %d durable", len(acked), n)
}

// TestShortWrite cuts a write short: the append fails, and reopening
// removes the partial record and keeps the ones before.
func TestShortWrite(t *testing.T) {
	fs := vfs.NewMem()
	opts := Options{FS: fs, SyncMode: SyncNever}
	l := mustOpen(t, testDir, opts)
	var want [][]byte
	for i := 0; i < 4; i++ {
		p := []byte(fmt.Sprintf("record %d", i))
		if _, err := appendWait(l, p, false); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	if err := l.settle(); err != nil {
		t.Fatal(err)
	}
	fs.SetShortWrites(func(path string, off int64, n int) int { return n / 2 })
	_, err := appendWait(l, []byte("this record is cut in half"), true)
	if !isInjected(err) || !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("Append and WaitDurable with a short write: %v", err)
	}
	fs.SetShortWrites(nil)
	if _, err := appendWait(l, []byte("refused"), false); err == nil {
		t.Fatal("Append after a short write succeeded")
	}
	l.Close()
	l = mustOpen(t, testDir, opts)
	defer l.Close()
	checkRecords(t, replayAll(t, l, 0), want, 1)
	if lsn, err := appendWait(l, []byte("next"), true); err != nil || lsn != 5 {
		t.Fatalf("Append after recovery: %d, %v", lsn, err)
	}
}

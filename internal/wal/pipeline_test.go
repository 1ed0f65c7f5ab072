package wal

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// holdFS wraps a file system so that a test can hold the log's writer in
// the middle of a record write or an fsync, and see what the callers can
// do meanwhile.
type holdFS struct {
	vfs.FS
	mu      sync.Mutex
	holding map[vfs.Op]chan struct{} // op → closed to release it
	held    chan vfs.Op              // an operation is being held
}

func newHoldFS(fs vfs.FS) *holdFS {
	return &holdFS{FS: fs, holding: map[vfs.Op]chan struct{}{}, held: make(chan vfs.Op, 64)}
}

// hold makes the next WriteAt or Sync (op) of a log file wait until
// release(op).
func (h *holdFS) hold(op vfs.Op) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holding[op] = make(chan struct{})
}

func (h *holdFS) release(op vfs.Op) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch := h.holding[op]; ch != nil {
		close(ch)
		delete(h.holding, op)
	}
}

// waitHeld returns once an operation op is being held.
func (h *holdFS) waitHeld(t *testing.T, op vfs.Op) {
	t.Helper()
	select {
	case got := <-h.held:
		if got != op {
			t.Fatalf("held %v, want %v", got, op)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the writer never reached a %v", op)
	}
}

func (h *holdFS) before(op vfs.Op, name string) {
	if !strings.HasSuffix(name, fileSuffix) {
		return
	}
	h.mu.Lock()
	ch := h.holding[op]
	h.mu.Unlock()
	if ch != nil {
		h.held <- op
		<-ch
	}
}

func (h *holdFS) OpenFile(name string, flag int, perm os.FileMode, o vfs.OpenOptions) (vfs.File, error) {
	f, err := h.FS.OpenFile(name, flag, perm, o)
	if err != nil {
		return nil, err
	}
	return &holdFile{File: f, fs: h}, nil
}

type holdFile struct {
	vfs.File
	fs *holdFS
}

func (f *holdFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.before(vfs.OpWrite, f.Name())
	return f.File.WriteAt(p, off)
}

func (f *holdFile) Sync() error {
	f.fs.before(vfs.OpSync, f.Name())
	return f.File.Sync()
}

// eventually polls cond until it holds, failing after 10 s: for states that
// another goroutine reaches without telling the test.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// TestAppendDoesNoIO holds the writer inside a write and checks that
// Appends (in every sync mode) still return at once, without a single file
// system operation, and that the records queued meanwhile go out in one
// write once the writer is released.
func TestAppendDoesNoIO(t *testing.T) {
	for _, mode := range []SyncMode{SyncAlways, SyncPeriodic, SyncNever} {
		t.Run(mode.String(), func(t *testing.T) {
			mem := vfs.NewMem()
			fs := newHoldFS(mem)
			l := mustOpen(t, testDir, Options{FS: fs, SyncMode: mode, SyncInterval: time.Hour})
			defer l.Close()
			fs.hold(vfs.OpWrite)
			if _, err := l.Append([]byte("first")); err != nil {
				t.Fatal(err)
			}
			fs.waitHeld(t, vfs.OpWrite)
			ops := mem.OpCount()
			for i := range 100 {
				if lsn, err := l.Append([]byte(fmt.Sprint("queued ", i))); err != nil || lsn != uint64(i+2) {
					t.Fatalf("Append while the writer is held: %d, %v", lsn, err)
				}
			}
			if got := mem.OpCount(); got != ops {
				t.Fatalf("100 Appends made %d file system operations", got-ops)
			}
			fs.release(vfs.OpWrite)
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			if st := l.Stats(); st.Records != 101 || st.Writes != 2 {
				t.Fatalf("Stats %+v: want 101 records in 2 writes", st)
			}
			checkRecordCount(t, l, 101)
		})
	}
}

func checkRecordCount(t *testing.T, l *Log, n int) {
	t.Helper()
	if got := len(replayAll(t, l, 0)); got != n {
		t.Fatalf("replayed %d records, want %d", got, n)
	}
}

// TestSharedFsync holds the writer in an fsync while 20 goroutines append
// and wait for durability: when it is released, one more write and one
// fsync serve all of them.
func TestSharedFsync(t *testing.T) {
	fs := newHoldFS(vfs.NewMem())
	l := mustOpen(t, testDir, Options{FS: fs, SyncMode: SyncNever})
	defer l.Close()
	fs.hold(vfs.OpSync)
	lsn, err := l.Append([]byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() { first <- l.WaitDurable(lsn) }()
	fs.waitHeld(t, vfs.OpSync)
	before := l.Stats()
	const waiters = 20
	errs := make(chan error, waiters)
	for i := range waiters {
		go func() {
			lsn, err := l.Append([]byte(fmt.Sprint("waiter ", i)))
			if err == nil {
				err = l.WaitDurable(lsn)
			}
			errs <- err
		}()
	}
	l.mu.Lock()
	for l.syncWant < waiters+1 {
		l.mu.Unlock()
		time.Sleep(100 * time.Microsecond)
		l.mu.Lock()
	}
	l.mu.Unlock()
	fs.release(vfs.OpSync)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for range waiters {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st := l.Stats()
	if syncs, writes := st.Syncs-before.Syncs, st.Writes-before.Writes; syncs != 2 || writes != 1 {
		t.Fatalf("%d waiters took %d more fsyncs and %d writes, want 2 (the held one, then one) and 1", waiters, syncs, writes)
	}
}

// TestBackPressure checks that the queue is bounded: with the writer held,
// Appends fill the queue up to QueueSize, the next one waits (and is
// counted in Stats) until the writer takes the queue, and a record larger
// than QueueSize waits for an empty queue and then goes alone.
func TestBackPressure(t *testing.T) {
	const queueSize = 1 << 10
	fs := newHoldFS(vfs.NewMem())
	l := mustOpen(t, testDir, Options{FS: fs, SyncMode: SyncNever, QueueSize: queueSize})
	defer l.Close()
	fs.hold(vfs.OpWrite)
	if _, err := l.Append([]byte("first")); err != nil {
		t.Fatal(err)
	}
	fs.waitHeld(t, vfs.OpWrite)
	p := make([]byte, 100-recordHeaderSize) // 100 bytes a record
	for range queueSize / 100 {
		if _, err := l.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan uint64)
	go func() {
		lsn, err := l.Append(p)
		if err != nil {
			t.Error(err)
		}
		done <- lsn
	}()
	eventually(t, "an Append to wait for room", func() bool { return l.Stats().QueueWaits == 1 })
	select {
	case <-done:
		t.Fatal("Append returned with the queue full")
	default:
	}
	l.mu.Lock()
	if n := len(l.queue); n > queueSize {
		t.Errorf("queue holds %d bytes, QueueSize %d", n, queueSize)
	}
	l.mu.Unlock()
	fs.release(vfs.OpWrite)
	if lsn := <-done; lsn != queueSize/100+2 {
		t.Fatalf("the waiting Append got LSN %d", lsn)
	}
	big := make([]byte, 3*queueSize)
	if _, err := appendWait(l, big, true); err != nil {
		t.Fatal(err)
	}
	checkRecordCount(t, l, queueSize/100+3)
}

// TestWaitDurable checks WaitDurable's edge cases: LSN 0, an LSN never
// handed out, and waits after Close (nil for records Close made durable).
func TestWaitDurable(t *testing.T) {
	l := mustOpen(t, testDir, Options{FS: vfs.NewMem(), SyncMode: SyncNever})
	if err := l.WaitDurable(0); err != nil {
		t.Fatalf("WaitDurable(0): %v", err)
	}
	if err := l.WaitDurable(1); err == nil {
		t.Fatal("WaitDurable of an LSN never appended succeeded")
	}
	lsn, err := l.Append([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.WaitDurable(lsn); err != nil {
		t.Fatalf("WaitDurable after Close of a record Close synced: %v", err)
	}
	if err := l.WaitDurable(lsn + 1); err == nil {
		t.Fatal("WaitDurable past the end after Close succeeded")
	}
}

// TestInFlight closes and rotates a log while records are queued behind a
// held write: Rotate must return only once every record before it is
// durable in a file before the new one, Close must write and sync them
// all, and the writer goroutine must be gone after Close.
func TestInFlight(t *testing.T) {
	mem := vfs.NewMem()
	fs := newHoldFS(mem)
	l := mustOpen(t, testDir, Options{FS: fs, SyncMode: SyncNever})
	fs.hold(vfs.OpWrite)
	for i := range 10 {
		if _, err := l.Append([]byte(fmt.Sprint("before rotate ", i))); err != nil {
			t.Fatal(err)
		}
	}
	fs.waitHeld(t, vfs.OpWrite)
	rotated := make(chan error)
	go func() { rotated <- l.Rotate() }()
	eventually(t, "Rotate to ask the writer", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.rotateWant == 1
	})
	for i := range 5 {
		if _, err := l.Append([]byte(fmt.Sprint("after rotate ", i))); err != nil {
			t.Fatal(err)
		}
	}
	fs.release(vfs.OpWrite)
	if err := <-rotated; err != nil {
		t.Fatal(err)
	}
	if s := l.SyncedLSN(); s < 10 {
		t.Fatalf("Rotate returned with SyncedLSN %d, 10 records before it", s)
	}
	if n := l.Stats().Files; n != 2 {
		t.Fatalf("%d files after Rotate", n)
	}
	// Close with records queued behind a held write.
	fs.hold(vfs.OpWrite)
	for i := range 5 {
		if _, err := l.Append([]byte(fmt.Sprint("before close ", i))); err != nil {
			t.Fatal(err)
		}
	}
	fs.waitHeld(t, vfs.OpWrite)
	closed := make(chan error)
	go func() { closed <- l.Close() }()
	eventually(t, "Close to begin", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.closed
	})
	if _, err := l.Append(nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append during Close: %v", err)
	}
	fs.release(vfs.OpWrite)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.done:
	default:
		t.Fatal("the writer is still running after Close")
	}
	l = mustOpen(t, testDir, Options{FS: mem.CrashClone(vfs.CrashDropUnsynced, nil)})
	recs := replayAll(t, l, 0)
	if len(recs) != 20 || !bytes.HasPrefix(recs[19].payload, []byte("before close")) {
		t.Fatalf("%d records durable after Close, want 20", len(recs))
	}
	l.Close()

	// Close right after Appends, the writer idle or just woken: Close
	// itself must see that everything is written and synced.
	for i := range 50 {
		mem := vfs.NewMem()
		l := mustOpen(t, testDir, Options{FS: mem, SyncMode: SyncNever})
		for range 3 {
			if _, err := l.Append([]byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l = mustOpen(t, testDir, Options{FS: mem.CrashClone(vfs.CrashDropUnsynced, nil)})
		if n := len(replayAll(t, l, 0)); n != 3 {
			t.Fatalf("round %d: %d records durable after Close, want 3", i, n)
		}
		l.Close()
	}
}

// TestCrashPipeline crashes the file system while committers append without
// waiting, wait for durability now and then, and Sync, in each sync mode,
// so that most crashes find records queued or being written but not on
// disk. Recovery must give, for every goroutine, a prefix of its records
// at the LSNs Append gave them, including every record acknowledged as
// durable (by WaitDurable, Sync, or SyncedLSN); the records lost must be
// only ones that were never acknowledged as durable.
func TestCrashPipeline(t *testing.T) {
	const points, goroutines, perG = 60, 4, 80
	var inFlight, lost int
	for p := 0; p < points; p++ {
		mode := []SyncMode{SyncAlways, SyncPeriodic, SyncNever}[p%3]
		crash := vfs.CrashModes[p/3%len(vfs.CrashModes)]
		t.Run(fmt.Sprintf("point%d/%v/%v", p, mode, crash), func(t *testing.T) {
			fs := vfs.NewMem()
			opts := Options{FS: fs, SyncMode: mode, SyncInterval: 100 * time.Microsecond, FileSize: 4096}
			l := mustOpen(t, testDir, opts)
			rng := rand.New(rand.NewPCG(uint64(p), 11))
			fs.CrashAfterOps(1 + rng.IntN(60))
			lsns := make([][]uint64, goroutines)
			var durableMu sync.Mutex
			var durable uint64 // every LSN up to it was acknowledged as durable
			ackDurable := func(lsn uint64) {
				durableMu.Lock()
				durable = max(durable, lsn)
				durableMu.Unlock()
			}
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range perG {
						lsn, err := l.Append(concPayload(g, i))
						if err != nil {
							if !isCrash(err) {
								t.Errorf("Append: %v", err)
							}
							return
						}
						lsns[g] = append(lsns[g], lsn)
						var werr error
						switch i % 7 {
						case 3:
							if werr = l.WaitDurable(lsn); werr == nil {
								ackDurable(lsn)
							}
						case 6:
							before := lsn
							if werr = l.Sync(); werr == nil {
								ackDurable(before)
							}
						}
						if werr != nil && !isCrash(werr) {
							t.Errorf("wait: %v", werr)
						}
						ackDurable(l.SyncedLSN())
					}
				}()
			}
			wg.Wait()
			l.mu.Lock()
			appended, written := l.nextLSN-1, l.writtenLSN
			l.mu.Unlock()
			if appended > written {
				inFlight++
			}
			l.Close()
			opts.FS = fs.CrashedClone(crash, rand.New(rand.NewPCG(uint64(p), 12)))
			l = mustOpen(t, testDir, opts)
			defer l.Close()
			recs := replayAll(t, l, 0)
			if uint64(len(recs)) < durable {
				t.Fatalf("recovered %d records, LSN %d was acknowledged as durable", len(recs), durable)
			}
			lost += int(appended) - len(recs)
			seen := make([]int, goroutines)
			for i, r := range recs {
				if r.lsn != uint64(i+1) {
					t.Fatalf("record %d has LSN %d", i, r.lsn)
				}
				var g, n int
				if _, err := fmt.Sscanf(string(r.payload), "g%d n%d|", &g, &n); err != nil || g < 0 || g >= goroutines {
					t.Fatalf("LSN %d: unrecognisable payload %q", r.lsn, r.payload)
				}
				if n != seen[g] || string(r.payload) != string(concPayload(g, n)) || n >= len(lsns[g]) || lsns[g][n] != r.lsn {
					t.Fatalf("LSN %d: goroutine %d record %d, not its next appended record", r.lsn, g, n)
				}
				seen[g]++
			}
			if lsn, err := appendWait(l, []byte("after"), true); err != nil || lsn != uint64(len(recs))+1 {
				t.Fatalf("Append after recovery: %d, %v", lsn, err)
			}
		})
	}
	t.Logf("%d crash points: %d with records appended but not written, %d records lost in all", points, inFlight, lost)
	if inFlight < points/3 {
		t.Errorf("only %d of %d crashes found records in the queue", inFlight, points)
	}
}

// TestQueueShrinksAfterBurst: a burst that fills the queue grows both
// batch buffers to QueueSize; once commits are small again the writer
// drops them, so that the log does not keep 2 × QueueSize for its life.
func TestQueueShrinksAfterBurst(t *testing.T) {
	const queueSize = 1 << 20
	fs := newHoldFS(vfs.NewMem())
	l := mustOpen(t, testDir, Options{FS: fs, SyncMode: SyncNever, QueueSize: queueSize})
	defer l.Close()
	buffered := func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		return cap(l.queue) + cap(l.spare)
	}
	// Two full queues, each written while the next fills.
	p := make([]byte, 1000-recordHeaderSize)
	for range 2 {
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
		fs.hold(vfs.OpWrite)
		if _, err := l.Append(p); err != nil {
			t.Fatal(err)
		}
		fs.waitHeld(t, vfs.OpWrite)
		for range queueSize / 1000 {
			if _, err := l.Append(p); err != nil {
				t.Fatal(err)
			}
		}
		fs.release(vfs.OpWrite)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := buffered(); got < queueSize {
		t.Fatalf("after the burst the log buffers %d bytes: the burst did not fill the queue", got)
	}
	small := make([]byte, 500)
	for range 100 {
		if _, err := appendWait(l, small, true); err != nil {
			t.Fatal(err)
		}
	}
	if got := buffered(); got > 2*keptQueueBytes {
		t.Errorf("after 100 small commits the log buffers %d bytes, want at most %d", got, 2*keptQueueBytes)
	}
	checkRecordCount(t, l, 2*(queueSize/1000+1)+100)
}

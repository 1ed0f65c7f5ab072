//go:build linux

package vfs

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// directFile writes n blocks of random bytes to a new direct file and
// returns it, open, with its contents.
func directFile(t *testing.T, n int) (File, []byte) {
	t.Helper()
	return directFileWith(t, n, OpenOptions{Direct: true})
}

// directFileWith is directFile opened with opts.
func directFileWith(t *testing.T, n int, opts OpenOptions) (File, []byte) {
	t.Helper()
	f, err := Default.OpenFile(filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE, 0o644, opts)
	must(t, err)
	t.Cleanup(func() { f.Close() })
	if !f.Direct() {
		t.Skip("no direct I/O here")
	}
	want := AlignedBuffer(n * BlockSize)
	for i := range want {
		want[i] = byte(rand.Uint32())
	}
	if _, err := f.WriteAt(want, 0); err != nil {
		t.Fatal(err)
	}
	return f, want
}

// TestDirectReadsThroughAIO: where AIO is available, direct reads go
// through it, many at once, and return what was written; a read past the
// end returns io.EOF as pread(2) does. With PollReads a reader alone (no
// other read in flight) sees its completions by polling (most of them: the
// device answers within the budget), without it none does.
func TestDirectReadsThroughAIO(t *testing.T) {
	for _, poll := range []bool{false, true} {
		t.Run(map[bool]string{false: "parked", true: "polled"}[poll], func(t *testing.T) {
			testDirectReadsThroughAIO(t, poll)
		})
	}
}

func testDirectReadsThroughAIO(t *testing.T, poll bool) {
	a := asyncReads()
	if a == nil {
		t.Skip("Linux AIO not available here")
	}
	f, want := directFileWith(t, 64, OpenOptions{Direct: true, PollReads: poll})
	before, polledBefore := a.reads.Load(), a.polled.Load()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := AlignedBuffer(2 * BlockSize)
			for i := 0; i < 50; i++ {
				off := int64(rand.IntN(63)) * BlockSize
				n, err := f.ReadAt(buf, off)
				if err != nil || n != len(buf) {
					errs <- err
					return
				}
				if !bytes.Equal(buf, want[off:off+int64(n)]) {
					errs <- io.ErrUnexpectedEOF
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("read: %v", err)
	}
	if got := a.reads.Load() - before; got < 16*50 {
		t.Fatalf("%d reads through AIO, want %d", got, 16*50)
	}
	// One reader alone: with PollReads and a P to spare, it polls (with a
	// budget no device exceeds, every read completes within it); without,
	// never.
	defer func(b time.Duration) { pollBudget = b }(pollBudget)
	pollBudget = 10 * time.Second
	polledBefore = a.polled.Load()
	for range 50 {
		buf := AlignedBuffer(BlockSize)
		off := int64(rand.IntN(64)) * BlockSize
		if _, err := f.ReadAt(buf, off); err != nil || !bytes.Equal(buf, want[off:off+BlockSize]) {
			t.Fatalf("read at %d: %v or wrong bytes", off, err)
		}
	}
	polled := a.polled.Load() - polledBefore
	switch {
	case (!poll || runtime.GOMAXPROCS(0) < 2) && polled != 0:
		t.Fatalf("%d reads polled (without PollReads, or with GOMAXPROCS %d)", polled, runtime.GOMAXPROCS(0))
	case poll && runtime.GOMAXPROCS(0) >= 2 && polled != 50:
		t.Fatalf("%d of 50 reads of one reader polled with PollReads, want all", polled)
	}
	checkEventFDsDrained(t, a)
	if d, ok := ReadOverhead(); !ok || d <= 0 {
		t.Fatalf("ReadOverhead() = %v, %v after %d reads through AIO, want their mean CPU time", d, ok, 16*50)
	}
	buf := AlignedBuffer(2 * BlockSize)
	if n, err := f.ReadAt(buf, int64(len(want))-BlockSize); n != BlockSize || err != io.EOF {
		t.Fatalf("read across the end: %d bytes, %v; want %d, EOF", n, err, BlockSize)
	}
}

// TestDirectReadsWithoutAIO: with AIO off, direct reads are pread(2)s and
// return the same bytes.
func TestDirectReadsWithoutAIO(t *testing.T) {
	disableAsync.Store(true)
	t.Cleanup(func() { disableAsync.Store(false) })
	f, want := directFile(t, 8)
	var before int64
	if async != nil {
		before = async.reads.Load()
	}
	buf := AlignedBuffer(BlockSize)
	for off := int64(0); off < int64(len(want)); off += BlockSize {
		if _, err := f.ReadAt(buf, off); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf, want[off:off+BlockSize]) {
			t.Fatalf("block at %d differs", off)
		}
	}
	if async != nil && async.reads.Load() != before {
		t.Fatal("a read went through AIO while it was off")
	}
}

// TestAIOFailureFallsBack: when a reader gives up while reads are in
// flight, each read either completed with the right bytes or reports
// that it was not done (its caller then reads with pread(2)), and every
// later read reports so.
func TestAIOFailureFallsBack(t *testing.T) {
	a := newAsyncReader()
	if a == nil {
		t.Skip("Linux AIO not available here")
	}
	f := newAIOFile(t, 64)
	completed, given := f.readAtOnce(t, a, 16, 200, func() {
		time.Sleep(time.Millisecond)
		a.fail()
	})
	t.Logf("%d reads completed, %d given back", completed, given)
	if _, _, done := f.read(t, a, AlignedBuffer(BlockSize), 0); done {
		t.Fatal("a failed reader read")
	}
	if given == 0 {
		t.Log("every read completed before the failure: the give-back path was not exercised this run")
	}
}

// checkEventFDsDrained fails if a free eventfd of a has a count left: the
// next read to take it would return before its completion.
func checkEventFDsDrained(t *testing.T, a *asyncReader) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.free) == 0 {
		t.Fatal("no free eventfd after the reads")
	}
	var buf [8]byte
	for _, e := range a.free {
		if n, err := unix.Read(e.fd, buf[:]); err != unix.EAGAIN {
			t.Fatalf("free eventfd %d: read %d bytes (% x), %v; want EAGAIN (count 0)", e.fd, n, buf[:max(n, 0)], err)
		}
	}
}

// TestCompletionTakenByAnotherReader: a reader woken by its completion
// takes every completion in the kernel's ring, another reader's too; that
// reader, woken by its own eventfd, finds its read done and returns it.
// Both eventfds go back to the free list with no count left.
func TestCompletionTakenByAnotherReader(t *testing.T) {
	a := newAsyncReader()
	if a == nil {
		t.Skip("Linux AIO not available here")
	}
	t.Cleanup(a.fail)
	f, want := directFile(t, 8)
	rc, err := f.(*osFile).f.SyscallConn()
	must(t, err)
	bufA, bufB := AlignedBuffer(BlockSize), AlignedBuffer(BlockSize)
	var ra, rb *aioRequest
	must(t, rc.Control(func(fd uintptr) {
		ra = a.submit(fd, bufA, 0)
		rb = a.submit(fd, bufB, 3*BlockSize)
	}))
	if ra == nil || rb == nil {
		t.Fatal("a submission was refused")
	}
	// Both completions raised their eventfds (so both are in the ring).
	fds := []unix.PollFd{{Fd: int32(ra.efd.fd), Events: unix.POLLIN}, {Fd: int32(rb.efd.fd), Events: unix.POLLIN}}
	for deadline := time.Now().Add(10 * time.Second); fds[0].Revents&unix.POLLIN == 0 || fds[1].Revents&unix.POLLIN == 0; {
		if time.Now().After(deadline) {
			t.Fatal("reads not completed after 10 s")
		}
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, 10); err != nil && err != unix.EINTR {
			t.Fatal(err)
		}
	}
	a.wait(ra, false)
	select {
	case <-rb.done:
	default:
		t.Fatal("the first reader's reap did not record the second's completion")
	}
	a.wait(rb, false)
	for _, c := range []struct {
		r    *aioRequest
		buf  []byte
		from int
	}{{ra, bufA, 0}, {rb, bufB, 3 * BlockSize}} {
		if c.r.retry || c.r.res != BlockSize || !bytes.Equal(c.buf, want[c.from:c.from+BlockSize]) {
			t.Fatalf("read at %d: retry %v, result %d, or wrong bytes", c.from, c.r.retry, c.r.res)
		}
	}
	if len(a.free) != 2 {
		t.Fatalf("%d free eventfds after two reads, want 2", len(a.free))
	}
	checkEventFDsDrained(t, a)
}

// TestReaderWaitsForATakenCompletion: a reader whose eventfd was raised
// but whose completion another reader took from the ring and has not yet
// recorded waits until it is recorded, and returns its result.
func TestReaderWaitsForATakenCompletion(t *testing.T) {
	for _, poll := range []bool{false, true} {
		t.Run(map[bool]string{false: "parked", true: "polled"}[poll], func(t *testing.T) {
			testReaderWaitsForATakenCompletion(t, poll)
		})
	}
}

func testReaderWaitsForATakenCompletion(t *testing.T, poll bool) {
	a := newAsyncReader()
	if a == nil {
		t.Skip("Linux AIO not available here")
	}
	t.Cleanup(a.fail)
	r := unsubmitted(t, a)
	if _, err := unix.Write(r.efd.fd, []byte{1, 0, 0, 0, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	polledBefore := a.polled.Load()
	returned := make(chan struct{})
	go func() { a.wait(r, poll); close(returned) }()
	select {
	case <-returned:
		t.Fatal("wait returned before the completion was recorded")
	case <-time.After(50 * time.Millisecond):
	}
	a.mu.Lock()
	delete(a.reqs, r.id)
	r.res = BlockSize
	close(r.done)
	a.mu.Unlock()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("wait did not return after the completion was recorded")
	}
	if r.retry || r.res != BlockSize {
		t.Fatalf("retry %v, result %d; want the recorded %d", r.retry, r.res, BlockSize)
	}
	if want := map[bool]int64{false: 0, true: 1}[poll && runtime.GOMAXPROCS(0) >= 2]; a.polled.Load()-polledBefore != want {
		t.Fatalf("%d completions seen by polling, want %d", a.polled.Load()-polledBefore, want)
	}
	checkEventFDsDrained(t, a)
}

// unsubmitted returns a request of a's, with an eventfd and in a's table,
// that was never submitted.
func unsubmitted(t *testing.T, a *asyncReader) *aioRequest {
	t.Helper()
	efd := a.takeEventFD()
	if efd == nil {
		t.Fatal("no eventfd")
	}
	r := &aioRequest{efd: efd, done: make(chan struct{})}
	a.mu.Lock()
	a.next++
	r.id = a.next
	a.reqs[r.id] = r
	a.mu.Unlock()
	return r
}

// openFDs counts the process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here")
	}
	return len(fds)
}

// TestFailEndsWaits: giving AIO up ends the wait of a reader parked on its
// eventfd: its read is given back (for pread(2)), and every eventfd is
// closed.
func TestFailEndsWaits(t *testing.T) {
	for _, poll := range []bool{false, true} {
		t.Run(map[bool]string{false: "parked", true: "polling"}[poll], func(t *testing.T) {
			testFailEndsWaits(t, poll)
		})
	}
}

// testFailEndsWaits: with poll, fail comes while the reader polls (its
// budget made longer than the test).
func testFailEndsWaits(t *testing.T, poll bool) {
	if poll {
		defer func(b time.Duration) { pollBudget = b }(pollBudget)
		pollBudget = time.Minute
	}
	before := openFDs(t)
	a := newAsyncReader()
	if a == nil {
		t.Skip("Linux AIO not available here")
	}
	r := unsubmitted(t, a)
	returned := make(chan struct{})
	go func() { a.wait(r, poll); close(returned) }()
	time.Sleep(10 * time.Millisecond) // let it park in the poller, or poll
	a.fail()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("a reader still waits after fail")
	}
	if !r.retry {
		t.Fatal("the read was not given back")
	}
	if _, err := r.efd.f.Read(make([]byte, 8)); err == nil {
		t.Fatal("the eventfd is still open after fail")
	}
	if e := a.takeEventFD(); e != nil {
		t.Fatal("an eventfd taken after fail")
	}
	if after := openFDs(t); after != before {
		t.Fatalf("%d descriptors open after fail, %d before the reader", after, before)
	}
}

// TestEventFDsBounded: however many reads are made at once, at most
// maxEventFDs eventfds are made; the reads beyond are left to pread(2).
func TestEventFDsBounded(t *testing.T) {
	a := newAsyncReader()
	if a == nil {
		t.Skip("Linux AIO not available here")
	}
	t.Cleanup(a.fail)
	defer func(n int) { maxEventFDs = n }(maxEventFDs)
	maxEventFDs = 3
	through, left := newAIOFile(t, 64).readAtOnce(t, a, 24, 20, func() {})
	t.Logf("%d reads through AIO, %d left to pread(2)", through, left)
	a.mu.Lock()
	made := len(a.eventFDs)
	a.mu.Unlock()
	if made > maxEventFDs || through == 0 {
		t.Fatalf("%d eventfds made (bound %d), %d reads through AIO", made, maxEventFDs, through)
	}
	checkEventFDsDrained(t, a)
}

// TestInterruptedReadsRetried: a read the kernel ended with EINTR or
// EAGAIN is left to pread(2), which retries them; other errors and
// lengths are the read's result.
func TestInterruptedReadsRetried(t *testing.T) {
	a := &asyncReader{}
	for _, c := range []struct {
		res  int64
		n    int
		err  error
		done bool
	}{
		{-int64(unix.EINTR), 0, nil, false},
		{-int64(unix.EAGAIN), 0, nil, false},
		{-int64(unix.EIO), 0, unix.EIO, true},
		{BlockSize, BlockSize, nil, true},
		{0, 0, nil, true},
	} {
		n, err, done := a.result(c.res)
		if n != c.n || err != c.err || done != c.done {
			t.Errorf("result(%d) = %d, %v, %v; want %d, %v, %v", c.res, n, err, done, c.n, c.err, c.done)
		}
	}
}

// aioFile is a direct file of random bytes (want), read through readers
// of the tests' own.
type aioFile struct {
	rc   syscall.RawConn
	want []byte
}

func newAIOFile(t *testing.T, blocks int) *aioFile {
	t.Helper()
	f, want := directFile(t, blocks)
	rc, err := f.(*osFile).f.SyscallConn()
	must(t, err)
	return &aioFile{rc: rc, want: want}
}

// read reads buf at off through a; done is false where a left it to
// pread(2).
func (f *aioFile) read(t *testing.T, a *asyncReader, buf []byte, off int64) (n int, err error, done bool) {
	if cerr := f.rc.Control(func(fd uintptr) { n, err, done = a.pread(fd, buf, off, false) }); cerr != nil {
		t.Error(cerr)
	}
	return
}

// readAtOnce reads random blocks through a from goroutines at once, reads
// each, while during runs; every read done must return the block's bytes.
// It reports how many were done and how many were left to pread(2).
func (f *aioFile) readAtOnce(t *testing.T, a *asyncReader, goroutines, reads int, during func()) (done, left int64) {
	t.Helper()
	var wg sync.WaitGroup
	var nDone, nLeft atomic.Int64
	blocks := len(f.want) / BlockSize
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := AlignedBuffer(BlockSize)
			for i := 0; i < reads; i++ {
				off := int64(rand.IntN(blocks)) * BlockSize
				n, err, ok := f.read(t, a, buf, off)
				if !ok {
					nLeft.Add(1)
					continue
				}
				if err != nil || n != BlockSize || !bytes.Equal(buf, f.want[off:off+BlockSize]) {
					t.Errorf("read at %d: %d bytes, %v, or wrong bytes", off, n, err)
					return
				}
				nDone.Add(1)
			}
		}()
	}
	during()
	wg.Wait()
	return nDone.Load(), nLeft.Load()
}

//go:build linux

package vfs

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Direct reads through Linux native AIO, each reader woken by the Go
// poller.
//
// A goroutine blocked in pread(2) keeps its P (the Go scheduler's right to
// run Go code) until the runtime's monitor takes it back, at least 20 µs
// later and often much more on a loaded VM: with GOMAXPROCS at 2, two reads
// in flight could hold both Ps for most of a read's 100–300 µs, and the
// goroutines with work to do (committers, the page cleaner) waited
// although the CPUs were idle. With many reads in flight at once (the
// deferred commits' applier) that cancelled the gain of reading in
// parallel (docs/BENCHMARKS.md, "Deferred commits").
//
// So a direct read is submitted with io_submit(2) (IOCB_CMD_PREAD, which
// for an O_DIRECT file does not wait for the device), and its reader waits
// holding no P: on an eventfd of its own (taken from a free list for the
// read), which the completion raises, through the Go poller, as a socket
// is waited on. Woken, the reader takes every completion waiting in the
// kernel's ring (io_getevents(2): its own, and any other reader's, whose
// eventfd wakes that reader in turn) and records each in its request.
// A reader's completion may have been taken by another just before its
// eventfd was raised, and not yet recorded: it then waits for its
// request's channel, which the taker closes.
//
// Until the twenty-sixth session one reaper goroutine waited on a shared
// eventfd and woke each reader through its channel. On an Intel VM that
// made a random 4 KiB read in an idle process take about 30 µs longer
// than pread(2): the poller woke the reaper, which woke the reader on
// another thread (BenchmarkDirectRead, docs/BENCHMARKS.md).
//
// A reader parked on the poller is slow to wake while the process's other
// Ps are busy: with two goroutines on two Ps, each alternating 0.3–1 ms of
// CPU work with a random 4 KiB read, a read took 180–245 µs against 70–82
// µs when they mostly read (BenchmarkDirectReadBesideWork; docs/BENCHMARKS.md,
// thirty-sixth session); in the engine, point reads that mostly hit memory
// had their misses take 216–346 µs, against 78 µs with one reading
// goroutine. So a file opened with OpenOptions.PollReads waits for a
// read's completion by reading its eventfd without blocking, for up to
// pollBudget, and parks on the poller only after that, when
//
//   - no other read is in flight through AIO: where others are, their
//     readers wait too and their Ps are idle, so the poller wakes readers
//     at once; and polling Ps cannot: a parked reader waited until the
//     runtime's monitor polled, up to 10 ms later (point reads 8 times the
//     memory: p99 1.2–1.8 ms against 0.25–0.37 ms with every P allowed to
//     poll, 0.88–0.93× the throughput), and
//   - GOMAXPROCS is at least 2 (with one P, polling would stop everything
//     else).
//
// The poller keeps its P, as a goroutine in pread(2) keeps it until the
// runtime's monitor takes it back (other Ps steal what waits on its
// queue): a runtime.Gosched would put it on the scheduler's global queue,
// which its P looks at before the poller (1–2% of reads took over a
// millisecond in the benchmark). Between polls it yields its CPU to the
// kernel (sched_yield(2)): a thread woken on that CPU, a Go thread back
// from the poller or the runtime's monitor, would otherwise wait for the
// next scheduler tick (p99.9 of point reads 4× and 8× the memory 2.6–4.3
// ms without the yield, 0.5–0.9 ms with it, as when parked).
//
// A known cost: while a lone reader polls read after read and the other
// Ps run goroutines that never block, nothing looks at the poller but the
// runtime's monitor (every 10 ms): a goroutine waiting on a socket or a
// pipe meanwhile waits that long (a reviewer's test: 10–20 ms against 4
// µs with parked reads). Parked, the reader's P would have been idle and
// polled. A reader that blocks between reads (a server's connection)
// lets its P look.
//
// Where AIO is not available (io_setup fails: no kernel support, a seccomp
// filter, fs.aio-max-nr exhausted), a submission is refused (EAGAIN: too
// many in flight, or any other error), maxEventFDs reads are in flight
// already, or no eventfd can be made (EMFILE), the read is a pread(2) as
// before, and so is a read the kernel ended with EINTR or EAGAIN, which
// pread(2) would have retried. A reader whose reap fails stops using AIO
// (fail): the reads in flight are done again with pread(2), and the
// following ones use it.
//
// Lock rules: asyncReader.mu guards reqs, next, eventFDs, free and
// making; it is held only to add or take a request or an eventfd, never
// across a system call.

const (
	iocbCmdPread  = 0
	iocbFlagResfd = 1
	// aioEvents is the number of events the context is set up for (the
	// kernel sizes its ring from it); beyond about that many reads in
	// flight io_submit refuses (EAGAIN) and the read falls back to
	// pread(2).
	aioEvents = 1024
)

// pollBudget is how long a polled read polls before it parks: about
// three times a random read's time on the virtio disks measured (65–90
// µs). pollEvery is how many polls it makes between looks at the clock.
var pollBudget = 200 * time.Microsecond

const pollEvery = 8

// maxEventFDs bounds the eventfds made, and so the reads in flight through
// AIO: a read beyond it is a pread(2). Each is a descriptor and a watch
// of the poller's, kept for the process's life; the engine has at most a
// few dozen reads in flight (the deferred commits' applier 32, and one per
// reading goroutine). A variable for tests.
var maxEventFDs = 128

// iocb is the kernel's struct iocb (linux/aio_abi.h) on a little-endian
// 64-bit machine.
type iocb struct {
	data      uint64
	key       uint32
	rwFlags   uint32
	opcode    uint16
	reqprio   int16
	fildes    uint32
	buf       uint64
	nbytes    uint64
	offset    int64
	reserved2 uint64
	flags     uint32
	resfd     uint32
}

// ioEvent is the kernel's struct io_event.
type ioEvent struct {
	data, obj uint64
	res, res2 int64
}

// aioRequest is a read in flight: its control block (which the kernel
// reads at submission) and, once done, its result.
type aioRequest struct {
	id    uint64 // its key in reqs and its iocb's data, set before either
	cb    iocb
	efd   *eventFD // the completion raises it
	res   int64
	retry bool // AIO was given up: read again with pread(2)
	done  chan struct{}
}

// eventFD is an eventfd that one read's completion raises, read through
// the poller; fd is its descriptor, for the read's iocb.
type eventFD struct {
	f  *os.File
	rc syscall.RawConn // f's, for poll
	fd int
}

type asyncReader struct {
	ctx uintptr
	// eventFDs are the eventfds made (closed by fail); free those that no
	// read in flight raises.
	eventFDs, free []*eventFD
	// making counts the eventfds being made, outside mu (takeEventFD).
	making   int
	broken   atomic.Bool
	failOnce sync.Once
	mu       sync.Mutex
	reqs     map[uint64]*aioRequest
	next     uint64
	// reads counts the reads done through AIO, polled those whose
	// completion poll saw (tests).
	reads, polled atomic.Int64
	// readers counts the reads in flight (submitted, not yet returned).
	readers atomic.Int64
	// overhead is the time the reads spent outside the device's wait, in
	// io_submit(2) and in the reaps after them (io_getevents(2), recording
	// the completions), over overheadReads of them (ReadOverhead).
	overhead, overheadReads atomic.Int64
}

var (
	asyncOnce sync.Once
	async     *asyncReader
	// disableAsync, set by tests, makes every direct read a pread(2).
	disableAsync atomic.Bool
)

// asyncReads returns the process's AIO reader, nil where AIO is not
// available or has failed.
func asyncReads() *asyncReader {
	if disableAsync.Load() || !isLittleEndian64 {
		return nil
	}
	asyncOnce.Do(func() { async = newAsyncReader() })
	if async == nil || async.broken.Load() {
		return nil
	}
	return async
}

var isLittleEndian64 = func() bool {
	x := uint16(1)
	return unsafe.Sizeof(uintptr(0)) == 8 && *(*byte)(unsafe.Pointer(&x)) == 1
}()

func newAsyncReader() *asyncReader {
	var ctx uintptr
	if _, _, e := unix.Syscall(unix.SYS_IO_SETUP, aioEvents, uintptr(unsafe.Pointer(&ctx)), 0); e != 0 {
		return nil
	}
	return &asyncReader{ctx: ctx, reqs: make(map[uint64]*aioRequest)}
}

// takeEventFD returns a free eventfd, made if there is none; nil if
// maxEventFDs are in use, none can be made, or AIO was given up.
func (a *asyncReader) takeEventFD() *eventFD {
	a.mu.Lock()
	if a.broken.Load() {
		a.mu.Unlock()
		return nil
	}
	if n := len(a.free); n > 0 {
		e := a.free[n-1]
		a.free = a.free[:n-1]
		a.mu.Unlock()
		return e
	}
	if a.making+len(a.eventFDs) >= maxEventFDs {
		a.mu.Unlock()
		return nil
	}
	a.making++
	a.mu.Unlock()
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	var e *eventFD
	if err == nil {
		f := os.NewFile(uintptr(fd), "aio-eventfd")
		if rc, rerr := f.SyscallConn(); rerr == nil {
			e = &eventFD{f: f, rc: rc, fd: fd}
		} else {
			f.Close()
		}
	}
	a.mu.Lock()
	a.making--
	broken := a.broken.Load()
	if e != nil && !broken {
		a.eventFDs = append(a.eventFDs, e)
	}
	a.mu.Unlock()
	if e != nil && broken {
		e.f.Close() // fail has closed the others
		return nil
	}
	return e
}

// putEventFD frees e, whose read's completion raised it and was read (or
// which no completion will raise).
func (a *asyncReader) putEventFD(e *eventFD) {
	a.mu.Lock()
	if !a.broken.Load() { // else fail closed it
		a.free = append(a.free, e)
	}
	a.mu.Unlock()
}

// wait returns when r is done: completed, or given back (fail), polling
// for its completion first if poll (below). It frees r's eventfd.
func (a *asyncReader) wait(r *aioRequest, poll bool) {
	var buf [8]byte
	var err error
	if !poll || !a.poll(r) {
		_, err = r.efd.f.Read(buf[:])
	}
	if err != nil {
		// Closed by fail, which gave r back (or another error, after
		// which fail does).
		a.fail()
	} else if !a.reap() {
		// r completed (its eventfd was raised: the kernel is done with
		// its buffer), but the ring cannot be read: r is read again.
		a.fail()
		a.giveBack(r)
	}
	<-r.done // closed by this reap, an earlier one, giveBack or fail
	a.putEventFD(r.efd)
}

// poll waits for r's completion by reading its eventfd without blocking,
// for up to pollBudget; true if the eventfd was raised (and read), false
// if GOMAXPROCS-1 readers poll already, the budget ran out or the eventfd
// cannot be read (wait then parks).
func (a *asyncReader) poll(r *aioRequest) bool {
	if a.readers.Load() > 1 || runtime.GOMAXPROCS(0) < 2 {
		return false
	}
	var buf [8]byte
	raised := false
	read := func(fd uintptr) {
		n, err := unix.Read(int(fd), buf[:])
		raised = err == nil && n == len(buf)
	}
	deadline := time.Now().Add(pollBudget)
	for i := 1; ; i++ {
		// Control holds a reference on the descriptor: fail cannot close
		// it, and its number be reused, while it is read.
		if err := r.efd.rc.Control(read); err != nil {
			return false
		}
		if raised {
			a.polled.Add(1)
			return true
		}
		// Let a thread the kernel woke on this CPU run (a Go thread back
		// from the poller, the runtime's monitor): it would wait for the
		// next tick.
		unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		if i%pollEvery == 0 && time.Now().After(deadline) {
			return false
		}
	}
}

// giveBack marks r to be read again with pread(2) and done, unless its
// completion was recorded already.
func (a *asyncReader) giveBack(r *aioRequest) {
	a.mu.Lock()
	if _, ok := a.reqs[r.id]; ok {
		a.giveBackLocked(r)
	}
	a.mu.Unlock()
}

// giveBackLocked takes r, in reqs, out of it, to be read again with
// pread(2), and marks it done; a.mu is held.
func (a *asyncReader) giveBackLocked(r *aioRequest) {
	delete(a.reqs, r.id)
	r.retry = true
	close(r.done)
}

// reap takes the completions waiting in the kernel's ring and records them
// in their requests; it reports false on an error it cannot handle. A
// completion that comes after it raises its reader's eventfd, whose reader
// reaps again: so a reap that takes fewer events than it could has taken
// all it must.
func (a *asyncReader) reap() bool {
	var evs [32]ioEvent
	start := time.Now()
	for {
		var ts unix.Timespec // zero: do not wait
		n, _, e := unix.Syscall6(unix.SYS_IO_GETEVENTS, a.ctx, 0, uintptr(len(evs)), uintptr(unsafe.Pointer(&evs[0])), uintptr(unsafe.Pointer(&ts)), 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return false
		}
		a.mu.Lock()
		for _, ev := range evs[:n] {
			if r, ok := a.reqs[ev.data]; ok {
				delete(a.reqs, ev.data)
				r.res = ev.res
				close(r.done)
			}
		}
		a.mu.Unlock()
		if int(n) < len(evs) {
			break
		}
	}
	a.overhead.Add(int64(time.Since(start)))
	return true
}

// fail turns AIO off and sends the reads in flight back to pread(2), once
// io_destroy(2) has waited for them: the kernel no longer writes into
// their buffers. It closes every eventfd, which ends their readers' waits.
// Should io_destroy fail, the reads in flight are left to complete: each
// reader gives its own back when its eventfd says the kernel is done with
// it (wait). Idempotent.
func (a *asyncReader) fail() {
	a.failOnce.Do(func() {
		a.broken.Store(true)
		if _, _, e := unix.Syscall(unix.SYS_IO_DESTROY, a.ctx, 0, 0); e != 0 {
			return
		}
		a.mu.Lock()
		for _, r := range a.reqs {
			a.giveBackLocked(r)
		}
		efds := a.eventFDs
		a.eventFDs, a.free = nil, nil
		a.mu.Unlock()
		for _, e := range efds {
			e.f.Close()
		}
	})
}

// pread reads len(p) bytes at off of the O_DIRECT file fd into p, which
// stays referenced by the caller until it returns, polling for its
// completion before it parks if poll. ok is false where the
// read was not done (refused, or given up): the caller reads with
// pread(2).
func (a *asyncReader) pread(fd uintptr, p []byte, off int64, poll bool) (n int, err error, ok bool) {
	a.readers.Add(1)
	defer a.readers.Add(-1)
	r := a.submit(fd, p, off)
	if r == nil {
		return 0, nil, false
	}
	a.wait(r, poll)
	runtime.KeepAlive(p) // the kernel wrote into it until now
	if r.retry {
		return 0, nil, false
	}
	return a.result(r.res)
}

// result is what pread returns for a read the kernel completed with res:
// ok false, for pread(2) to do again, where that is EINTR or EAGAIN (a
// wait the file system could not restart, which pread(2) would retry).
func (a *asyncReader) result(res int64) (n int, err error, ok bool) {
	if res == -int64(unix.EINTR) || res == -int64(unix.EAGAIN) {
		return 0, nil, false
	}
	a.reads.Add(1)
	if res < 0 {
		return 0, syscall.Errno(-res), true
	}
	return int(res), nil, true
}

// submit starts a read of len(p) bytes at off of the O_DIRECT file fd into
// p, and returns its request, or nil where it was not submitted (refused,
// or AIO given up). The caller waits for it (wait) and keeps p referenced
// until then.
func (a *asyncReader) submit(fd uintptr, p []byte, off int64) *aioRequest {
	if len(p) == 0 || a.broken.Load() {
		return nil
	}
	efd := a.takeEventFD()
	if efd == nil {
		return nil
	}
	a.mu.Lock()
	a.next++
	r := &aioRequest{id: a.next, efd: efd, done: make(chan struct{})}
	a.reqs[r.id] = r
	a.mu.Unlock()
	r.cb = iocb{
		data:   r.id,
		opcode: iocbCmdPread,
		fildes: uint32(fd),
		buf:    uint64(uintptr(unsafe.Pointer(&p[0]))),
		nbytes: uint64(len(p)),
		offset: off,
		flags:  iocbFlagResfd,
		resfd:  uint32(efd.fd),
	}
	cbp := &r.cb
	start := time.Now()
	for {
		_, _, e := unix.Syscall(unix.SYS_IO_SUBMIT, a.ctx, 1, uintptr(unsafe.Pointer(&cbp)))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			a.mu.Lock()
			delete(a.reqs, r.id)
			a.mu.Unlock()
			a.putEventFD(efd)
			return nil
		}
		break
	}
	a.overhead.Add(int64(time.Since(start)))
	a.overheadReads.Add(1)
	return r
}

// AsyncReads reports whether direct reads go through AIO (aio_linux.go),
// holding no P while the device works: where they do, reading many pages
// at once from goroutines costs the Go scheduler nothing.
func AsyncReads() bool { return asyncReads() != nil }

// ReadOverhead is the mean time a direct read through AIO costs the
// process's CPUs outside the device's wait: its submission (io_submit(2))
// and its reap (io_getevents(2)). The interrupt that completes it and the
// poller's wake-up of its reader are not in it. ok is false until a read
// was made through AIO.
func ReadOverhead() (d time.Duration, ok bool) {
	a := asyncReads()
	if a == nil {
		return 0, false
	}
	n := a.overheadReads.Load()
	if n == 0 {
		return 0, false
	}
	return time.Duration(a.overhead.Load() / n), true
}

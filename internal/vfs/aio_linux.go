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

// Direct reads through Linux native AIO, completed through the Go poller.
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
// for an O_DIRECT file does not wait for the device), and the goroutine
// waits on a channel, holding no P. The completions raise an eventfd that
// one goroutine per process (reap) waits on through the Go poller, as a
// socket is waited on; it reaps them with io_getevents(2) and wakes their
// readers.
//
// Where AIO is not available (io_setup fails: no kernel support, a seccomp
// filter, fs.aio-max-nr exhausted) or a submission is refused (EAGAIN:
// too many in flight), the read is a pread(2) as before. A reaper that
// meets an unexpected error stops using AIO: the reads it had in flight
// are done again with pread(2), and the following ones use it.
//
// Lock rules: asyncReader.mu guards reqs and next; it is held only to add
// or take a request, never across a system call but io_getevents's
// non-blocking reap.

const (
	iocbCmdPread  = 0
	iocbFlagResfd = 1
	// aioEvents is the most reads in flight; beyond it io_submit refuses
	// (EAGAIN) and the read falls back to pread(2).
	aioEvents = 1024
)

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
	cb    iocb
	res   int64
	retry bool // the reaper gave up: read again with pread(2)
	done  chan struct{}
}

type asyncReader struct {
	ctx uintptr
	// efd is the eventfd the completions raise, read through the poller;
	// efdNum its descriptor (os.File.Fd would make efd blocking).
	efd      *os.File
	efdNum   int
	broken   atomic.Bool
	failOnce sync.Once
	mu       sync.Mutex
	reqs     map[uint64]*aioRequest
	next     uint64
	// reads counts the reads done through AIO (tests).
	reads atomic.Int64
	// overhead is the time the reads spent outside the device's wait, in
	// io_submit(2) and in the reaper's io_getevents(2) and wake-ups, over
	// overheadReads of them (ReadOverhead).
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
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Syscall(unix.SYS_IO_DESTROY, ctx, 0, 0)
		return nil
	}
	a := &asyncReader{ctx: ctx, efd: os.NewFile(uintptr(fd), "aio-eventfd"), efdNum: fd, reqs: make(map[uint64]*aioRequest)}
	go a.reap()
	return a
}

// reap waits for completions and hands them to their readers, until it
// meets an error it cannot handle: then AIO is off for the process, and
// the reads in flight are done again with pread(2) (fail).
func (a *asyncReader) reap() {
	var buf [8]byte
	var evs [128]ioEvent
	for {
		if _, err := a.efd.Read(buf[:]); err != nil {
			a.fail()
			return
		}
		start, reaped := time.Now(), 0
		for {
			var ts unix.Timespec // zero: do not wait
			n, _, e := unix.Syscall6(unix.SYS_IO_GETEVENTS, a.ctx, 0, uintptr(len(evs)), uintptr(unsafe.Pointer(&evs[0])), uintptr(unsafe.Pointer(&ts)), 0)
			if e == unix.EINTR {
				continue
			}
			if e != 0 {
				a.fail()
				return
			}
			if n == 0 {
				break
			}
			reaped += int(n)
			a.mu.Lock()
			for _, ev := range evs[:n] {
				if r, ok := a.reqs[ev.data]; ok {
					delete(a.reqs, ev.data)
					r.res = ev.res
					close(r.done)
				}
			}
			a.mu.Unlock()
		}
		if reaped > 0 {
			a.overhead.Add(int64(time.Since(start)))
		}
	}
}

// fail turns AIO off and sends the reads in flight back to pread(2), once
// io_destroy(2) has waited for them: the kernel no longer writes into
// their buffers.
// Idempotent; it ends the reaper (closing the eventfd).
func (a *asyncReader) fail() {
	a.failOnce.Do(func() {
		a.broken.Store(true)
		unix.Syscall(unix.SYS_IO_DESTROY, a.ctx, 0, 0)
		a.mu.Lock()
		for id, r := range a.reqs {
			delete(a.reqs, id)
			r.retry = true
			close(r.done)
		}
		a.mu.Unlock()
		a.efd.Close()
	})
}

// pread reads len(p) bytes at off of the O_DIRECT file fd into p, which
// stays referenced by the caller until it returns. ok is false where the
// read was not done (refused, or given up): the caller reads with
// pread(2).
func (a *asyncReader) pread(fd uintptr, p []byte, off int64) (n int, err error, ok bool) {
	if len(p) == 0 || a.broken.Load() {
		return 0, nil, false
	}
	r := &aioRequest{done: make(chan struct{})}
	a.mu.Lock()
	a.next++
	id := a.next
	a.reqs[id] = r
	a.mu.Unlock()
	r.cb = iocb{
		data:   id,
		opcode: iocbCmdPread,
		fildes: uint32(fd),
		buf:    uint64(uintptr(unsafe.Pointer(&p[0]))),
		nbytes: uint64(len(p)),
		offset: off,
		flags:  iocbFlagResfd,
		resfd:  uint32(a.efdNum),
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
			delete(a.reqs, id)
			a.mu.Unlock()
			return 0, nil, false
		}
		break
	}
	a.overhead.Add(int64(time.Since(start)))
	a.overheadReads.Add(1)
	<-r.done
	runtime.KeepAlive(p) // the kernel wrote into it until now
	if r.retry {
		return 0, nil, false
	}
	a.reads.Add(1)
	if r.res < 0 {
		return 0, syscall.Errno(-r.res), true
	}
	return int(r.res), nil, true
}

// AsyncReads reports whether direct reads go through AIO (aio_linux.go),
// holding no P while the device works: where they do, reading many pages
// at once from goroutines costs the Go scheduler nothing.
func AsyncReads() bool { return asyncReads() != nil }

// ReadOverhead is the mean time a direct read through AIO costs the
// process's CPUs outside the device's wait: its submission (io_submit(2))
// and its share of the reaper's (io_getevents(2), waking its reader). The
// interrupt that completes it and the scheduling of the woken reader are
// not in it. ok is false until a read was made through AIO.
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

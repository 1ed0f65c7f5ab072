package flashcache

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// Flash reads with a deadline. A foreground read hands its request to one
// of a fixed set of reader goroutines and waits for it at most ReadTimeout;
// past that it abandons the request (the reader frees it when the device
// answers) and reads the page store instead. So a stalled flash device
// costs a read at most ReadTimeout, never a hang; and when every reader is
// stuck, further reads bypass the flash at once (readBusy). Requests and
// their aligned buffers are pooled: a read allocates nothing.
//
// Lock rules: none beyond the channel; a request's fields belong to the
// reader from the send until it sets state, then to whoever won the state
// change (the waiter on done, or the reader for an abandoned request).

type readStatus int

const (
	readDone readStatus = iota
	readBusy
	readTimedOut
)

const (
	reqWaiting   = 0
	reqDone      = 1
	reqAbandoned = 2
)

type readReq struct {
	off   int64
	n     int
	buf   []byte // aligned, capacity for the largest entry
	err   error
	took  time.Duration
	state atomic.Int32
	done  chan struct{}
	timer *time.Timer
}

type readers struct {
	f    vfs.File
	ch   chan *readReq
	stop chan struct{}
	pool sync.Pool
	wg   sync.WaitGroup
}

func newReaders(f vfs.File, n, bufLen int) *readers {
	rd := &readers{f: f, ch: make(chan *readReq, n), stop: make(chan struct{})}
	rd.pool.New = func() any {
		return &readReq{buf: vfs.AlignedBuffer(bufLen), done: make(chan struct{}, 1)}
	}
	rd.wg.Add(n)
	for range n {
		go rd.loop()
	}
	return rd
}

func (rd *readers) loop() {
	defer rd.wg.Done()
	for {
		var req *readReq
		select {
		case req = <-rd.ch:
		case <-rd.stop:
			return
		}
		start := time.Now()
		_, req.err = rd.f.ReadAt(req.buf[:req.n], req.off)
		req.took = time.Since(start)
		if req.state.CompareAndSwap(reqWaiting, reqDone) {
			req.done <- struct{}{}
		} else {
			rd.put(req) // abandoned by a waiter that timed out
		}
	}
}

// read reads n bytes at off (both aligned) and returns the request, whose
// buffer holds them, unless every reader is busy or the read took longer
// than timeout (> 0). The caller puts a returned request back.
func (rd *readers) read(off int64, n int, timeout time.Duration) (*readReq, readStatus) {
	req := rd.pool.Get().(*readReq)
	if n > len(req.buf) {
		rd.pool.Put(req)
		return nil, readBusy // cannot happen: buffers fit the largest entry
	}
	req.off, req.n, req.err = off, n, nil
	req.state.Store(reqWaiting)
	select {
	case rd.ch <- req:
	default:
		rd.pool.Put(req)
		return nil, readBusy
	}
	if req.timer == nil {
		req.timer = time.NewTimer(timeout)
	} else {
		req.timer.Reset(timeout)
	}
	select {
	case <-req.done:
		req.timer.Stop()
		return req, readDone
	case <-req.timer.C:
		if req.state.CompareAndSwap(reqWaiting, reqAbandoned) {
			return nil, readTimedOut // the reader puts it back
		}
		<-req.done // finished just now
		return req, readDone
	}
}

func (rd *readers) put(req *readReq) { rd.pool.Put(req) }

// close stops the readers; requests still queued are never served (their
// waiters time out). A reader stuck on a stalled device returns when the
// device answers.
func (rd *readers) close() { close(rd.stop) }

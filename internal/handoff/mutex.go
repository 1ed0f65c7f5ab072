// Package handoff provides the database's writer lock: a mutex like
// sync.Mutex (a free lock is taken at once, even with goroutines waiting
// for it), except that a waiter that has waited HandoffAfter is handed the
// lock by the next Unlock, and the unlocker's goroutine runs on.
//
// Why not sync.Mutex: once a waiter has waited 1 ms, its Unlock hands the
// mutex over too, but also yields the unlocker's processor (goyield),
// putting the unlocker at the back of that processor's local run queue,
// behind the waiter it just readied. Another processor takes from that
// queue only when it runs out of work of its own, and one kept busy (by
// the buffer pool's background write-back, which yields to the global
// queue and so takes itself back) never does. Traced in cached
// oltp_write_only with 2 CPUs, a committer that had just released the
// writer lock waited 20–33 ms to run again while the other committer ran
// on: every run's worst commits (twentieth session, docs/BENCHMARKS.md).
// A lock that always hands over (a channel of one) cut those runs' p99.9
// from 2.9 ms to 0.8 ms, but switched goroutines at every commit and cost
// 8–15% of the throughput; handing over only to a waiter that has waited
// lets a goroutine that holds a processor commit a few times in a row
// while one other goroutine waits.
//
// How a waiter gets the lock: Unlock releases the lock and signals the
// first waiter, unless it was signalled already and has not run since (a
// send on its channel: a parked waiter is readied to run next on the
// unlocker's processor, and an idle processor is woken, which may take
// it). The waiter, once running, takes the lock if it is still free, else
// waits again, first in line. An unlocker that goes on holding its
// processor (committing again) usually takes the lock first: the waiter
// waits in the processor's queue until the unlocker blocks or another
// processor steals it. So once the first waiter has waited HandoffAfter,
// Unlock hands the lock to it instead: the unlocker's next Lock blocks,
// and the waiter runs.
//
// Limits. The lock may be handed to a waiter that is ready but not
// running, and nobody holds it in the meantime: if a later wake-up on that
// processor pushed the waiter back in its queue, everyone waits for the
// goroutines ahead of it. With two or more goroutines waiting, the second
// has usually waited HandoffAfter by the time it is first, and most
// releases hand over (a review measured 44% with three goroutines, 69%
// with four): this is then the channel's behaviour, and its cost. Waits
// for the lock are channel receives: the mutex profile
// (STRATA_BENCH_MUTEXPROFILE) no longer shows them; the block profile
// (STRATA_BENCH_BLOCKPROFILE) does.

// Lock rules: Mutex.mu guards the line of waiters and each waiter's
// handed and signalled flags; Mutex.held is the lock itself (1 while
// held). Unlock hands the lock over (handed set, held left at 1) only
// under mu, and a waiter checks handed under mu before it waits again, so
// the lock has one owner at a time.
package handoff

import (
	"sync"
	"sync/atomic"
	"time"
)

// Mutex is the lock. Its zero value is an unlocked mutex; it must not be
// copied after first use.
type Mutex struct {
	held    atomic.Int32
	mu      sync.Mutex
	waiters []*lockWaiter // in arrival order
}

type lockWaiter struct {
	since     time.Time
	handed    bool          // the lock was handed to it (under mu)
	signalled bool          // signalled since it last looked (under mu)
	wake      chan struct{} // capacity 1: Unlock never blocks; a send it skips finds one pending
}

// HandoffAfter is how long the first waiter waits before Unlock hands it
// the lock: about 8 commits of cached oltp_write_only (12 µs each), so
// that a goroutine that holds a processor commits a few times in a row,
// and a waiter waits little more.
const HandoffAfter = 100 * time.Microsecond

var waiterPool = sync.Pool{New: func() any { return &lockWaiter{wake: make(chan struct{}, 1)} }}

// Lock takes the lock, waiting for it if it is held.
func (m *Mutex) Lock() {
	if m.held.CompareAndSwap(0, 1) {
		return
	}
	w := waiterPool.Get().(*lockWaiter)
	w.since, w.handed, w.signalled = time.Now(), false, false
	m.mu.Lock()
	if m.held.CompareAndSwap(0, 1) {
		m.mu.Unlock()
		waiterPool.Put(w)
		return
	}
	m.waiters = append(m.waiters, w)
	m.mu.Unlock()
	for {
		<-w.wake
		m.mu.Lock()
		w.signalled = false
		if !w.handed && !m.held.CompareAndSwap(0, 1) {
			m.mu.Unlock()
			continue // taken first: wait, still in line
		}
		if !w.handed {
			m.remove(w)
		}
		m.mu.Unlock()
		// Drain a signal sent since the receive. One sent later still
		// (by an Unlock that released mu before sending) lands in the
		// pooled waiter, and its next Lock wakes once for nothing: it
		// looks again under mu, and waits again.
		select {
		case <-w.wake:
		default:
		}
		waiterPool.Put(w)
		return
	}
}

// remove takes w out of the line. Called with mu held.
func (m *Mutex) remove(w *lockWaiter) {
	for i, x := range m.waiters {
		if x == w {
			copy(m.waiters[i:], m.waiters[i+1:])
			m.waiters[len(m.waiters)-1] = nil
			m.waiters = m.waiters[:len(m.waiters)-1]
			return
		}
	}
}

// TryLock takes the lock if it is free.
func (m *Mutex) TryLock() bool { return m.held.CompareAndSwap(0, 1) }

// Unlock releases the lock, or hands it to the first waiter if that one
// has waited HandoffAfter, and signals the first waiter unless it was
// signalled already and has not looked since. Unlocking an unlocked Mutex
// panics.
func (m *Mutex) Unlock() {
	m.mu.Lock()
	if m.held.Load() == 0 {
		m.mu.Unlock()
		panic("handoff: unlock of unlocked mutex")
	}
	if len(m.waiters) == 0 {
		m.held.Store(0)
		m.mu.Unlock()
		return
	}
	w := m.waiters[0]
	if time.Since(w.since) >= HandoffAfter {
		w.handed = true // held stays 1: w's now
		m.remove(w)
	} else {
		m.held.Store(0)
	}
	// One signal until it runs: an unlocker that takes the lock again and
	// again would otherwise wake it (a futex wake when its processor
	// sleeps) at every release, only for it to find the lock taken.
	signal := !w.signalled || w.handed
	w.signalled = true
	m.mu.Unlock()
	if signal {
		select {
		case w.wake <- struct{}{}:
		default: // a signal is waiting for it already
		}
	}
}

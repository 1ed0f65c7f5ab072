package handoff

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMutexExcludes: goroutines taking the lock (Lock and TryLock)
// never hold it together; every increment of a plain counter made under
// it survives (and -race sees no race); none waits forever.
func TestMutexExcludes(t *testing.T) {
	var l Mutex
	var wg sync.WaitGroup
	var inside atomic.Int32
	n, rounds := 0, 1000
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				if g%2 == 0 && i%3 == 0 {
					for !l.TryLock() {
						runtime.Gosched()
					}
				} else {
					l.Lock()
				}
				if inside.Add(1) != 1 {
					t.Error("two goroutines hold the lock")
				}
				n++
				if i%50 == 0 {
					time.Sleep(time.Duration(i%3) * 50 * time.Microsecond) // waiters wait past HandoffAfter
				}
				inside.Add(-1)
				l.Unlock()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("goroutines still waiting after a minute: a lost wake-up")
	}
	if n != 8*rounds {
		t.Fatalf("counted %d, want %d", n, 8*rounds)
	}
	if len(l.waiters) != 0 || l.held.Load() != 0 {
		t.Fatalf("after all unlocked: %d waiters, held %d", len(l.waiters), l.held.Load())
	}
}

// TestMutexHandsOverToALongWaiter: a goroutine that takes the lock
// again as soon as it releases it, with one processor, does not keep a
// waiter out: once the waiter has waited HandoffAfter, the next Unlock
// hands the lock to it, and the waiter has it before the other
// goroutine's next Lock returns.
func TestMutexHandsOverToALongWaiter(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var l Mutex
	l.Lock()
	got := make(chan struct{})
	go func() {
		l.Lock()
		close(got)
		l.Unlock()
	}()
	for len(waitersOf(&l)) == 0 {
		runtime.Gosched()
	}
	time.Sleep(2 * HandoffAfter) // the waiter has waited long enough
	l.Unlock()                   // hands over: the waiter holds it, not yet running
	if l.TryLock() {
		t.Fatal("the lock was free after an Unlock that should have handed it over")
	}
	l.Lock() // waits for the waiter to run and release it
	select {
	case <-got:
	default:
		t.Fatal("Lock returned before the waiter it was handed to had it")
	}
	l.Unlock()
}

func waitersOf(l *Mutex) []*lockWaiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiters
}

// TestMutexUnlockOfUnlockedPanics: as sync.Mutex, a bug in the caller is
// not silently absorbed.
func TestMutexUnlockOfUnlockedPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Unlock of an unlocked Mutex did not panic")
		}
	}()
	var l Mutex
	l.Unlock()
}

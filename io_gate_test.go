package strata

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ioGate holds I/O calls of a test file system while it is held: a device
// that has not answered yet. The wrapping file calls pass before the
// operation it gates; held counts the calls waiting.
type ioGate struct {
	mu   sync.Mutex
	gate chan struct{} // not nil: calls wait until it is closed
	held atomic.Int64
}

func (g *ioGate) hold() {
	g.mu.Lock()
	g.gate = make(chan struct{})
	g.mu.Unlock()
}

// release lets held calls, and later ones, go; it does nothing if the gate
// is open.
func (g *ioGate) release() {
	g.mu.Lock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
	g.mu.Unlock()
}

// pass waits while the gate is held.
func (g *ioGate) pass() {
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate != nil {
		g.held.Add(1)
		<-gate
		g.held.Add(-1)
	}
}

// completesWhileHeld waits up to 10 s for an operation held I/O must not
// block, whose result comes on done; on a timeout it releases the gate
// (so that Close can finish) and fails with the message why gives then.
func (g *ioGate) completesWhileHeld(t *testing.T, done <-chan error, why func() string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		msg := why() // before the release lets more complete
		g.release()
		t.Fatal(msg)
	}
}

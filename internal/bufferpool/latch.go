package bufferpool

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Frame latches, and the version that lets a reader read a frame without
// taking its latch (Pool.Peek).
//
// Lock rules: a frameLatch is a reader-writer lock on the bytes of one
// frame and on which page the frame holds (partition.go states who takes
// it when). Everything that changes a frame's bytes, or moves a page into
// or out of it, holds the latch exclusively; ver is odd exactly while it
// is held so (incremented once the latch is taken, and again before it is
// let go). A reader that saw the same even ver before and after reading
// the frame read bytes no exclusive holder touched in between.

// optimisticReads says whether Pool.Peek reads at all: only where the
// CPU keeps loads in order (x86's TSO). The check that the version did not
// move is an atomic load; on a weaker model (arm64: a load-acquire) the
// page's bytes, read with plain loads before it, may be read after it,
// and a read torn by a writer could pass. There every read latches.
const optimisticReads = runtime.GOARCH == "amd64" || runtime.GOARCH == "386"

// OptimisticReads says whether Pool.Peek ever succeeds on this machine.
const OptimisticReads = optimisticReads

// frameLatch is a frame's latch and its version. (28 bytes: the version
// shares a cache line with the next frames' latches, whose shared holds
// write it. Padding each latch to a line would cost 36 bytes a frame, 1%
// of 4 KiB pages, to spare a root peek a line fetched again when a leaf
// in a neighbouring frame is latched; not measured.)
type frameLatch struct {
	mu  sync.RWMutex
	ver atomic.Uint32
}

// Lock latches the frame exclusively.
func (l *frameLatch) Lock() {
	l.mu.Lock()
	l.ver.Add(1)
}

// TryLock latches the frame exclusively if it is free, without waiting.
func (l *frameLatch) TryLock() bool {
	if !l.mu.TryLock() {
		return false
	}
	l.ver.Add(1)
	return true
}

// Unlock lets an exclusive latch go.
func (l *frameLatch) Unlock() {
	l.ver.Add(1)
	l.mu.Unlock()
}

// RLock latches the frame shared.
func (l *frameLatch) RLock() { l.mu.RLock() }

// TryRLock latches the frame shared if no one holds it exclusively,
// without waiting.
func (l *frameLatch) TryRLock() bool { return l.mu.TryRLock() }

// RUnlock lets a shared latch go.
func (l *frameLatch) RUnlock() { l.mu.RUnlock() }

// version returns the frame's version, and false if the frame is latched
// exclusively (its bytes or its page may be changing).
func (l *frameLatch) version() (uint32, bool) {
	v := l.ver.Load()
	return v, v&1 == 0
}

// unchanged reports whether the frame's version is still v: nothing held
// the latch exclusively since v was read.
func (l *frameLatch) unchanged(v uint32) bool { return l.ver.Load() == v }

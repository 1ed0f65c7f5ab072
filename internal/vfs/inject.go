package vfs

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
)

// Op is a kind of file-system operation, as seen by a MemFS fault injector.
type Op int

// The operations a MemFS injector is consulted on. File.Size is reported as
// OpStat; File.Close is never failed, because callers cannot act on a failed
// close and a close that can fail only makes tests noisier.
const (
	OpOpen     Op = iota // FS.OpenFile
	OpRead               // File.ReadAt
	OpWrite              // File.WriteAt
	OpSync               // File.Sync
	OpTruncate           // File.Truncate
	OpRemove             // FS.Remove
	OpRename             // FS.Rename (the injector sees the old name)
	OpSyncDir            // FS.SyncDir
	OpMkdir              // FS.MkdirAll
	OpList               // FS.List
	OpStat               // FS.Stat, File.Size
	OpLock               // FS.Lock
	numOps
)

var opNames = [...]string{
	OpOpen:     "open",
	OpRead:     "read",
	OpWrite:    "write",
	OpSync:     "sync",
	OpTruncate: "truncate",
	OpRemove:   "remove",
	OpRename:   "rename",
	OpSyncDir:  "syncdir",
	OpMkdir:    "mkdir",
	OpList:     "list",
	OpStat:     "stat",
	OpLock:     "lock",
}

// String returns the operation's lower-case name, such as "sync".
func (op Op) String() string {
	if op >= 0 && op < numOps {
		return opNames[op]
	}
	return fmt.Sprintf("Op(%d)", int(op))
}

// Injector decides whether an operation fails: MemFS calls it before op on
// path and, if it returns an error, fails the operation with that error
// without performing it. Errors should wrap ErrInjected (those made by
// InjectedError do) so that callers can tell injected faults from bugs.
//
// MemFS calls the injector with its lock held, so the injector must not
// call back into that MemFS. The same injector can be used by several
// goroutines; those returned by InjectAfter and InjectRandom are safe for it.
type Injector func(op Op, path string) error

// InjectedError returns the error that the injectors of this package return
// for op on path. It wraps ErrInjected.
func InjectedError(op Op, path string) error {
	return fmt.Errorf("%w: %s %s", ErrInjected, op, path)
}

// InjectAfter returns an injector that lets the first n operations of the
// given kinds succeed and fails every later one: InjectAfter(0, OpSync)
// fails every sync, InjectAfter(2, OpSync) the third and all after it.
// With no kinds given, every operation counts.
func InjectAfter(n int, ops ...Op) Injector {
	var mu sync.Mutex
	seen := 0
	return func(op Op, path string) error {
		if len(ops) > 0 && !slices.Contains(ops, op) {
			return nil
		}
		mu.Lock()
		i := seen
		seen++
		mu.Unlock()
		if i >= n {
			return InjectedError(op, path)
		}
		return nil
	}
}

// InjectRandom returns an injector that fails each operation of the given
// kinds (every kind if none are given) with probability p, drawing from rng.
// The injector serializes its use of rng, so with a seeded rng and a
// deterministic sequence of operations the failures are reproducible.
func InjectRandom(rng *rand.Rand, p float64, ops ...Op) Injector {
	var mu sync.Mutex
	return func(op Op, path string) error {
		if len(ops) > 0 && !slices.Contains(ops, op) {
			return nil
		}
		mu.Lock()
		fail := rng.Float64() < p
		mu.Unlock()
		if fail {
			return InjectedError(op, path)
		}
		return nil
	}
}

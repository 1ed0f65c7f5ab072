package wal

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// history is what a workload did to a log.
type history struct {
	// attempted[i] is the payload of LSN i+1: every record that was given
	// an LSN, including one whose write failed (it may have reached the
	// disk).
	attempted [][]byte
	// Records 1..acked were acknowledged as written (Append returned nil
	// and the writer wrote the record without an error); records
	// 1..durable were made durable by a WaitDurable, Sync, Rotate, Close or
	// Open that returned nil, or reported durable by SyncedLSN.
	acked, durable int
	// truncBound is the highest LSN passed to TruncateBefore: records at
	// or above it must not be removed.
	truncBound uint64
	// rotations and truncations are the [start, end) operation counts of
	// the calls that moved to a new file or deleted files, so that tests
	// can aim crashes and faults at them.
	rotations, truncations [][2]int
}

// workload runs a deterministic random sequence of operations on a log.
type workload struct {
	fs   vfs.FS
	opts Options
	// ops counts the file system operations so far (for history's ranges).
	ops func() int
	// expected reports whether an operation's error is the fault the test
	// provoked (a crash or an injected error) rather than a bug.
	expected func(error) bool
	// faults: errors are injected one at a time and the workload goes on
	// where the log allows it (after a failed TruncateBefore or Replay,
	// which must not make the log refuse appends); otherwise it stops at
	// the first error.
	faults bool
}

// run performs nops random operations, or fewer if one fails. It returns
// the history and the log if it is still open.
func (w *workload) run(t *testing.T, seed uint64, nops int) (*history, *Log) {
	t.Helper()
	h := &history{}
	rng := rand.New(rand.NewPCG(seed, 7))
	l, err := Open(testDir, w.opts)
	if err != nil {
		if !w.expected(err) {
			t.Fatalf("seed %d: Open: unexpected error: %v", seed, err)
		}
		return h, nil
	}
	// probe checks, after an operation failed, whether the log still
	// takes appends; it must if the failed operation was one that leaves
	// the log usable.
	probe := func(op string, usable bool) bool {
		p := randPayload(rng, 10)
		lsn, err := l.Append(p)
		if err == nil {
			h.attempted = append(h.attempted, p)
			err = l.settle()
			if err != nil {
				// Queued, then the write failed: a log that must stay
				// usable did not.
				t.Fatalf("seed %d: the probe's write after a failed %s failed: %v", seed, op, err)
			}
		}
		if err == nil {
			if !usable {
				t.Fatalf("seed %d: the log takes appends after a failed %s", seed, op)
			}
			h.acked = len(h.attempted)
			if lsn != uint64(len(h.attempted)) {
				t.Fatalf("seed %d: probe got LSN %d, want %d", seed, lsn, len(h.attempted))
			}
			return true
		}
		if !w.expected(err) {
			t.Fatalf("seed %d: probe after failed %s: unexpected error %v", seed, op, err)
		}
		return false
	}
	for i := 0; i < nops; i++ {
		start := w.ops()
		rotations := l.Stats().Rotations
		var op string
		var err error
		switch r := rng.IntN(100); {
		case r < 60:
			op = "append"
			n := rng.IntN(300)
			if rng.IntN(20) == 0 {
				n = rng.IntN(3000)
			}
			p := randPayload(rng, n)
			sync := rng.IntN(4) == 0
			var lsn uint64
			if lsn, err = l.Append(p); err != nil {
				break
			}
			h.attempted = append(h.attempted, p) // queued: it may reach the disk
			if lsn != uint64(len(h.attempted)) {
				t.Fatalf("seed %d: Append got LSN %d, want %d", seed, lsn, len(h.attempted))
			}
			if sync {
				if err = l.WaitDurable(lsn); err != nil {
					break
				}
				h.durable = len(h.attempted)
			}
			// Acknowledged once written (settle, below).
		case r < 72:
			op = "sync"
			if err = l.Sync(); err == nil {
				h.durable = len(h.attempted)
			}
		case r < 80:
			op = "rotate"
			if err = l.Rotate(); err == nil {
				h.durable = len(h.attempted)
			}
		case r < 88:
			op = "truncate"
			x := 1 + rng.Uint64N(l.NextLSN())
			h.truncBound = max(h.truncBound, x)
			err = l.TruncateBefore(x)
			h.truncations = append(h.truncations, [2]int{start, w.ops()})
		case r < 93:
			op = "close"
			if err = l.Close(); err != nil {
				break
			}
			h.durable = len(h.attempted)
			op = "open"
			if l, err = Open(testDir, w.opts); err != nil {
				l = nil
				break
			}
			if l.NextLSN() != uint64(len(h.attempted))+1 {
				t.Fatalf("seed %d: reopened with NextLSN %d after %d records", seed, l.NextLSN(), len(h.attempted))
			}
		default:
			op = "replay"
			from := rng.Uint64N(l.NextLSN() + 1)
			first := max(from, l.FirstLSN())
			err = l.Replay(from, func(lsn uint64, p []byte) error {
				if lsn != first || string(p) != string(h.attempted[lsn-1]) {
					t.Fatalf("seed %d: Replay(%d) gave LSN %d (want %d) or a wrong payload", seed, from, lsn, first)
				}
				first++
				return nil
			})
			if err == nil && first != l.NextLSN() {
				t.Fatalf("seed %d: Replay(%d) stopped before LSN %d", seed, from, l.NextLSN())
			}
			if errors.Is(err, ErrCorrupt) {
				t.Fatalf("seed %d: Replay reported corruption after an I/O error: %v", seed, err)
			}
		}
		if l != nil && err == nil {
			// Let the writer finish what the operation started, so that
			// its file system operations happen inside the operation's
			// range: the run is deterministic.
			if err = l.settle(); err == nil && op == "append" {
				h.acked = len(h.attempted)
			}
		}
		if l != nil {
			// SyncedLSN promises durability too: under SyncAlways the
			// writer syncs records nobody waited for.
			h.durable = max(h.durable, int(l.SyncedLSN()))
		}
		if l != nil && l.Stats().Rotations != rotations {
			h.rotations = append(h.rotations, [2]int{start, w.ops()})
		}
		if err == nil {
			continue
		}
		if !w.expected(err) {
			t.Fatalf("seed %d op %d (%s): unexpected error: %v", seed, i, op, err)
		}
		if !w.faults || l == nil {
			return h, l
		}
		// An injected fault. A failed write or fsync (in Append, Sync,
		// Rotate, Close, or a directory fsync in TruncateBefore) is
		// sticky; a failed rename or remove in TruncateBefore, or a read
		// error in Replay, is not.
		switch op {
		case "truncate", "replay":
			if !probe(op, true) && op == "replay" {
				t.Fatalf("seed %d: a failed Replay made the log refuse appends", seed)
			}
			if op == "truncate" && l.Sync() != nil {
				return h, l
			}
			continue
		default:
			probe(op, false)
			if err := l.Sync(); err == nil {
				t.Fatalf("seed %d: Sync succeeded on a failed log", seed)
			}
			return h, l
		}
	}
	return h, l
}

// verifyRecovered opens the log on fs and checks the recovery rule: its
// records are a contiguous run of the attempted records with the right
// payloads, ending at or after record minPresent, and beginning at or before
// the truncation bound (nothing at or above it was removed). Then it
// checks that the log goes on working: append, reopen, replay.
func verifyRecovered(t *testing.T, fs vfs.FS, opts Options, h *history, minPresent int) {
	t.Helper()
	opts.FS = fs
	l, err := Open(testDir, opts)
	if err != nil {
		t.Fatalf("recovery failed: %v\n%v", err, fs)
	}
	recs := replayAll(t, l, 0)
	next := l.NextLSN()
	for i, r := range recs {
		if i > 0 && r.lsn != recs[i-1].lsn+1 {
			t.Fatalf("LSN %d follows %d", r.lsn, recs[i-1].lsn)
		}
		if r.lsn > uint64(len(h.attempted)) {
			t.Fatalf("recovered LSN %d, only %d records were appended", r.lsn, len(h.attempted))
		}
		if string(r.payload) != string(h.attempted[r.lsn-1]) {
			t.Fatalf("LSN %d: wrong payload", r.lsn)
		}
	}
	last := next - 1
	if len(recs) > 0 {
		if recs[len(recs)-1].lsn != last {
			t.Fatalf("last record %d, NextLSN %d", recs[len(recs)-1].lsn, next)
		}
		if l.FirstLSN() > recs[0].lsn {
			t.Fatalf("FirstLSN %d above the first record %d", l.FirstLSN(), recs[0].lsn)
		}
	}
	if last < uint64(minPresent) {
		t.Fatalf("lost acknowledged records: recovered up to LSN %d, %d were acknowledged (%d attempted)\n%v",
			last, minPresent, len(h.attempted), fs)
	}
	if last > uint64(len(h.attempted)) {
		t.Fatalf("NextLSN %d after %d attempted records", next, len(h.attempted))
	}
	if bound := max(h.truncBound, 1); bound <= uint64(minPresent) && (len(recs) == 0 || recs[0].lsn > bound) {
		t.Fatalf("records from LSN %d on were truncated, the bound was %d", l.FirstLSN(), bound)
	}

	// The recovered log goes on: the torn tail must be gone, not left
	// between the old records and the new ones.
	// Rotating makes the recovered file an older one, which must be
	// valid to its end.
	var more [][]byte
	for i := 0; i < 4; i++ {
		if i == 2 {
			if err := l.Rotate(); err != nil {
				t.Fatal(err)
			}
		}
		p := []byte{byte(i), 'n', 'e', 'w'}
		lsn, err := appendWait(l, p, i == 3)
		if err != nil || lsn != next+uint64(i) {
			t.Fatalf("append after recovery: LSN %d, %v", lsn, err)
		}
		more = append(more, p)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Open(testDir, opts)
	if err != nil {
		t.Fatalf("second recovery: %v", err)
	}
	defer l.Close()
	again := replayAll(t, l, 0)
	if len(again) != len(recs)+len(more) {
		t.Fatalf("after appending and reopening: %d records, want %d", len(again), len(recs)+len(more))
	}
	for i, r := range again {
		want := more[max(i-len(recs), 0)]
		if i < len(recs) {
			want = recs[i].payload
		}
		if string(r.payload) != string(want) {
			t.Fatalf("after appending and reopening: record %d (LSN %d) differs", i, r.lsn)
		}
	}
}

package bench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// fakeCheckpoints is a CheckpointWatcher whose epoch the test moves.
type fakeCheckpoints struct{ epoch atomic.Uint64 }

func (f *fakeCheckpoints) CheckpointEpoch() uint64 { return f.epoch.Load() }

// TestCheckpointOverlapSplitsLatencies: with an engine that checkpoints in
// the background, a transaction that ran while a checkpoint began, ran or
// ended counts apart from the others, so a slow one shows as a
// checkpoint's stall or not.
func TestCheckpointOverlapSplitsLatencies(t *testing.T) {
	ck := &fakeCheckpoints{}
	w := &worker{ckpt: ck}
	n := 0
	// Every 10th transaction starts a checkpoint and is slow; the next
	// one runs during it (odd epoch), and the one after ends it. Among
	// the rest, one is slower still, with no checkpoint near it.
	txn := func(w *worker) error {
		n++
		switch {
		case n == 5:
			time.Sleep(300 * time.Millisecond)
		case n%10 == 0:
			ck.epoch.Add(1)
			time.Sleep(5 * time.Millisecond)
		case n%10 == 2 && n > 10:
			ck.epoch.Add(1)
		}
		return nil
	}
	if _, err := runPhase(context.Background(), "run", 700*time.Millisecond, 0, []*worker{w}, txn, func(Event) {}); err != nil {
		t.Fatal(err)
	}
	var res Result
	summarize(&res, []*worker{w}, time.Second)
	if n < 30 {
		t.Fatalf("only %d transactions ran", n)
	}
	// Transactions 10k, 10k+1 and 10k+2 overlap a checkpoint (the last
	// checkpoint may be cut short by the phase).
	if want := int64(n / 10 * 3); res.CkptTxns < want-2 || res.CkptTxns > want {
		t.Fatalf("%d of %d transactions counted as overlapping a checkpoint: want about %d", res.CkptTxns, n, want)
	}
	if res.CkptMaxUs < 5e3 {
		t.Fatalf("slowest overlapping transaction %v µs: want the 5 ms ones", res.CkptMaxUs)
	}
	if res.RestMaxUs < 300e3 {
		t.Fatalf("slowest other transaction %v µs: want the 300 ms one, which no checkpoint overlapped", res.RestMaxUs)
	}
	if res.MaxUs != max(res.CkptMaxUs, res.RestMaxUs) {
		t.Fatalf("max %v µs, the overlapping ones' %v µs, the others' %v µs", res.MaxUs, res.CkptMaxUs, res.RestMaxUs)
	}
}

// TestPacedBacklogCountsAsCheckpoints: a paced worker that a checkpoint
// put behind schedule counts the transactions of its backlog as
// overlapping it (their latencies run from when they were due, during the
// checkpoint), even those that start after it ended.
func TestPacedBacklogCountsAsCheckpoints(t *testing.T) {
	ck := &fakeCheckpoints{}
	w := &worker{ckpt: ck}
	n := 0
	txn := func(w *worker) error {
		n++
		if n == 3 { // a checkpoint begins and ends during it: 20 transactions fall due
			ck.epoch.Add(1)
			time.Sleep(20 * time.Millisecond)
			ck.epoch.Add(1)
		}
		return nil
	}
	if _, err := runPhase(context.Background(), "run", 200*time.Millisecond, 1000, []*worker{w}, txn, func(Event) {}); err != nil {
		t.Fatal(err)
	}
	var res Result
	summarize(&res, []*worker{w}, time.Second)
	if res.CkptTxns < 10 {
		t.Fatalf("%d of %d transactions counted as overlapping the checkpoint: want the slow one and its backlog of about 20", res.CkptTxns, res.Txns)
	}
	if rest := res.Txns - res.CkptTxns; rest < 50 {
		t.Fatalf("only %d transactions counted apart from the checkpoint: want those after the backlog", rest)
	}
}

// TestNoCheckpointWatcherNoSplit: an engine without background
// checkpoints reports no split.
func TestNoCheckpointWatcherNoSplit(t *testing.T) {
	w := &worker{}
	if _, err := runPhase(context.Background(), "run", 20*time.Millisecond, 0, []*worker{w}, func(*worker) error { return nil }, func(Event) {}); err != nil {
		t.Fatal(err)
	}
	var res Result
	summarize(&res, []*worker{w}, time.Second)
	if res.CkptTxns != 0 || res.RestMaxUs != 0 || res.Txns == 0 {
		t.Fatalf("%+v", res)
	}
}

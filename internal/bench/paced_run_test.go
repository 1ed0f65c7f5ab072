package bench

import (
	"context"
	"testing"
	"time"
)

// TestPacedRunKeepsItsRate: with a rate, the workers start no more
// transactions than the rate allows (a closed loop of instant transactions
// would run millions), and not far fewer.
func TestPacedRunKeepsItsRate(t *testing.T) {
	workers := []*worker{{}, {}}
	const rate, d = 400.0, 500 * time.Millisecond
	_, err := runPhase(context.Background(), "run", d, rate, workers, func(*worker) error { return nil }, func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	var txns int64
	for _, w := range workers {
		txns += w.txns
	}
	// The schedule ends with the phase: rate×d transactions are due in
	// it, rounded up per worker; a slow host may start fewer, never more.
	most := int64(rate*d.Seconds()) + int64(len(workers))
	if txns > most || txns < most/4 {
		t.Fatalf("%d transactions at %v a second over %v: want at most %d and not far fewer", txns, rate, d, most)
	}
}

// TestPacedRunCountsFromDue: a transaction slower than the pace makes a
// backlog, and the latencies count it (from when each transaction was
// due), as a user who sends requests at that rate would see; without the
// rate each transaction is measured alone.
func TestPacedRunCountsFromDue(t *testing.T) {
	slow := func(*worker) error { time.Sleep(5 * time.Millisecond); return nil }
	paced := []*worker{{}}
	if _, err := runPhase(context.Background(), "run", 300*time.Millisecond, 1000, paced, slow, func(Event) {}); err != nil {
		t.Fatal(err)
	}
	// Due every 1 ms, served every 5 ms or more: the last of n
	// transactions was due about 4n ms before it ended.
	if n, got := paced[0].txns, time.Duration(paced[0].hist.max); n < 5 || got < time.Duration(n)*3*time.Millisecond {
		t.Fatalf("paced: %d transactions of 5 ms at 1 ms intervals, slowest counted %v: want the backlog counted", n, got)
	}
	closed := []*worker{{}}
	if _, err := runPhase(context.Background(), "run", 100*time.Millisecond, 0, closed, slow, func(Event) {}); err != nil {
		t.Fatal(err)
	}
	if p50 := time.Duration(closed[0].hist.quantile(0.5)); p50 > 50*time.Millisecond {
		t.Fatalf("closed loop: median %v for transactions of 5 ms", p50)
	}
}

// TestPacedRunEndsWithItsPhase: a worker whose next transaction is due
// after the phase's end does not hold the phase up until then, nor start
// it.
func TestPacedRunEndsWithItsPhase(t *testing.T) {
	workers := []*worker{{}}
	elapsed, err := runPhase(context.Background(), "run", 50*time.Millisecond, 0.1, workers, func(*worker) error { return nil }, func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	if workers[0].txns != 1 {
		t.Fatalf("%d transactions: want the one due at the start", workers[0].txns)
	}
	if elapsed > 5*time.Second {
		t.Fatalf("the phase of 50ms took %v: it waited for a transaction due 10s after its start", elapsed)
	}
}

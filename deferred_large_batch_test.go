package strata

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// TestLargeBatchDoesNotWaitForAnEmptyQueue: a batch that takes more than
// the deferred queue can hold beside anything else (over half its limit:
// its keys count twice) applies the queue and commits directly; it waited
// for an empty queue, which the committers that fit kept from happening
// (found by a reviewer: 56,644 small commits passed it in 10 s).
func TestLargeBatchDoesNotWaitForAnEmptyQueue(t *testing.T) {
	deferTest = func() bool { return true }
	t.Cleanup(func() { deferTest = nil })
	mem := vfs.NewMem()
	opts := memOptions(mem)
	opts.CacheSize = 4 << 20
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	pre := db.NewBatch()
	rv := make([]byte, 200)
	for i := 0; i < 40000; i++ {
		for j := range rv {
			rv[j] = byte(i*7 + j*13)
		}
		pre.Set([]byte(fmt.Sprintf("s%06d", i)), rv)
	}
	if err := pre.Commit(nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	opts.fs = vfs.NewLatency(mem, vfs.Device{Name: "slow", ReadLatency: 2 * time.Millisecond})
	db, err = Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	limit := db.dq.limit
	var stop atomic.Bool
	var small atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			val := make([]byte, 300)
			for i := 0; !stop.Load(); i++ {
				b := db.NewBatch()
				for j := 0; j < 8; j++ {
					b.Set([]byte(fmt.Sprintf("s%06d", (i*7919+j*104729+g*31)%40000)), val)
				}
				if err := b.Commit(NoSync); err != nil {
					t.Error(err)
					return
				}
				small.Add(1)
			}
		}(g)
	}
	time.Sleep(200 * time.Millisecond)
	big := db.NewBatch()
	val := make([]byte, 1000)
	for i := 0; int64(big.size) < limit*6/10; i++ {
		big.Set([]byte(fmt.Sprintf("big%06d", i)), val)
	}
	t.Logf("queue limit %d, big batch %d bytes", limit, big.size)
	done := make(chan error, 1)
	start := time.Now()
	before := small.Load()
	go func() { done <- big.Commit(NoSync) }()
	select {
	case err := <-done:
		t.Logf("big batch committed after %v (%d small commits meanwhile), err %v", time.Since(start), small.Load()-before, err)
	case <-time.After(3 * time.Second): // with the fix, well under 0.1 s
		n := small.Load() - before
		stop.Store(true)
		err := <-done
		wg.Wait()
		t.Fatalf("a batch of %d bytes (queue limit %d) waited 3 s for room while %d smaller commits went in; it committed %v after the others stopped (err %v)",
			big.size, limit, n, time.Since(start), err)
	}
	stop.Store(true)
	wg.Wait()
}

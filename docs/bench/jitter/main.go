// Command jitter measures the host's own latency tail: two goroutines
// (one per CPU of a 2-CPU host) each run a loop of about a microsecond of
// arithmetic and record the gaps between iterations longer than 1 ms.
// With nothing else in the process, such a gap is the host (other
// tenants, the hypervisor, interrupts), not the Go runtime's work for
// someone else. docs/BENCHMARKS.md compares commit latency tails with it.
//
//	go run . -d 20s
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	d := flag.Duration("d", 20*time.Second, "how long to run")
	threads := flag.Int("threads", runtime.GOMAXPROCS(0), "looping goroutines")
	flag.Parse()
	steal0 := stealTicks()
	var wg sync.WaitGroup
	gaps := make([][]time.Duration, *threads)
	for i := range gaps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			end := time.Now().Add(*d)
			last := time.Now()
			x := 1.0
			for last.Before(end) {
				for range 300 {
					x = x*1.0000001 + 1e-9
				}
				now := time.Now()
				if g := now.Sub(last); g > time.Millisecond {
					gaps[i] = append(gaps[i], g)
				}
				last = now
			}
			runtime.KeepAlive(x)
		}()
	}
	wg.Wait()
	all := slices.Concat(gaps...)
	slices.SortFunc(all, func(a, b time.Duration) int { return int(b - a) })
	over10 := 0
	for _, g := range all {
		if g > 10*time.Millisecond {
			over10++
		}
	}
	fmt.Printf("%d goroutines, %v: %d gaps over 1 ms, %d over 10 ms; longest %v; steal %d ticks\n",
		*threads, *d, len(all), over10, all[:min(len(all), 8)], stealTicks()-steal0)
}

// stealTicks is the host's steal time so far (/proc/stat, in USER_HZ
// ticks; -1 where unknown).
func stealTicks() int64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := strings.Cut(string(b), "\n")
	var name string
	var f [8]int64
	if n, _ := fmt.Sscan(line, &name, &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7]); n < 9 {
		return -1
	}
	return f[7]
}

package strataengine

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata"
)

// PoolTraceEnv names the environment variable that makes a Strata child
// write its buffer pool's state to the file it names (".<pid>.<n>"
// appended: the child's process id, every run of a sweep having its own
// child, and the n-th open in it, the load's and the run's), one line
// every poolTraceEvery from the open to the close, written as it goes:
// seconds since the open, R
// and the target, whether demotions compress, the frames' and images' MiB,
// the accesses of the interval (frame hits, image hits, misses) and the
// controller's trials so far (all, frames trials, kept). It is for seeing
// how the controller converges after an open or a change of load, which
// the run's end-of-phase figures cannot show.
const PoolTraceEnv = "STRATA_BENCH_POOLTRACE"

// PoolLogEnv names the environment variable that makes a Strata child
// write its database's log at Debug level (the controller's decisions and
// trials among it: Options.Logger) to the file it names, as JSON lines,
// with ".<pid>.<n>" appended as for PoolTraceEnv. Beside the trace's
// samples it says why R moved.
const PoolLogEnv = "STRATA_BENCH_POOLLOG"

// openPoolLog returns the logger PoolLogEnv asks for (nil if none) and
// the function that closes its file once the database is closed.
func openPoolLog() (*slog.Logger, func(), error) {
	path := os.Getenv(PoolLogEnv)
	if path == "" {
		return nil, func() {}, nil
	}
	f, err := os.Create(fmt.Sprintf("%s.%d.%d", path, os.Getpid(), poolLogOpens.Add(1)))
	if err != nil {
		return nil, nil, fmt.Errorf("bench: pool log: %w", err)
	}
	return slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})), func() { f.Close() }, nil
}

// poolLogOpens numbers the logs this process opened.
var poolLogOpens atomic.Int64

const poolTraceEvery = 250 * time.Millisecond

// poolTraceOpens numbers the opens of this process (the child opens once
// for the load and again for the run).
var poolTraceOpens atomic.Int64

// startPoolTrace starts the trace PoolTraceEnv asks for, if any, and
// returns the function that stops it (called by Close before the database
// closes).
func startPoolTrace(db *strata.DB) (stop func(), err error) {
	path := os.Getenv(PoolTraceEnv)
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(fmt.Sprintf("%s.%d.%d", path, os.Getpid(), poolTraceOpens.Add(1)))
	if err != nil {
		return nil, fmt.Errorf("bench: pool trace: %w", err)
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer f.Close()
		w := bufio.NewWriter(f)
		defer w.Flush()
		fmt.Fprintln(w, "t\tR\ttarget\tcompressing\tframes_mib\timages_mib\thits_u\thits_c\tmisses\ttrials\tframes_trials\tkept")
		start := time.Now()
		t := time.NewTicker(poolTraceEvery)
		defer t.Stop()
		var prev strata.Stats
		sample := func() {
			st := db.Stats()
			p := st.Pool
			fmt.Fprintf(w, "%.2f\t%.3f\t%.3f\t%v\t%.1f\t%.1f\t%d\t%d\t%d\t%d\t%d\t%d\n",
				time.Since(start).Seconds(), p.Share, p.TargetShare, p.Compressing,
				float64(p.FrameBytes)/(1<<20), float64(p.ImageBytes)/(1<<20),
				p.HitsUncompressed-prev.Pool.HitsUncompressed, p.HitsCompressed-prev.Pool.HitsCompressed,
				p.Misses-prev.Pool.Misses, p.ControllerTrials, p.FramesTrials, p.TrialsKept)
			w.Flush() // a child killed keeps its trace
			prev = st
		}
		for {
			sample()
			select {
			case <-quit:
				sample() // the last interval
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}, nil
}

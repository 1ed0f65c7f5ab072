package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// loadBatchRows is the number of rows per Apply of the load phase.
const loadBatchRows = 1000

// phaseTick is how often Run reports the progress of a timed phase.
const phaseTick = 100 * time.Millisecond

// StartMeasurer is implemented by engines whose Metrics should cover the
// measured phase only: Run calls StartMeasurement just before it starts,
// after the load and the warm-up.
type StartMeasurer interface {
	StartMeasurement()
}

// CheckpointWatcher is implemented by engines that checkpoint in the
// background (Strata): CheckpointEpoch is odd while a checkpoint runs and
// grows by one at each checkpoint's start and end. Run reads it before
// and after each transaction, and reports the transactions that
// overlapped a checkpoint apart from the others (Result.Ckpt*, Rest*), so
// that a stall can be told to be a checkpoint's or not.
type CheckpointWatcher interface {
	CheckpointEpoch() uint64
}

// Noter is implemented by engines with remarks for Result.Notes (a
// simulated device, an option they could not honour).
type Noter interface {
	Notes() []string
}

// Run loads the data set into the engine (or reuses an earlier load), runs
// the warm-up and then the measured phase, and returns the measurements.
// progress, which may be nil, is called from Run's goroutine with load
// progress (after each batch) and with the elapsed time of the warm-up
// and measured phases (every 100 ms). Cancelling ctx stops the run and
// returns ctx's error.
func Run(ctx context.Context, spec RunSpec, progress func(Event)) (*Result, error) {
	if progress == nil {
		progress = func(Event) {}
	}
	p, err := newPlan(spec)
	if err != nil {
		return nil, err
	}
	spec = p.spec
	res := &Result{Spec: spec, ReadAheadKB: -1, GoMemLimit: debug.SetMemoryLimit(-1)}
	res.Notes = append(res.Notes, p.notes...)

	dir := spec.Config.Dir
	marker, reuse := reusableLoad(dir, spec)
	reuse = reuse && spec.Reuse
	if !reuse {
		if err := prepareFreshDir(dir); err != nil {
			return nil, err
		}
	}
	cfg := spec.Config
	cfg.Dir = filepath.Join(dir, engineSubdir)
	eng, describe, err := p.factory(cfg)
	if err != nil {
		return nil, fmt.Errorf("bench: open %s: %w", spec.Engine, err)
	}
	res.Describe = describe
	closed := false
	defer func() {
		if !closed {
			eng.Close()
		}
	}()
	if n, ok := eng.(Noter); ok {
		res.Notes = append(res.Notes, n.Notes()...)
	}

	if reuse {
		res.LoadSeconds, res.LogicalBytes = marker.LoadSeconds, marker.LogicalBytes
		note := "reused the data loaded by an earlier run (load time is that run's)"
		if marker.WriteRuns > 0 {
			note += fmt.Sprintf("; %d write runs have modified it since", marker.WriteRuns)
		}
		res.Notes = append(res.Notes, note)
		if stale := staleLoadNote(marker); stale != "" {
			res.Notes = append(res.Notes, stale)
		}
	} else {
		marker = markerFor(spec)
		marker.Build = loaderBuild()
		start := time.Now()
		logical, err := load(ctx, eng, p.ds, spec.TableSize, progress)
		if err != nil {
			return nil, err
		}
		if err := eng.Flush(); err != nil {
			return nil, fmt.Errorf("bench: flush after load: %w", err)
		}
		res.LoadSeconds = time.Since(start).Seconds()
		res.LogicalBytes = logical
		marker.LoadSeconds, marker.LogicalBytes, marker.NextID = res.LoadSeconds, logical, uint64(spec.TableSize)
		if err := writeLoadMarker(dir, marker); err != nil {
			return nil, err
		}
		if r, ok := eng.(Reopener); ok && r.ReopenAfterLoad() {
			closed = true
			if err := eng.Close(); err != nil {
				return nil, fmt.Errorf("bench: close %s after the load: %w", spec.Engine, err)
			}
			if eng, res.Describe, err = p.factory(cfg); err != nil {
				return nil, fmt.Errorf("bench: reopen %s after the load: %w", spec.Engine, err)
			}
			closed = false
			res.Notes = append(res.Notes, "reopened after the load, as a run on reused data would be (the engine asked: ReopenAfterLoad)")
			if n, ok := eng.(Noter); ok {
				for _, note := range n.Notes() {
					if !slices.Contains(res.Notes, note) {
						res.Notes = append(res.Notes, note)
					}
				}
			}
		}
	}
	if res.DiskBytes, err = dirSize(cfg.Dir); err != nil {
		return nil, err
	}
	if spec.DropCaches {
		if err := dropPageCache(); err != nil {
			res.Notes = append(res.Notes, "page cache not dropped: "+err.Error())
		} else {
			res.CachesDropped = true
		}
	}
	if p.wl.writes {
		if err := removeLoadMarker(dir); err != nil {
			return nil, err
		}
	}

	var nextID atomic.Uint64
	nextID.Store(marker.NextID)
	workers, err := newWorkers(p, eng, &nextID)
	if err != nil {
		return nil, err
	}
	if spec.Warmup > 0 {
		if _, err := runPhase(ctx, "warmup", spec.Warmup, spec.Rate, workers, p.wl.txn, progress); err != nil {
			return nil, err
		}
		for _, w := range workers {
			w.resetCounters()
		}
	}
	if sm, ok := eng.(StartMeasurer); ok {
		sm.StartMeasurement()
	}
	stopProfile, err := startProfile(spec.Engine)
	if err != nil {
		return nil, err
	}
	ioBefore, ioErr := readProcIO()
	userBefore, sysBefore, cpuErr := processCPU()
	gcBefore := readGCCounters()
	elapsed, err := runPhase(ctx, "run", spec.Duration, spec.Rate, workers, p.wl.txn, progress)
	gcAfter := readGCCounters()
	res.GoMemLimitRun = debug.SetMemoryLimit(-1)
	profileErr := stopProfile()
	if err != nil {
		return nil, err
	}
	ioAfter, ioErrAfter := readProcIO()
	userAfter, sysAfter, cpuErrAfter := processCPU()
	summarize(res, workers, elapsed)
	res.CPUPerTxnUs, res.SysPerTxnUs = -1, -1
	var phaseCPU time.Duration // 0: unknown
	if errors.Join(cpuErr, cpuErrAfter) == nil {
		sys := sysAfter - sysBefore
		phaseCPU = userAfter - userBefore + sys
		if res.Txns > 0 {
			res.CPUPerTxnUs = float64(phaseCPU.Microseconds()) / float64(res.Txns)
			res.SysPerTxnUs = float64(sys.Microseconds()) / float64(res.Txns)
		}
	}
	if profileErr != nil {
		res.Notes = append(res.Notes, profileErr.Error())
	}
	if ioErr = errors.Join(ioErr, ioErrAfter); ioErr != nil {
		res.DeviceReadPerTxn, res.DeviceWritePerTxn, res.WriteAmp = -1, -1, -1
		res.Notes = append(res.Notes, ioErr.Error())
	} else if res.Txns > 0 {
		written := ioAfter.writeBytes - ioBefore.writeBytes
		res.DeviceReadPerTxn = float64(ioAfter.readBytes-ioBefore.readBytes) / float64(res.Txns)
		res.DeviceWritePerTxn = float64(written) / float64(res.Txns)
		if res.UserWriteBytes > 0 {
			res.WriteAmp = float64(written) / float64(res.UserWriteBytes)
		}
	}
	if res.DiskBytesAfter, err = dirSize(cfg.Dir); err != nil {
		return nil, err
	}
	res.Metrics = eng.Metrics()
	if res.Metrics == nil {
		res.Metrics = map[string]float64{}
	}
	for k, v := range goMemoryMetrics() {
		res.Metrics[k] = v
	}
	gc := gcMetrics(gcBefore, gcAfter, res.Txns, phaseCPU)
	for k, v := range gc {
		res.Metrics[k] = v
	}
	if note := gcNote(gc, elapsed); note != "" {
		res.Notes = append(res.Notes, note)
	}
	if err := writeHeapProfile(spec.Engine); err != nil {
		res.Notes = append(res.Notes, err.Error())
	}

	closed = true
	if err := eng.Close(); err != nil {
		return nil, fmt.Errorf("bench: close %s: %w", spec.Engine, err)
	}
	if rss, err := peakRSS(); err != nil {
		res.Notes = append(res.Notes, err.Error())
	} else {
		res.PeakRSSBytes = rss
	}
	if p.wl.writes {
		marker.NextID = nextID.Load()
		marker.WriteRuns++
		if err := writeLoadMarker(dir, marker); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// load writes rows 0..tableSize-1 in id order, loadBatchRows per Apply,
// without per-batch sync, and returns their logical size (keys and
// values).
func load(ctx context.Context, eng Engine, ds Dataset, tableSize int64, progress func(Event)) (int64, error) {
	ops := make([]Op, 0, loadBatchRows)
	var buf []byte
	var logical int64
	ends := make([]int, 0, 2*loadBatchRows)
	for first := int64(0); first < tableSize; first += loadBatchRows {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		last := min(first+loadBatchRows, tableSize)
		// One buffer holds the whole batch; the ops point into it once it
		// has stopped growing.
		buf = buf[:0]
		ends = ends[:0]
		for id := first; id < last; id++ {
			buf = ds.AppendKey(buf, uint64(id))
			ends = append(ends, len(buf))
			buf = ds.AppendValue(buf, uint64(id), 0)
			ends = append(ends, len(buf))
		}
		ops = ops[:0]
		start := 0
		for i := 0; i < len(ends); i += 2 {
			ops = append(ops, Op{Key: buf[start:ends[i]], Value: buf[ends[i]:ends[i+1]]})
			start = ends[i+1]
		}
		apply := eng.Apply
		if la, ok := eng.(LoadApplier); ok {
			apply = func(ops []Op, _ bool) error { return la.ApplyLoad(ops) }
		}
		if err := apply(ops, false); err != nil {
			return 0, fmt.Errorf("bench: load rows %d..%d: %w", first, last-1, err)
		}
		logical += int64(len(buf))
		progress(Event{Phase: "load", Done: last, Total: tableSize})
	}
	return logical, nil
}

func newWorkers(p *plan, eng Engine, nextID *atomic.Uint64) ([]*worker, error) {
	spec := p.spec
	n := uint64(spec.TableSize)
	usesLatest := p.wl.name == "ycsb_d" || spec.Distribution == "latest"
	var zetaN float64
	if usesLatest {
		// Computed once: every worker's latest generator starts from it.
		zetaN = zeta(nextID.Load(), zipfianTheta)
	}
	workers := make([]*worker, spec.Threads)
	for i := range workers {
		rng := newRand(spec.Seed, i)
		keys, err := newKeyGen(spec.Distribution, n, rng, nextID, zetaN)
		if err != nil {
			return nil, err
		}
		w := &worker{eng: eng, ds: p.ds, rng: rng, keys: keys, nextID: nextID,
			sync: spec.Config.SyncWrites, thread: uint64(i) + 1}
		w.ckpt, _ = eng.(CheckpointWatcher)
		if usesLatest {
			w.latest = newLatest(rng, nextID, nextID.Load(), zetaN)
		}
		w.scanFn = w.scanRow
		w.batch = make([]Op, 0, maxBatchOps)
		workers[i] = w
	}
	return workers, nil
}

// runPhase runs txn on every worker until d has passed, then waits for the
// transactions in flight, and returns the time until the last finished.
// The first error stops all workers.
//
// With rate > 0 the workers are paced (RunSpec.Rate): worker i starts its
// transactions every len(workers)/rate, offset by i/rate from the others,
// up to the end of the phase, and each transaction's latency runs from
// when it was due. A worker that falls behind starts the next at once, so
// its backlog stays in the latencies until it catches up; transactions
// still due at the phase's end are not started (a stall in the phase's
// last moments counts only in the transactions it held up).
func runPhase(ctx context.Context, phase string, d time.Duration, rate float64, workers []*worker, txn func(*worker) error, progress func(Event)) (time.Duration, error) {
	var stop atomic.Bool
	halted := make(chan struct{}) // closed with stop: wakes the paced workers
	var haltOnce sync.Once
	halt := func() {
		stop.Store(true)
		haltOnce.Do(func() { close(halted) })
	}
	var wg sync.WaitGroup
	errs := make([]error, len(workers))
	start := time.Now()
	end := start.Add(d)
	var every time.Duration
	if rate > 0 {
		every = max(time.Duration(float64(len(workers))/rate*float64(time.Second)), time.Nanosecond)
	}
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var due time.Time
			var pace *time.Timer
			// epoch is the engine's checkpoint epoch when the transaction
			// began, or, for a paced worker behind schedule, when the first
			// transaction of its backlog began: the latency of a late one
			// counts from when it was due (CheckpointWatcher).
			var epoch uint64
			if w.ckpt != nil {
				epoch = w.ckpt.CheckpointEpoch()
			}
			behind := false
			if every > 0 {
				due = start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
				pace = time.NewTimer(time.Hour)
				defer pace.Stop()
			}
			for !stop.Load() {
				t0 := time.Now()
				if every > 0 {
					if !due.Before(end) {
						return // the schedule ends with the phase
					}
					wait := due.Sub(t0)
					behind = wait < 0
					if wait > 0 {
						pace.Reset(wait)
						select {
						case <-pace.C:
						case <-halted:
							return
						}
					}
					t0 = due
					due = due.Add(every)
				}
				if w.ckpt != nil && !behind {
					epoch = w.ckpt.CheckpointEpoch()
				}
				if err := txn(w); err != nil {
					errs[i] = err
					halt()
					return
				}
				w.record(time.Since(t0), epoch)
				w.txns++
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	total := d.Milliseconds()
	progress(Event{Phase: phase, Done: 0, Total: total})
	timer := time.NewTimer(d)
	defer timer.Stop()
	ticker := time.NewTicker(phaseTick)
	defer ticker.Stop()
	var ctxErr error
wait:
	for {
		select {
		case <-timer.C:
			break wait
		case <-done:
			break wait // a worker failed, or the paced workers' schedules ended
		case <-ctx.Done():
			ctxErr = ctx.Err()
			break wait
		case <-ticker.C:
			progress(Event{Phase: phase, Done: min(time.Since(start).Milliseconds(), total), Total: total})
		}
	}
	halt()
	<-done
	elapsed := time.Since(start)
	if every > 0 {
		elapsed = max(elapsed, d) // the schedule's last transaction may end before d
	}
	if err := errors.Join(errs...); err != nil {
		return elapsed, fmt.Errorf("bench: %s: %w", phase, err)
	}
	if ctxErr != nil {
		return elapsed, ctxErr
	}
	progress(Event{Phase: phase, Done: total, Total: total})
	return elapsed, nil
}

// summarize adds the workers' counters and merged latencies to res.
func summarize(res *Result, workers []*worker, elapsed time.Duration) {
	var h histogram
	var misses int64
	for _, w := range workers {
		res.Ops += w.ops
		res.Txns += w.txns
		res.UserWriteBytes += w.userWriteBytes
		misses += w.misses
		h.merge(&w.hist)
	}
	if misses > 0 {
		// Every row of the table stays (a delete is re-inserted in the
		// same batch): a read that finds none is an engine losing rows,
		// or under the latest distribution an insert still in flight.
		res.Notes = append(res.Notes, fmt.Sprintf("%d point reads found no row", misses))
	}
	res.Seconds = elapsed.Seconds()
	if res.Seconds > 0 {
		res.OpsPerSec = float64(res.Ops) / res.Seconds
		res.TxnPerSec = float64(res.Txns) / res.Seconds
	}
	res.P50us = h.quantile(0.50) / 1e3
	res.P95us = h.quantile(0.95) / 1e3
	res.P99us = h.quantile(0.99) / 1e3
	res.P999us = h.quantile(0.999) / 1e3
	res.MaxUs = float64(h.max) / 1e3
	if len(workers) == 0 || workers[0].ckpt == nil {
		return
	}
	var ckpt, rest histogram
	for _, w := range workers {
		ckpt.merge(&w.ckptHist)
		rest.merge(&w.restHist)
	}
	res.CkptTxns = int64(ckpt.total)
	res.CkptP999us = ckpt.quantile(0.999) / 1e3
	res.CkptMaxUs = float64(ckpt.max) / 1e3
	res.RestP999us = rest.quantile(0.999) / 1e3
	res.RestMaxUs = float64(rest.max) / 1e3
}

package bench

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// maxBatchOps is the largest batch a transaction builds (oltp_write_only).
const maxBatchOps = 4

// worker is one benchmark goroutine: its generators, its buffers (reused
// by every transaction, so the hot path allocates nothing of its own) and
// its counters.
type worker struct {
	eng      Engine
	ds       Dataset
	rng      *rand.Rand
	keys     keyGen         // rows of the table, by the run's distribution
	latest   keyGen         // ycsb_d's reads
	nextID   *atomic.Uint64 // shared: the next id an insert takes
	sync     bool
	thread   uint64
	versions uint64 // updates written by this worker

	getBuf []byte
	keyBuf []byte
	endBuf []byte // a bounded scan's end key
	scanFn func(k, v []byte) bool

	batch   []Op
	keyBufs [maxBatchOps][]byte
	valBufs [maxBatchOps][]byte

	// Measured-phase counters. misses are point reads that found no row.
	ops, txns, userWriteBytes, misses int64
	hist                              histogram
	// With an engine that checkpoints in the background (ckpt), hist's
	// transactions split into those that overlapped a checkpoint
	// (ckptHist) and the others (restHist).
	ckpt               CheckpointWatcher
	ckptHist, restHist histogram
}

func (w *worker) resetCounters() {
	w.ops, w.txns, w.userWriteBytes, w.misses = 0, 0, 0, 0
	w.hist.reset()
	w.ckptHist.reset()
	w.restHist.reset()
}

// record records a transaction's latency; epoch is the engine's checkpoint
// epoch when it started (w.ckpt). It overlapped a checkpoint if one ran as
// it started (odd) or one started or ended before it finished. A paced
// transaction's latency runs from when it was due, but it counts as
// overlapping only for the time it ran.
func (w *worker) record(d time.Duration, epoch uint64) {
	w.hist.record(d)
	if w.ckpt == nil {
		return
	}
	if now := w.ckpt.CheckpointEpoch(); now != epoch || epoch&1 == 1 {
		w.ckptHist.record(d)
	} else {
		w.restHist.record(d)
	}
}

func (w *worker) get(id uint64) error {
	w.keyBuf = w.ds.AppendKey(w.keyBuf[:0], id)
	v, found, err := w.eng.Get(w.keyBuf, w.getBuf[:0])
	if err != nil {
		return fmt.Errorf("bench: get %d: %w", id, err)
	}
	if !found {
		w.misses++
	}
	w.getBuf = v
	w.ops++
	return nil
}

// scan reads up to n rows from row id on; bounded scans (sysbench's
// BETWEEN id AND id+n-1) end before row id+n, the others (YCSB's) only by
// their count.
func (w *worker) scan(id uint64, n int, bounded bool) error {
	w.keyBuf = w.ds.AppendKey(w.keyBuf[:0], id)
	var end []byte
	if bounded {
		w.endBuf = w.ds.AppendKey(w.endBuf[:0], id+uint64(n))
		end = w.endBuf
	}
	if err := w.eng.Scan(w.keyBuf, end, n, w.scanFn); err != nil {
		return fmt.Errorf("bench: scan %d rows from %d: %w", n, id, err)
	}
	w.ops++
	return nil
}

// scanRow consumes a scanned row the way a query would, touching its
// value, so that engines returning lazily loaded values pay for them.
func (w *worker) scanRow(k, v []byte) bool {
	if len(v) > 0 {
		w.getBuf = append(w.getBuf[:0], v[0], v[len(v)-1])
	}
	return true
}

// newVersion returns a version number no other worker uses and that is
// never 0 (the loaded version).
func (w *worker) newVersion() uint64 {
	w.versions++
	return w.thread<<40 | w.versions
}

func (w *worker) resetBatch() { w.batch = w.batch[:0] }

func (w *worker) addSet(id uint64) {
	i := len(w.batch)
	w.keyBufs[i] = w.ds.AppendKey(w.keyBufs[i][:0], id)
	w.valBufs[i] = w.ds.AppendValue(w.valBufs[i][:0], id, w.newVersion())
	w.batch = append(w.batch, Op{Key: w.keyBufs[i], Value: w.valBufs[i]})
	w.userWriteBytes += int64(len(w.keyBufs[i]) + len(w.valBufs[i]))
}

func (w *worker) addDelete(id uint64) {
	i := len(w.batch)
	w.keyBufs[i] = w.ds.AppendKey(w.keyBufs[i][:0], id)
	w.batch = append(w.batch, Op{Key: w.keyBufs[i], Delete: true})
	w.userWriteBytes += int64(len(w.keyBufs[i]))
}

func (w *worker) apply() error {
	if err := w.eng.Apply(w.batch, w.sync); err != nil {
		return fmt.Errorf("bench: apply %d writes: %w", len(w.batch), err)
	}
	w.ops += int64(len(w.batch))
	return nil
}

// update rewrites row id with a new value.
func (w *worker) update(id uint64) error {
	w.resetBatch()
	w.addSet(id)
	return w.apply()
}

// insert writes a row with a new id above every id written before: ids
// come from one atomic counter, so each is inserted exactly once whatever
// the thread.
func (w *worker) insert() error {
	id := w.nextID.Add(1) - 1
	w.resetBatch()
	i := 0
	w.keyBufs[i] = w.ds.AppendKey(w.keyBufs[i][:0], id)
	w.valBufs[i] = w.ds.AppendValue(w.valBufs[i][:0], id, 0)
	w.batch = append(w.batch, Op{Key: w.keyBufs[i], Value: w.valBufs[i]})
	w.userWriteBytes += int64(len(w.keyBufs[i]) + len(w.valBufs[i]))
	return w.apply()
}

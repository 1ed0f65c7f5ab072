package bench

import (
	"fmt"
	"sort"
)

// Workloads map sysbench's OLTP scripts and YCSB's core workloads onto the
// Engine interface. A table of TableSize rows with keys 0..TableSize-1
// (8-byte big-endian) stands for sysbench's sbtest1 (ids there start at 1)
// and for YCSB's usertable (whose keys are ordered, as with
// insertorder=ordered).
//
// Sysbench statements become:
//
//	point select (SELECT c WHERE id=?)                  1 Get
//	simple/sum/order/distinct range (BETWEEN ? AND ?+99) 1 Scan of rows [?, ?+100)
//	index update (SET k=k+1), non-index update (SET c=?) 1 Set of the row's new value
//	delete + insert of one id                            1 Delete + 1 Set
//
// so oltp_read_only is 10 Gets + 4 Scans (14 ops), oltp_write_only one
// atomic Apply of 4 writes (2 Sets, Delete, Set of the deleted id: 4 ops,
// ids drawn independently as sysbench does), oltp_read_write both (18 ops),
// oltp_insert one Apply of one Set with a new id above the table,
// oltp_update_non_index one Apply of one Set of an existing row. A
// key-value store has no secondary index on k, so the two updates cost the
// same here, unlike in a SQL database.
//
// YCSB operations are one transaction each: read = Get, update = Set of a
// full new value, insert = Set of a new id, scan = Scan of 1..100 rows
// (uniform length), read-modify-write = Get then Set (2 ops, not atomic, as
// in YCSB). Result.Ops counts engine calls (a Scan is one op, an Apply
// counts its writes), Result.Txns transactions.
type workload struct {
	name string
	txn  func(w *worker) error
	// defaultDist is the distribution used when RunSpec.Distribution is
	// empty: sysbench's uniform, YCSB's zipfian.
	defaultDist string
	// writes is set when the workload modifies the table (a reused table
	// is then no longer as loaded; the load marker says so).
	writes bool
}

var workloads = map[string]workload{
	"oltp_point_select":     {txn: txnPointSelect, defaultDist: "uniform"},
	"oltp_read_only":        {txn: txnReadOnly, defaultDist: "uniform"},
	"oltp_read_write":       {txn: txnReadWrite, defaultDist: "uniform", writes: true},
	"oltp_write_only":       {txn: txnWriteOnly, defaultDist: "uniform", writes: true},
	"oltp_insert":           {txn: txnInsert, defaultDist: "uniform", writes: true},
	"oltp_update_non_index": {txn: txnUpdateNonIndex, defaultDist: "uniform", writes: true},
	"ycsb_a":                {txn: ycsbReadUpdate(50), defaultDist: "zipfian", writes: true},
	"ycsb_b":                {txn: ycsbReadUpdate(95), defaultDist: "zipfian", writes: true},
	"ycsb_c":                {txn: ycsbReadUpdate(100), defaultDist: "zipfian"},
	"ycsb_d":                {txn: txnYCSBD, defaultDist: "latest", writes: true},
	"ycsb_e":                {txn: txnYCSBE, defaultDist: "zipfian", writes: true},
	"ycsb_f":                {txn: txnYCSBF, defaultDist: "zipfian", writes: true},
}

// Workloads lists the workload names, sorted.
func Workloads() []string {
	names := make([]string, 0, len(workloads))
	for n := range workloads {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// WorkloadWrites reports whether workload name modifies the table (false
// for an unknown name).
func WorkloadWrites(name string) bool { return workloads[name].writes }

func lookupWorkload(name string) (workload, error) {
	wl, ok := workloads[name]
	if !ok {
		return workload{}, fmt.Errorf("bench: unknown workload %q (known: %v)", name, Workloads())
	}
	wl.name = name
	return wl, nil
}

const (
	oltpPointSelects = 10
	oltpRanges       = 4 // simple, sum, order and distinct ranges
	oltpRangeSize    = 100
	ycsbMaxScan      = 100
)

func txnPointSelect(w *worker) error {
	return w.get(w.keys.Next())
}

func oltpReads(w *worker) error {
	for range oltpPointSelects {
		if err := w.get(w.keys.Next()); err != nil {
			return err
		}
	}
	for range oltpRanges {
		if err := w.scan(w.keys.Next(), oltpRangeSize, true); err != nil {
			return err
		}
	}
	return nil
}

func txnReadOnly(w *worker) error { return oltpReads(w) }

func oltpWrites(w *worker) error {
	w.resetBatch()
	w.addSet(w.keys.Next()) // index update
	w.addSet(w.keys.Next()) // non-index update
	id := w.keys.Next()
	w.addDelete(id)
	w.addSet(id) // re-insert of the deleted row
	return w.apply()
}

func txnWriteOnly(w *worker) error { return oltpWrites(w) }

func txnReadWrite(w *worker) error {
	if err := oltpReads(w); err != nil {
		return err
	}
	return oltpWrites(w)
}

func txnInsert(w *worker) error { return w.insert() }

// txnUpdateNonIndex is sysbench's oltp_update_non_index: one update of a
// row by its primary key (UPDATE ... SET c=? WHERE id=?), one Apply of
// one Set.
func txnUpdateNonIndex(w *worker) error {
	w.resetBatch()
	w.addSet(w.keys.Next())
	return w.apply()
}

// ycsbReadUpdate is workloads A, B and C: readPct% reads, the rest updates.
func ycsbReadUpdate(readPct uint32) func(w *worker) error {
	return func(w *worker) error {
		id := w.keys.Next()
		if readPct == 100 || w.rng.Uint32N(100) < readPct {
			return w.get(id)
		}
		return w.update(id)
	}
}

// txnYCSBD: 95% reads of recent rows, 5% inserts. Reads always use the
// latest distribution, whatever RunSpec.Distribution says: that is what
// workload D is.
func txnYCSBD(w *worker) error {
	if w.rng.Uint32N(100) < 95 {
		return w.get(w.latest.Next())
	}
	return w.insert()
}

// txnYCSBE: 95% short scans from a row of the distribution, 5% inserts.
func txnYCSBE(w *worker) error {
	if w.rng.Uint32N(100) < 95 {
		return w.scan(w.keys.Next(), 1+int(w.rng.Uint32N(ycsbMaxScan)), false)
	}
	return w.insert()
}

// txnYCSBF: 50% reads, 50% read-modify-write.
func txnYCSBF(w *worker) error {
	id := w.keys.Next()
	if err := w.get(id); err != nil {
		return err
	}
	if w.rng.Uint32N(2) == 0 {
		return nil
	}
	return w.update(id)
}

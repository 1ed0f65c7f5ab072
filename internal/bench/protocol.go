package bench

import "time"

// The parent (`strata bench`) runs each engine in its own child process so
// that memory limits apply to one engine at a time. The child is
// strata-bench-child (engine "strata"; the strata binary itself, `strata
// bench-child`, where that is missing) or a peer's binary built from the
// bench/ module (`strata-bench-bbolt bench-child`, and -pebble, -badger),
// which links that engine alone. All call RunChild.
//
// Protocol: the parent writes one RunSpec as JSON on the child's stdin. The
// child writes JSON lines (Event) on its stdout: progress events while it
// loads and runs, then exactly one event with Result set (or Error set).
// Its stderr is free text for diagnostics and is passed through.

// ChildCommand is the argument that makes a binary act as a bench child.
const ChildCommand = "bench-child"

// RunSpec is everything a child needs to run one engine on one workload.
type RunSpec struct {
	Engine string `json:"engine"`
	Config Config `json:"config"`

	// Workload is a name from Workloads ("oltp_point_select", "ycsb_a", ...).
	Workload string `json:"workload"`
	// Dataset is "sysbench" or "events"; Distribution is "uniform",
	// "special", "zipfian" or "pareto".
	Dataset      string `json:"dataset"`
	Distribution string `json:"distribution"`
	// TableSize is the number of rows loaded; Seed makes data and request
	// streams deterministic.
	TableSize int64  `json:"table_size"`
	Seed      uint64 `json:"seed"`

	Threads  int           `json:"threads"`
	Duration time.Duration `json:"duration_ns"`
	Warmup   time.Duration `json:"warmup_ns"`
	// Rate, if positive, paces the workers to this many transactions a
	// second in all (an open loop: each worker starts its transactions
	// Threads/Rate apart), and a transaction's latency runs from when it
	// was due, not from when its worker got to it, so an engine that
	// falls behind shows it in its latencies (no coordinated omission).
	// Zero: each worker starts its next transaction as soon as the last
	// ends (a closed loop: the most the engine serves).
	Rate float64 `json:"rate,omitempty"`

	// Reuse skips the load when Config.Dir already holds this data set
	// (written by an earlier child with the same Dataset, TableSize, Seed
	// and engine options); the parent uses it in sweeps.
	Reuse bool `json:"reuse,omitempty"`
	// DropCaches asks the child to drop the OS page cache between load and
	// run (the parent sets it when it may: root, /proc/sys/vm writable).
	DropCaches bool `json:"drop_caches,omitempty"`
}

// Event is one line of a child's output.
type Event struct {
	// Phase is "load", "warmup" or "run"; Done and Total count rows
	// (load) or elapsed milliseconds (warmup, run).
	Phase  string  `json:"phase,omitempty"`
	Done   int64   `json:"done,omitempty"`
	Total  int64   `json:"total,omitempty"`
	Result *Result `json:"result,omitempty"`
	Error  string  `json:"error,omitempty"`
}

// Result is one engine's measurement on one workload.
type Result struct {
	Spec     RunSpec `json:"spec"`
	Describe string  `json:"describe"` // the engine's effective configuration

	LoadSeconds float64 `json:"load_seconds"`
	// Ops counts operations (point reads, scans, writes) and Txns
	// transactions (an OLTP transaction or a YCSB operation) in the
	// measured phase.
	Ops       int64   `json:"ops"`
	Txns      int64   `json:"txns"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_sec"`
	TxnPerSec float64 `json:"txn_per_sec"`
	// Transaction latency percentiles, microseconds.
	P50us float64 `json:"p50_us"`
	P95us float64 `json:"p95_us"`
	P99us float64 `json:"p99_us"`
	// P999us and MaxUs: the 99.9th percentile and the slowest transaction
	// (a writer stalled by a checkpoint shows here).
	P999us float64 `json:"p999_us"`
	MaxUs  float64 `json:"max_us"`
	// With an engine that checkpoints in the background (Strata), the
	// same for the CkptTxns transactions that overlapped a checkpoint and
	// for the rest: a stall that only the first show is a checkpoint's.
	CkptTxns   int64   `json:"ckpt_txns,omitempty"`
	CkptP999us float64 `json:"ckpt_p999_us,omitempty"`
	CkptMaxUs  float64 `json:"ckpt_max_us,omitempty"`
	RestP999us float64 `json:"rest_p999_us,omitempty"`
	RestMaxUs  float64 `json:"rest_max_us,omitempty"`

	// LogicalBytes is the size of the loaded keys and values; DiskBytes
	// the engine directory's size after the load (and a Flush).
	LogicalBytes int64 `json:"logical_bytes"`
	DiskBytes    int64 `json:"disk_bytes"`
	// DiskBytesAfter is the directory's size at the end of the measured
	// phase, before the engine closes: what a writing workload grew (or
	// shrank) it to.
	DiskBytesAfter int64 `json:"disk_bytes_after"`
	// Device I/O of the child process in the measured phase
	// (/proc/self/io read_bytes/write_bytes), per transaction, and the
	// bytes the workload asked to write, for write amplification.
	DeviceReadPerTxn  float64 `json:"device_read_per_txn"`
	DeviceWritePerTxn float64 `json:"device_write_per_txn"`
	UserWriteBytes    int64   `json:"user_write_bytes"`
	WriteAmp          float64 `json:"write_amp"`
	// CPUPerTxnUs and SysPerTxnUs are the child process's CPU time (user
	// and system together, and system alone) in the measured phase per
	// transaction, in µs: where the host's cores, not the device, bound
	// throughput, this is what an engine spends per transaction (the
	// client's own work included; -1: unknown).
	CPUPerTxnUs  float64 `json:"cpu_per_txn_us"`
	SysPerTxnUs  float64 `json:"sys_per_txn_us"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`

	// Metrics are the engine's own counters at the end of the run.
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// Environment: memory limit applied (0: none), GOMEMLIMIT, read-ahead
	// of the data directory's device (KiB, -1 unknown), whether the page
	// cache was dropped, and notes (e.g. "no cgroup: peers may use the OS
	// page cache beyond their budget", "simulated device: nvme").
	// Binary is the child's executable and Build the revision it was built
	// from (BuildOf; empty: unknown), so that a result says what code
	// produced it.
	Binary        string   `json:"binary,omitempty"`
	Build         string   `json:"build,omitempty"`
	MemLimitBytes int64    `json:"mem_limit_bytes"`
	GoMemLimit    int64    `json:"go_mem_limit"`
	ReadAheadKB   int      `json:"read_ahead_kb"`
	CachesDropped bool     `json:"caches_dropped"`
	Notes         []string `json:"notes,omitempty"`

	// GoMemLimitRun is GOMEMLIMIT at the end of the measured phase, as the
	// engine left it (Strata raises it by the parts of its cache held on
	// the Go heap); 0: unknown.
	GoMemLimitRun int64 `json:"go_mem_limit_run,omitempty"`
}

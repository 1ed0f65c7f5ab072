package main

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/stratadb/strata/internal/bench"
	"github.com/stratadb/strata/internal/bench/hostenv"
)

func newBenchCommand() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark Strata against bbolt, Pebble and Badger under equal memory",
		Long: `bench loads a data set into each engine and runs a workload on it, each
engine in its own child process with the same cache budget, the same memory
limit (a cgroup, which charges the OS page cache the process fills too, when
the host has a writable memory controller) and a GOMEMLIMIT of 80% of that
limit (Strata's cache lives off the Go heap: its GOMEMLIMIT is 80% of what
the limit leaves beyond the cache, raised by the parts of the cache held
on the Go heap, the buffer pool's metadata and a compression dictionary's
codec state; see docs/ARCHITECTURE.md), the OS
page cache dropped between load and run when permitted (root). It prints a
table per workload: throughput, latency percentiles, load time, size on
disk, device I/O per transaction, write amplification and peak memory.

Without flags it runs a one-minute default: Strata alone, oltp_read_only on
sysbench rows about four times the cache, uniform keys, automatic R.
bbolt, Pebble and Badger run in strata-bench-bbolt, strata-bench-pebble
and strata-bench-badger, each linking its engine alone, built from the
bench/ module of a Strata checkout (see --peers-dir).`,
		Example: `  strata bench
  strata bench --engines all --workload oltp_read_only,oltp_read_write --cache 256MiB --table-size 10000000
  strata bench --device nvme --codec lz4 --json results.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fl := cmd.Flags()
	f.registerRunFlags(fl)
	fl.StringVar(&f.engines, "engines", "strata", "engines, comma-separated: strata, bbolt, pebble, badger, or all")
	fl.StringVar(&f.workloads, "workload", defaultWorkload, "workloads, comma-separated, each run on every engine: "+workloadList())
	fl.StringVar(&f.jsonPath, "json", "", "also write all results and the host description to this JSON file")
	cmd.AddCommand(newBenchSweepCommand())
	return cmd
}

func runBench(ctx context.Context, stdout, stderr io.Writer, f benchFlags) error {
	tmpl, err := f.specTemplate()
	if err != nil {
		return err
	}
	engines, err := parseEngines(f.engines)
	if err != nil {
		return fmt.Errorf("--engines: %w", err)
	}
	workloads, err := parseWorkloads(f.workloads)
	if err != nil {
		return fmt.Errorf("--workload: %w", err)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := newBenchRunner(stderr, f)
	if err != nil {
		return err
	}
	defer r.close()

	dist := tmpl.Distribution
	if dist == "" {
		dist = "the workload's default"
	}
	paced := ""
	if tmpl.Rate > 0 {
		paced = fmt.Sprintf(" paced at %g txn/s,", tmpl.Rate)
	}
	fmt.Fprintf(stderr, "strata bench: %s, %d rows, %s keys, cache %s, %d threads,%s %v warm-up + %v; work directory %s\n",
		tmpl.Dataset, tmpl.TableSize, dist, formatSize(tmpl.Config.CacheBytes), tmpl.Threads, paced, tmpl.Warmup, tmpl.Duration, r.workDir)
	var outcomes []runOutcome
	for _, w := range workloads {
		for _, e := range engines {
			spec := tmpl
			spec.Engine, spec.Workload = e, w
			res, err := r.runReusing(ctx, spec)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				fmt.Fprintf(stderr, "%s %s: %v\n", e, w, err)
			}
			outcomes = append(outcomes, runOutcome{Engine: e, Workload: w, Result: res, Err: err})
		}
	}
	for _, w := range workloads {
		if err := writeWorkloadTable(stdout, w, outcomesOf(outcomes, w)); err != nil {
			return err
		}
	}
	if f.jsonPath != "" {
		if err := writeReport(f.jsonPath, outcomes); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "results written to %s\n", f.jsonPath)
	}
	if n := len(failures(outcomes)); n > 0 {
		return fmt.Errorf("%d of %d runs failed (see above)", n, len(outcomes))
	}
	return nil
}

// runOutcome is one engine × workload: a result or why there is none.
type runOutcome struct {
	Engine, Workload string
	Result           *bench.Result
	Err              error
}

func outcomesOf(all []runOutcome, workload string) []runOutcome {
	var out []runOutcome
	for _, o := range all {
		if o.Workload == workload {
			out = append(out, o)
		}
	}
	return out
}

func failures(outcomes []runOutcome) []runOutcome {
	var failed []runOutcome
	for _, o := range outcomes {
		if o.Err != nil {
			failed = append(failed, o)
		}
	}
	return failed
}

// benchRunner runs children in fresh directories under a work directory,
// with the host environment (limits, cache dropping) applied.
type benchRunner struct {
	stderr     io.Writer
	workDir    string
	removeWork bool // the work directory is ours
	keep       bool
	memLimit   int64 // --mem-limit: 0 the default rule, -1 none
	dropCaches bool
	exe        string // the running strata binary
	build      string // the revision it was built from (bench.BuildOf)
	strata     binLocator
	strataBin  string              // located on first use
	strataNote string              // said in every Strata result when it is not strata-bench-child
	peersDir   string              // --peers-dir
	peers      map[string]*peerBin // by engine, made on first use
	view       progressView
	children   int
	tempDirs   []string // removed by close
	engineDirs []string // engines' data directories, removed by close
}

func newBenchRunner(stderr io.Writer, f benchFlags) (*benchRunner, error) {
	memLimit, err := f.memLimitBytes()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locate the strata binary for its bench child: %w", err)
	}
	r := &benchRunner{
		stderr:     stderr,
		keep:       f.keep,
		memLimit:   memLimit,
		dropCaches: hostenv.CanDropCaches(),
		exe:        exe,
		build:      bench.OwnBuild(),
		strata:     newChildLocator(f.strataBin, stderr),
		peersDir:   f.peersDir,
		peers:      map[string]*peerBin{},
		view:       newProgressView(stderr),
	}
	if f.peersBin != "" {
		return nil, fmt.Errorf("--peers-bin: strata-bench-peers is gone: each peer runs in a binary of its own (%s, %s, %s), found in --peers-dir", peerBinName("bbolt"), peerBinName("pebble"), peerBinName("badger"))
	}
	r.trackBuilds(&r.strata)
	if f.dir == "" {
		// Not os.TempDir: /tmp is often a tmpfs, where O_DIRECT fails and
		// "disk" reads are memory reads.
		d, err := os.MkdirTemp(".", "strata-bench-")
		if err != nil {
			return nil, fmt.Errorf("create a work directory: %w", err)
		}
		r.workDir, r.removeWork = d, !f.keep
	} else {
		if err := os.MkdirAll(f.dir, 0o755); err != nil {
			return nil, fmt.Errorf("--dir: %w", err)
		}
		r.workDir = f.dir
	}
	return r, nil
}

func (r *benchRunner) close() {
	if r.removeWork {
		os.RemoveAll(r.workDir)
	}
	for _, d := range r.tempDirs {
		os.RemoveAll(d)
	}
	// An engine directory that existed before the run and was not strata
	// bench's (the child refused it) is someone's data: only directories
	// the children marked as theirs, or left empty, are removed.
	for _, d := range r.engineDirs {
		if bench.OwnsDir(d) {
			os.RemoveAll(d)
		} else {
			os.Remove(d)
		}
	}
}

// runReusing runs spec in the engine's directory under the work
// directory. The data loaded there by an earlier workload (of this run, or
// of an earlier run kept with --keep in the same --dir) is reused when it
// is the same data set with the same storage options; otherwise the child
// reloads it. Workloads run in the order given, so a writing workload's
// changes are seen by the ones after it (the results say so in a note).
// The directories are removed by close unless --keep.
func (r *benchRunner) runReusing(ctx context.Context, spec bench.RunSpec) (*bench.Result, error) {
	dir := filepath.Join(r.workDir, spec.Engine)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	if !r.keep && !slices.Contains(r.engineDirs, dir) {
		r.engineDirs = append(r.engineDirs, dir)
	}
	spec.Config.Dir, spec.Reuse = dir, true
	return r.run(ctx, spec)
}

// run runs spec (whose Config.Dir is set) in a child process.
func (r *benchRunner) run(ctx context.Context, spec bench.RunSpec) (*bench.Result, error) {
	bin, err := r.binFor(spec.Engine)
	if err != nil {
		return nil, err
	}
	spec.DropCaches = r.dropCaches
	var limits childLimits
	switch {
	case r.memLimit > 0:
		limits.MemLimit = r.memLimit
	case r.memLimit == 0:
		limits.MemLimit = defaultMemLimit(spec.Config.CacheBytes)
	}
	limits.GoMemLimit = childGoMemLimit(spec.Engine, limits.MemLimit, spec.Config.CacheBytes)
	r.children++
	c := &childProcess{
		bin: bin, spec: spec, limits: limits, view: r.view, stderr: r.stderr,
		cgroupID: fmt.Sprintf("strata-bench-%d-%d-%s", os.Getpid(), r.children, spec.Engine),
		binNote:  r.binNote(spec.Engine),
		label:    spec.Engine + " " + spec.Workload,
	}
	return c.run(ctx)
}

// buildOfFile names the revision the binary at path was built from
// (bench.BuildOf; empty: unknown).
func buildOfFile(path string) string {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return ""
	}
	return bench.BuildOf(info)
}

// trackBuilds makes the directories l builds into temporary ones that
// close removes.
func (r *benchRunner) trackBuilds(l *binLocator) {
	name := l.name
	l.buildDir = func() (string, error) {
		d, err := os.MkdirTemp("", name+"-")
		if err == nil {
			r.tempDirs = append(r.tempDirs, d)
		}
		return d, err
	}
}

// binNote is the note a result of engine carries about its binary.
func (r *benchRunner) binNote(engine string) string {
	if peerEngines[engine] {
		if pb := r.peers[engine]; pb != nil {
			return pb.note
		}
		return ""
	}
	return r.strataNote
}

// staleBuildNote is the note for a child binary at path built from another
// revision than strata, or "" when it is not (or either is unknown).
func (r *benchRunner) staleBuildNote(path string) string {
	if child := buildOfFile(path); child != "" && r.build != "" && child != r.build {
		return fmt.Sprintf("%s was built from %s, strata from %s: the results are the child's code", path, child, r.build)
	}
	return ""
}

// binFor returns the binary that runs engine's child: strata-bench-child
// for Strata (else, with a note, the strata binary itself; a named
// --strata-bin must exist), strata-bench-<engine> for a peer.
func (r *benchRunner) binFor(engine string) (string, error) {
	if !peerEngines[engine] {
		if r.strataBin == "" {
			p, err := r.strata.locate()
			switch {
			case err == nil:
				r.strataBin = p
				if r.strataNote = r.staleBuildNote(p); r.strataNote != "" {
					fmt.Fprintln(r.stderr, "note:", r.strataNote)
				}
			case r.strata.flag != "":
				return "", err
			default:
				r.strataBin = r.exe
				r.strataNote = "Strata ran in the strata binary, whose other code adds about 12 MiB to the process's resident size (" + err.Error() + ")"
				fmt.Fprintln(r.stderr, "note:", r.strataNote)
			}
		}
		return r.strataBin, nil
	}
	pb, ok := r.peers[engine]
	if !ok {
		pb = &peerBin{locator: newPeerLocator(engine, r.peersDir, r.stderr)}
		r.trackBuilds(&pb.locator)
		r.peers[engine] = pb
	}
	if pb.path != "" {
		return pb.path, nil
	}
	p, err := pb.locator.locate()
	if err != nil {
		return "", err
	}
	pb.path = p
	// The peers' harness (internal/bench: the workloads, the timing) is
	// compiled into their binaries too.
	if pb.note = r.staleBuildNote(p); pb.note != "" {
		fmt.Fprintln(r.stderr, "note:", pb.note)
	}
	return p, nil
}

// peerBin is a peer engine's child binary: how it is found, where it was
// found (on first use) and what its results say about it.
type peerBin struct {
	locator binLocator
	path    string // located on first use
	note    string // said in its results: a build other than strata's
}

package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stratadb/strata/internal/bench"
	"github.com/stratadb/strata/internal/bench/hostenv"
)

// noCgroupNote is the note of results measured without a memory limit.
const noCgroupNote = "no writable cgroup memory controller: peers could use the OS page cache beyond their budget"

// childLimits is the memory a child may use: MemLimit for the cgroup (which
// also charges the page cache the child fills), GoMemLimit for the Go
// runtime's soft limit, the same fraction of it for every engine.
type childLimits struct {
	MemLimit   int64
	GoMemLimit int64
}

// A child that stops reporting is killed, so that an engine stuck in a
// call (a peer spinning in a read after its measured phase: its workers
// never returned and the sweep waited for good) fails its run instead of
// hanging the benchmark: childStall after its last event, or
// childPhaseGrace after a timed phase (warm-up, run) should have ended,
// whichever comes first. Loads report every batch; the silences between
// phases (a checkpoint, a reopen) are far shorter than childStall.
const (
	childStall      = 10 * time.Minute
	childPhaseGrace = 2 * time.Minute
)

// childProcess runs one RunSpec in a child process and returns its Result,
// annotated with the environment the parent gave it.
type childProcess struct {
	bin      string // strata-bench-child, strata or strata-bench-<peer>
	binNote  string // a note on the binary for the result, if any
	spec     bench.RunSpec
	limits   childLimits
	cgroupID string // unique name for the child's cgroup
	label    string // "engine workload", for progress
	view     progressView
	stderr   io.Writer // the child's diagnostics go there, prefixed
	// stall and phaseGrace replace childStall and childPhaseGrace when
	// set (tests).
	stall, phaseGrace time.Duration
}

func (c *childProcess) run(ctx context.Context) (*bench.Result, error) {
	cmd := exec.CommandContext(ctx, c.bin, bench.ChildCommand)
	// On Ctrl-C the child gets SIGTERM, closes its engine and reports;
	// only a child that does not exit within the grace period is killed.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	if c.limits.GoMemLimit > 0 {
		cmd.Env = append(withoutEnv(os.Environ(), "GOMEMLIMIT"), "GOMEMLIMIT="+strconv.FormatInt(c.limits.GoMemLimit, 10))
	}
	diag := newPrefixWriter(c.stderr, "["+c.spec.Engine+"] ", c.view.clearLine)
	defer diag.Flush()
	cmd.Stderr = diag
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}

	group, notes := c.limitMemory()
	if group != nil {
		defer group.Close()
	}

	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s %s: %w", c.bin, bench.ChildCommand, err)
	}
	// The child reads its spec only after this, so nothing it does for the
	// run happens outside the cgroup.
	if group != nil {
		if err := group.Add(cmd.Process.Pid); err != nil {
			notes = append(notes, err.Error(), noCgroupNote)
			group.Close()
			group = nil
		}
	}
	specJSON, err := json.Marshal(c.spec)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, err
	}
	// A child that dies early closes its stdin: the write error is not the
	// interesting one, the exit status below is.
	stdin.Write(append(specJSON, '\n'))
	stdin.Close()

	// The watchdog stays armed until the child has exited: one that hangs
	// after its result (closing its engine) is killed too.
	w := c.newWatchdog(cmd.Process)
	res, childErr, readErr := c.readEvents(stdout, w)
	waitErr := cmd.Wait()
	w.stop()
	c.view.finish()

	switch {
	case childErr != "":
		return nil, errors.New(childErr)
	case res == nil && w.killed() != "":
		return nil, fmt.Errorf("child killed: %s", w.killed())
	case res == nil:
		why := "ended without a result"
		if waitErr != nil {
			why = waitErr.Error()
		} else if readErr != nil {
			why = readErr.Error()
		}
		return nil, fmt.Errorf("child %s%s", why, c.oomHint(group, waitErr))
	case res.Spec.Rate != c.spec.Rate:
		// The child echoes the spec it ran; one built before --rate
		// ignores the field and runs a closed loop.
		return nil, fmt.Errorf("child %s ran at rate %g, not the %g asked for: rebuild it with this strata (a build before --rate)", cmd.Path, res.Spec.Rate, c.spec.Rate)
	}
	if why := w.killed(); why != "" {
		notes = append(notes, fmt.Sprintf("child killed after its result: %s", why))
	} else if waitErr != nil {
		notes = append(notes, fmt.Sprintf("child exit after its result: %v", waitErr))
	}
	c.annotate(res, group, notes)
	return res, nil
}

// limitMemory creates the child's cgroup, or says why there is none.
func (c *childProcess) limitMemory() (*hostenv.Group, []string) {
	if c.limits.MemLimit <= 0 {
		return nil, []string{"no memory limit (--mem-limit none)"}
	}
	group, err := hostenv.Limit(c.cgroupID, c.limits.MemLimit)
	switch {
	case errors.Is(err, hostenv.ErrNoMemoryController):
		return nil, []string{noCgroupNote}
	case err != nil:
		return nil, []string{fmt.Sprintf("cgroup: %v", err), noCgroupNote}
	}
	return group, nil
}

// readEvents passes progress to the view until the final event. Lines that
// are not events (a stray print in a library) go to the diagnostics.
// Each line tells the watchdog w that the child is alive.
func (c *childProcess) readEvents(stdout io.Reader, w *watchdog) (res *bench.Result, childErr string, err error) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var ev bench.Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			w.alive(bench.Event{})
			fmt.Fprintf(c.stderr, "[%s stdout] %s\n", c.spec.Engine, sc.Text())
			continue
		}
		w.alive(ev)
		switch {
		case ev.Error != "":
			childErr = ev.Error
		case ev.Result != nil:
			res = ev.Result
		case ev.Phase != "":
			c.view.event(c.label, ev)
		}
	}
	// Drain nothing more: the child exits after its final event.
	return res, childErr, sc.Err()
}

// oomHint explains a child killed by SIGKILL when the cgroup saw an OOM
// kill: the usual reason is an engine that does not keep to its budget.
func (c *childProcess) oomHint(group *hostenv.Group, waitErr error) string {
	var exit *exec.ExitError
	if group == nil || !errors.As(waitErr, &exit) {
		return ""
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		return ""
	}
	if n, ok := group.OOMKills(); ok && n > 0 {
		return fmt.Sprintf(" (killed by the OOM killer: over the memory limit of %s; raise --mem-limit or lower --cache)", formatSize(c.limits.MemLimit))
	}
	return ""
}

// annotate records the environment in the result: the limits, what the
// cgroup saw, the read-ahead, and the notes.
func (c *childProcess) annotate(res *bench.Result, group *hostenv.Group, notes []string) {
	res.GoMemLimit = c.limits.GoMemLimit
	res.ReadAheadKB = hostenv.ReadAheadKB(c.spec.Config.Dir)
	goLimit := formatSize(c.limits.GoMemLimit)
	if res.GoMemLimitRun > c.limits.GoMemLimit && c.limits.GoMemLimit > 0 {
		goLimit += fmt.Sprintf(" (%s at the end of the run: raised by the engine)", formatSize(res.GoMemLimitRun))
	}
	if group != nil {
		res.MemLimitBytes = group.Bytes
		swap := "swap limited too"
		if !group.SwapLimited {
			swap = "swap not limited"
		}
		notes = append(notes, fmt.Sprintf("memory limit %s (cgroup v%d, %s; page cache included), GOMEMLIMIT %s",
			formatSize(group.Bytes), group.Version, swap, goLimit))
		if peak, ok := group.Peak(); ok {
			if res.Metrics == nil {
				res.Metrics = map[string]float64{}
			}
			res.Metrics[cgroupPeakMetric] = float64(peak)
		}
	} else if c.limits.GoMemLimit > 0 {
		notes = append(notes, fmt.Sprintf("GOMEMLIMIT %s", goLimit))
	}
	if d := c.spec.Config.Device; d != "" && d != "none" {
		if c.spec.Engine == "strata" {
			notes = append(notes, "simulated device: "+d+" (injected latency; Strata only)")
		} else {
			notes = append(notes, "simulated device "+d+" not applied: Strata only")
		}
	}
	if c.binNote != "" {
		notes = append(notes, c.binNote)
	}
	res.Notes = append(res.Notes, notes...)
}

// cgroupPeakMetric is the Metrics key of the child cgroup's peak memory
// (page cache included), added by the parent.
const cgroupPeakMetric = "cgroup_peak_bytes"

func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// watchdog kills a child that stops reporting (see childStall). Its
// methods are called from run's goroutine; the kill runs on a timer's.
type watchdog struct {
	proc              *os.Process
	stall, phaseGrace time.Duration
	timer             *time.Timer
	phase             string    // the timed phase under way, if any
	phaseEnd          time.Time // when it should have ended, grace included
	mu                sync.Mutex
	reason            string // why the child was killed; empty while it was not
}

func (c *childProcess) newWatchdog(proc *os.Process) *watchdog {
	w := &watchdog{proc: proc, stall: cmp.Or(c.stall, childStall), phaseGrace: cmp.Or(c.phaseGrace, childPhaseGrace)}
	w.timer = time.AfterFunc(w.stall, func() { w.kill(fmt.Sprintf("no report for %v", w.stall)) })
	return w
}

// alive rearms the timer after event ev: childStall from now, or less if a
// timed phase should have ended by then.
func (w *watchdog) alive(ev bench.Event) {
	now := time.Now()
	switch {
	case ev.Result != nil || ev.Error != "":
		w.phase = ""
	case (ev.Phase == "warmup" || ev.Phase == "run") && ev.Done >= ev.Total:
		// The phase is over (its workers have returned): what follows
		// (metrics, closing the engine) has childStall.
		w.phase = ""
	case ev.Phase == "warmup" || ev.Phase == "run":
		if ev.Phase != w.phase {
			w.phase = ev.Phase
			w.phaseEnd = now.Add(time.Duration(ev.Total-ev.Done)*time.Millisecond + w.phaseGrace)
		}
	case ev.Phase != "":
		w.phase = ""
	}
	d, why := w.stall, fmt.Sprintf("no report for %v", w.stall)
	if w.phase != "" && w.phaseEnd.Sub(now) < d {
		d = max(0, w.phaseEnd.Sub(now))
		why = fmt.Sprintf("its %s phase did not end within %v of its time", w.phase, w.phaseGrace)
	}
	w.timer.Stop()
	w.timer = time.AfterFunc(d, func() { w.kill(why) })
}

func (w *watchdog) kill(why string) {
	w.mu.Lock()
	w.reason = why
	w.mu.Unlock()
	w.proc.Kill()
}

// killed is why the watchdog killed the child, or empty.
func (w *watchdog) killed() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reason
}

func (w *watchdog) stop() { w.timer.Stop() }

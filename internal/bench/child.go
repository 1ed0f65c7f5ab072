package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"
)

// childProgressInterval spaces a child's progress events (about five a
// second): enough for a live progress bar, little enough not to matter.
const childProgressInterval = 200 * time.Millisecond

// RunChild is the child side of the protocol in protocol.go: it reads one
// RunSpec as JSON from stdin, runs it, and writes Event JSON lines to
// stdout: progress (at most about five a second, plus the first and last
// of each phase), then one final event with Result or Error. It returns
// the run's error too, after reporting it, so that the binary can exit
// non-zero; an error writing stdout is returned as well. SIGINT and
// SIGTERM cancel the run, which then reports the cancellation.
func RunChild(stdin io.Reader, stdout io.Writer) error {
	enc := json.NewEncoder(stdout)
	var spec RunSpec
	if err := json.NewDecoder(stdin).Decode(&spec); err != nil {
		err = fmt.Errorf("bench: read run spec: %w", err)
		if werr := enc.Encode(Event{Error: err.Error()}); werr != nil {
			return fmt.Errorf("%w (and writing the error event: %v)", err, werr)
		}
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var writeErr error
	th := progressThrottle{interval: childProgressInterval}
	res, runErr := Run(ctx, spec, func(ev Event) {
		if writeErr != nil || !th.allow(ev, time.Now()) {
			return
		}
		writeErr = enc.Encode(ev)
	})
	final := Event{Result: res}
	if res != nil {
		res.Binary, _ = os.Executable()
		res.Build = OwnBuild()
	}
	if runErr != nil {
		final = Event{Error: runErr.Error()}
	}
	if err := enc.Encode(final); err != nil && writeErr == nil {
		writeErr = err
	}
	if writeErr != nil {
		writeErr = fmt.Errorf("bench: write events: %w", writeErr)
	}
	if runErr != nil {
		if writeErr != nil {
			return fmt.Errorf("%w (and %v)", runErr, writeErr)
		}
		return runErr
	}
	return writeErr
}

// progressThrottle passes the first and last event of each phase and
// otherwise at most one event per interval.
type progressThrottle struct {
	interval time.Duration
	phase    string
	last     time.Time
}

func (t *progressThrottle) allow(ev Event, now time.Time) bool {
	if ev.Phase != t.phase || ev.Done >= ev.Total || now.Sub(t.last) >= t.interval {
		t.phase, t.last = ev.Phase, now
		return true
	}
	return false
}

// BuildOf names the revision a binary was built from, as its build
// information records it: the VCS revision, with "+modified" for a tree
// with uncommitted changes; empty where the build recorded none (go run,
// test binaries, builds outside a repository).
func BuildOf(info *debug.BuildInfo) string {
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && modified == "true" {
		rev += "+modified"
	}
	return rev
}

// OwnBuild is BuildOf the running binary.
func OwnBuild() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return BuildOf(info)
}

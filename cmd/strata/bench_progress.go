package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/stratadb/strata/internal/bench"
)

// progressView shows a child's progress events. Methods may be called from
// the event reader and the diagnostics copier at once.
type progressView interface {
	// event shows ev of the run named label ("pebble oltp_read_only").
	event(label string, ev bench.Event)
	// finish ends the current phase's display (the child is done).
	finish()
	// clearLine makes room for a line of diagnostics.
	clearLine()
}

// newProgressView draws bars on a terminal and prints a line per phase
// elsewhere (a log file, CI), where bars would be noise.
func newProgressView(w io.Writer) progressView {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return &barView{w: w}
	}
	return &lineView{w: w}
}

// phaseUnit is what a phase's bar counts: rows while loading, seconds while
// warming up and running (events carry milliseconds).
func phaseUnit(phase string) (unit string, scale int64) {
	if phase == "load" {
		return "rows", 1
	}
	return "s", 1000
}

type barView struct {
	mu           sync.Mutex
	w            io.Writer
	label, phase string
	bar          *progressbar.ProgressBar
}

func (v *barView) event(label string, ev bench.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	unit, scale := phaseUnit(ev.Phase)
	if v.bar == nil || label != v.label || ev.Phase != v.phase {
		v.finishLocked()
		v.label, v.phase = label, ev.Phase
		total := int64(-1) // unknown: a spinner
		if ev.Total > 0 {
			total = (ev.Total + scale - 1) / scale
		}
		opts := []progressbar.Option{
			progressbar.OptionSetWriter(v.w),
			progressbar.OptionSetDescription(fmt.Sprintf("%-28s", label+" "+ev.Phase)),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100 * time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(v.w) }),
		}
		if ev.Phase == "load" {
			// Rows per second and the time left say something about a
			// load; a timed phase's bar is its own clock.
			opts = append(opts, progressbar.OptionSetItsString(unit), progressbar.OptionShowIts(), progressbar.OptionSetPredictTime(true))
		} else {
			opts = append(opts, progressbar.OptionSetPredictTime(false))
		}
		v.bar = progressbar.NewOptions64(total, opts...)
	}
	v.bar.Set64(ev.Done / scale)
}

func (v *barView) finish() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.finishLocked()
}

func (v *barView) finishLocked() {
	if v.bar != nil {
		v.bar.Finish()
		v.bar = nil
	}
}

func (v *barView) clearLine() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.bar != nil {
		v.bar.Clear()
	}
}

// lineView prints one line when a phase starts.
type lineView struct {
	mu           sync.Mutex
	w            io.Writer
	label, phase string
}

func (v *lineView) event(label string, ev bench.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if label == v.label && ev.Phase == v.phase {
		return
	}
	v.label, v.phase = label, ev.Phase
	unit, scale := phaseUnit(ev.Phase)
	if ev.Total > 0 {
		fmt.Fprintf(v.w, "%s: %s (%d %s)\n", label, ev.Phase, ev.Total/scale, unit)
	} else {
		fmt.Fprintf(v.w, "%s: %s\n", label, ev.Phase)
	}
}

func (v *lineView) finish() {
	v.mu.Lock()
	v.label, v.phase = "", ""
	v.mu.Unlock()
}

func (v *lineView) clearLine() {}

// prefixWriter writes each line with a prefix (the child's engine), after
// asking the progress view to make room.
type prefixWriter struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  string
	clear   func()
	partial []byte
}

func newPrefixWriter(w io.Writer, prefix string, clear func()) *prefixWriter {
	return &prefixWriter{w: w, prefix: prefix, clear: clear}
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			break
		}
		if err := p.writeLine(p.partial[:i+1]); err != nil {
			return len(b), err
		}
		p.partial = p.partial[i+1:]
	}
	return len(b), nil
}

// Flush writes a last line that had no newline.
func (p *prefixWriter) Flush() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.partial) == 0 {
		return nil
	}
	line := append(p.partial, '\n')
	p.partial = nil
	return p.writeLine(line)
}

func (p *prefixWriter) writeLine(line []byte) error {
	p.clear()
	_, err := fmt.Fprintf(p.w, "%s%s", p.prefix, line)
	return err
}

// Command tracewaits reads a Go execution trace (from `strata bench` with
// STRATA_BENCH_TRACE set) and says where goroutines waited: the longest
// spans each spent blocked or ready to run but not running, with the
// stack at which the span began. It is its own module (it needs
// golang.org/x/exp/trace, which the engine does not), for docs/BENCHMARKS.md's
// latency investigations. Usage:
//
//	tracewaits waits FILE [SUBSTRING]   longest waits of the goroutines one of
//	                                     whose stacks holds SUBSTRING
//	                                     (e.g. "runPhase.func": the bench workers)
//	tracewaits window FILE FROM TO      running time per goroutine between
//	                                     FROM and TO ms after the trace's start
//	tracewaits who FILE G               the distinct stacks of goroutine G's
//	                                     transitions: what it is
//	tracewaits timeline FILE FROM TO    every goroutine and processor
//	                                     transition between FROM and TO ms
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/exp/trace"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: tracewaits waits|window|who|timeline FILE ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "waits":
		sub := ""
		if len(os.Args) > 3 {
			sub = os.Args[3]
		}
		err = waits(os.Args[2], sub)
	case "window":
		err = window(os.Args[2], ms(4), ms(5))
	case "who":
		g, _ := strconv.Atoi(arg(4))
		err = who(os.Args[2], trace.GoID(g))
	case "timeline":
		err = timeline(os.Args[2], ms(4), ms(5))
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracewaits:", err)
		os.Exit(1)
	}
}

func arg(i int) string {
	if len(os.Args) < i {
		fmt.Fprintln(os.Stderr, "tracewaits: missing argument")
		os.Exit(2)
	}
	return os.Args[i-1]
}

func ms(i int) float64 {
	v, err := strconv.ParseFloat(arg(i), 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracewaits:", err)
		os.Exit(2)
	}
	return v
}

// events calls fn with every event of the trace in file and its time in
// ms since the first; fn returns false to stop.
func events(file string, fn func(ev trace.Event, ms float64) bool) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		return err
	}
	var first trace.Time
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if first == 0 {
			first = ev.Time()
		}
		if !fn(ev, float64(ev.Time().Sub(first))/1e6) {
			return nil
		}
	}
}

// stack prints up to n frames of s, then the frames past them whose
// function holds keep.
func stack(s trace.Stack, n int, keep string) string {
	var b strings.Builder
	i := 0
	for fr := range s.Frames() {
		if i < n {
			fmt.Fprintf(&b, "\n      %s %s:%d", fr.Func, fr.File, fr.Line)
		} else if keep != "" && strings.Contains(fr.Func, keep) {
			fmt.Fprintf(&b, "\n      ... %s", fr.Func)
		}
		i++
	}
	return b.String()
}

// goTransition returns the goroutine state change ev records, if it is
// one.
func goTransition(ev trace.Event) (t trace.StateTransition, g trace.GoID, from, to trace.GoState, ok bool) {
	if ev.Kind() != trace.EventStateTransition {
		return t, 0, 0, 0, false
	}
	t = ev.StateTransition()
	if t.Resource.Kind != trace.ResourceGoroutine {
		return t, 0, 0, 0, false
	}
	from, to = t.Goroutine()
	return t, t.Resource.Goroutine(), from, to, true
}

func waits(file, sub string) error {
	type state struct {
		state trace.GoState
		since float64
		why   string
		stack string
	}
	type span struct {
		g     trace.GoID
		state trace.GoState
		at    float64
		dur   float64
		why   string
		stack string
	}
	cur := map[trace.GoID]*state{}
	var spans []span
	match := map[trace.GoID]bool{}
	err := events(file, func(ev trace.Event, ms float64) bool {
		t, g, _, to, ok := goTransition(ev)
		if !ok {
			return true
		}
		s := cur[g]
		if s != nil && (s.state == trace.GoWaiting || s.state == trace.GoRunnable) && to != s.state {
			spans = append(spans, span{g, s.state, s.since, ms - s.since, s.why, s.stack})
		}
		if s == nil || to != s.state {
			st := ""
			if to == trace.GoWaiting || to == trace.GoRunnable {
				st = stack(t.Stack, 14, "runPhase")
				if sub != "" && strings.Contains(st, sub) {
					match[g] = true
				}
			}
			cur[g] = &state{to, ms, t.Reason, st}
		}
		return true
	})
	if err != nil {
		return err
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].dur > spans[j].dur })
	n := 0
	for _, s := range spans {
		if sub != "" && !match[s.g] {
			continue
		}
		fmt.Printf("g%d %v for %.3f ms at %.3f ms, reason %q%s\n", s.g, s.state, s.dur, s.at, s.why, s.stack)
		if n++; n == 25 {
			break
		}
	}
	return nil
}

func window(file string, from, to float64) error {
	running := map[trace.GoID]float64{}
	total := map[trace.GoID]float64{}
	err := events(file, func(ev trace.Event, ms float64) bool {
		if ms > to+50 {
			return false
		}
		if ev.Kind() == trace.EventRangeBegin && ms >= from && ms <= to {
			fmt.Printf("%.3f ms: %s\n", ms, ev.Range().Name)
		}
		_, g, a, b, ok := goTransition(ev)
		if !ok {
			return true
		}
		switch {
		case b == trace.GoRunning:
			running[g] = ms
		case a == trace.GoRunning:
			if start, ok := running[g]; ok {
				if d := min(ms, to) - max(start, from); d > 0 {
					total[g] += d
				}
				delete(running, g)
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	var gs []trace.GoID
	for g := range total {
		gs = append(gs, g)
	}
	sort.Slice(gs, func(i, j int) bool { return total[gs[i]] > total[gs[j]] })
	for _, g := range gs {
		fmt.Printf("g%d ran %.3f ms of the %.3f\n", g, total[g], to-from)
	}
	return nil
}

func who(file string, g trace.GoID) error {
	seen := map[string]bool{}
	return events(file, func(ev trace.Event, ms float64) bool {
		t, id, a, b, ok := goTransition(ev)
		if !ok || id != g {
			return true
		}
		s := stack(t.Stack, 20, "")
		if !seen[s] {
			seen[s] = true
			fmt.Printf("%v->%v %q%s\n", a, b, t.Reason, s)
		}
		return len(seen) < 8
	})
}

func timeline(file string, from, to float64) error {
	return events(file, func(ev trace.Event, ms float64) bool {
		if ms < from {
			return true
		}
		if ms > to {
			return false
		}
		switch ev.Kind() {
		case trace.EventStateTransition:
			t := ev.StateTransition()
			var id, a, b string
			switch t.Resource.Kind {
			case trace.ResourceGoroutine:
				x, y := t.Goroutine()
				id, a, b = fmt.Sprintf("g%d", t.Resource.Goroutine()), x.String(), y.String()
			case trace.ResourceProc:
				x, y := t.Proc()
				id, a, b = fmt.Sprintf("P%d", t.Resource.Proc()), x.String(), y.String()
			default:
				return true
			}
			top := ""
			for fr := range ev.Stack().Frames() {
				top = fmt.Sprintf("%s:%d", fr.Func, fr.Line)
				break
			}
			fmt.Printf("%.3f P%d g%d: %s %s->%s %q %s\n", ms, ev.Proc(), ev.Goroutine(), id, a, b, t.Reason, top)
		case trace.EventRangeBegin, trace.EventRangeEnd:
			fmt.Printf("%.3f P%d %v %s\n", ms, ev.Proc(), ev.Kind(), ev.Range().Name)
		}
		return true
	})
}

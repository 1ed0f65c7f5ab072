package main

import (
	"bytes"
	"testing"

	"github.com/stratadb/strata/internal/bench"
)

func TestLineViewPrintsOneLinePerPhase(t *testing.T) {
	var out bytes.Buffer
	v := newProgressView(&out) // not a terminal: lines
	for _, ev := range []bench.Event{
		{Phase: "load", Done: 0, Total: 2000}, {Phase: "load", Done: 1000, Total: 2000}, {Phase: "load", Done: 2000, Total: 2000},
		{Phase: "run", Done: 100, Total: 3000}, {Phase: "run", Done: 3000, Total: 3000},
	} {
		v.event("strata oltp_read_only", ev)
	}
	v.finish()
	want := "strata oltp_read_only: load (2000 rows)\nstrata oltp_read_only: run (3 s)\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestPrefixWriter(t *testing.T) {
	var out bytes.Buffer
	clears := 0
	w := newPrefixWriter(&out, "[pebble] ", func() { clears++ })
	w.Write([]byte("first line\nsecond "))
	w.Write([]byte("line\nunfinished"))
	must(t, w.Flush())
	want := "[pebble] first line\n[pebble] second line\n[pebble] unfinished\n"
	if out.String() != want || clears != 3 {
		t.Errorf("got %q with %d clears, want %q with 3", out.String(), clears, want)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/bench"
)

func TestEngines(t *testing.T) {
	for _, args := range [][]string{nil, {"engines"}} {
		var out, errOut bytes.Buffer
		if code := run(args, nil, &out, &errOut); code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 3 {
			t.Fatalf("%v: %q, want three engines", args, out.String())
		}
		for i, name := range []string{"badger", "bbolt", "pebble"} {
			if !strings.HasPrefix(lines[i], name+"\tv") {
				t.Errorf("%v: line %q, want %s and its version", args, lines[i], name)
			}
		}
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"bogus"}, nil, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "usage:") {
		t.Errorf("unknown command: exit %d, stderr %q", code, errOut.String())
	}
	errOut.Reset()
	if code := run([]string{"engines", "extra"}, nil, &out, &errOut); code != 2 {
		t.Errorf("engines with an argument: exit %d", code)
	}
	out.Reset()
	if code := run([]string{"-h"}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), bench.ChildCommand) {
		t.Errorf("-h: exit %d, stdout %q", code, out.String())
	}
}

// TestChildBadSpec checks the wiring to bench.RunChild: a spec that is not
// JSON gets an error event on stdout and exit status 1.
func TestChildBadSpec(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{bench.ChildCommand}, strings.NewReader("not json"), &out, &errOut)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var ev bench.Event
	if err := json.Unmarshal(out.Bytes(), &ev); err != nil || ev.Error == "" {
		t.Fatalf("stdout %q: want one error event (%v)", out.String(), err)
	}
}

// TestChildRun runs a short benchmark of each peer through the child
// protocol, as strata bench does.
func TestChildRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	for _, name := range []string{"bbolt", "pebble", "badger"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			spec := bench.RunSpec{
				Engine:       name,
				Config:       bench.Config{Dir: t.TempDir(), CacheBytes: 4 << 20, SyncWrites: true},
				Workload:     "oltp_read_write",
				Dataset:      "sysbench",
				Distribution: "uniform",
				TableSize:    2000,
				Seed:         1,
				Threads:      2,
				Duration:     200e6,
			}
			in, _ := json.Marshal(spec)
			var out, errOut bytes.Buffer
			if code := run([]string{bench.ChildCommand}, bytes.NewReader(in), &out, &errOut); code != 0 {
				t.Fatalf("exit %d; stderr %q; stdout %q", code, errOut.String(), out.String())
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			var ev bench.Event
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Result == nil || ev.Error != "" {
				t.Fatalf("final event %q", lines[len(lines)-1])
			}
			r := ev.Result
			if !strings.HasPrefix(r.Describe, name+" v") || r.Txns == 0 || r.Metrics == nil {
				t.Errorf("result: describe %q, %d txns, metrics %v", r.Describe, r.Txns, r.Metrics)
			}
		})
	}
}

package peers

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
		if code := Main("strata-bench-x", "x", "v1.2.3", args, nil, &out, &errOut); code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut.String())
		}
		if got := out.String(); got != "x\tv1.2.3\n" {
			t.Errorf("%v: %q, want the engine and its version", args, got)
		}
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main("strata-bench-x", "x", "v1", []string{"bogus"}, nil, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "usage:") {
		t.Errorf("unknown command: exit %d, stderr %q", code, errOut.String())
	}
	errOut.Reset()
	if code := Main("strata-bench-x", "x", "v1", []string{"engines", "extra"}, nil, &out, &errOut); code != 2 {
		t.Errorf("engines with an argument: exit %d", code)
	}
	out.Reset()
	if code := Main("strata-bench-x", "x", "v1", []string{"-h"}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), bench.ChildCommand) {
		t.Errorf("-h: exit %d, stdout %q", code, out.String())
	}
}

// TestChildBadSpec checks the wiring to bench.RunChild: a spec that is not
// JSON gets an error event on stdout and exit status 1.
func TestChildBadSpec(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Main("strata-bench-x", "x", "v1", []string{bench.ChildCommand}, strings.NewReader("not json"), &out, &errOut)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var ev bench.Event
	if err := json.Unmarshal(out.Bytes(), &ev); err != nil || ev.Error == "" {
		t.Fatalf("stdout %q: want one error event (%v)", out.String(), err)
	}
}

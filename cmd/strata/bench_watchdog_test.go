package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/bench"
)

// fakeChild writes an executable script that stands in for a bench child:
// it ignores its spec, prints lines, then hangs.
func fakeChild(t *testing.T, lines ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	for _, l := range lines {
		b.WriteString("echo '" + l + "'\n")
	}
	b.WriteString("exec sleep 60\n")
	path := filepath.Join(t.TempDir(), "child")
	if err := os.WriteFile(path, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStuckChildIsKilled: a child that stops reporting, or whose timed
// phase goes on past its time, is killed and its run fails with the
// reason, instead of the benchmark waiting for it for good (a peer spun in
// a read after its measured phase for 9 minutes until killed by hand).
func TestStuckChildIsKilled(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"silent", nil, "no report for"},
		{"run phase overdue", []string{`{"phase":"run","done":0,"total":100}`, `{"phase":"run","done":50,"total":100}`}, "run phase did not end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &childProcess{
				bin: fakeChild(t, tc.lines...), spec: bench.RunSpec{Engine: "pebble"},
				view: newProgressView(io.Discard), stderr: io.Discard, label: "pebble test",
				stall: 2 * time.Second, phaseGrace: 300 * time.Millisecond,
			}
			start := time.Now()
			_, err := c.run(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run: %v; want an error saying %q", err, tc.want)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Fatalf("the stuck child was killed after %v", d)
			}
		})
	}
}

// TestSlowChildAfterItsRunIsNotKilled: what a child does after its run
// phase has ended (metrics, closing its engine: a checkpoint, a
// compaction) is not held to the phase's time, only to childStall.
func TestSlowChildAfterItsRunIsNotKilled(t *testing.T) {
	script := "#!/bin/sh\n" +
		"echo '{\"phase\":\"run\",\"done\":0,\"total\":100}'\n" +
		"echo '{\"phase\":\"run\",\"done\":100,\"total\":100}'\n" +
		"sleep 1\n" + // closing the engine, longer than the phase's grace
		"echo '{\"result\":{\"spec\":{\"engine\":\"pebble\"},\"txns\":7}}'\n"
	path := filepath.Join(t.TempDir(), "child")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &childProcess{
		bin: path, spec: bench.RunSpec{Engine: "pebble"},
		view: newProgressView(io.Discard), stderr: io.Discard, label: "pebble test",
		stall: 20 * time.Second, phaseGrace: 200 * time.Millisecond,
	}
	res, err := c.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Txns != 7 {
		t.Fatalf("result %+v, want the child's", res)
	}
}

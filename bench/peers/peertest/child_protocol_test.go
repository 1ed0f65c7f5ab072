package peertest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stratadb/strata/bench/peers"
	"github.com/stratadb/strata/internal/bench"
)

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
			if code := peers.Main("strata-bench-"+name, name, versions()[name], []string{bench.ChildCommand}, bytes.NewReader(in), &out, &errOut); code != 0 {
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

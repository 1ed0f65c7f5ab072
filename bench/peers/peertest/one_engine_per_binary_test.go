package peertest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stratadb/strata/bench/peers/badgerpeer"
	"github.com/stratadb/strata/bench/peers/boltpeer"
	"github.com/stratadb/strata/bench/peers/pebblepeer"
)

// TestEachBinaryLinksOneEngine: each peer's bench binary depends on its own
// engine's module and on no other peer's. A binary linking all three was
// 12 MiB more resident at rest than bbolt's own (the other engines' code
// and data), memory a run's limit took from the engine measured.
func TestEachBinaryLinksOneEngine(t *testing.T) {
	modules := map[string]string{
		"bbolt":  boltpeer.Module,
		"pebble": pebblepeer.Module,
		"badger": badgerpeer.Module,
	}
	for engine, own := range modules {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{.Module.Path}}{{end}}", "../../cmd/strata-bench-"+engine)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		deps := map[string]bool{}
		for _, m := range strings.Fields(string(out)) {
			deps[m] = true
		}
		for other, m := range modules {
			if linked := deps[m]; linked != (other == engine) {
				t.Errorf("strata-bench-%s: links %s (%s): %v, want %v", engine, other, m, linked, other == engine)
			}
		}
		if !deps[own] {
			t.Errorf("strata-bench-%s does not link its engine %s", engine, own)
		}
	}
}

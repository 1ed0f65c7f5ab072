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
// engine's module, on no other peer's, and not on Strata's engine (the
// root package; its adapter lives in internal/bench/strataengine). A
// binary linking all three peers was 12 MiB more resident at rest than
// bbolt's own (the other engines' code and data), and Strata's engine
// added 1 MiB to bbolt's: memory a run's limit took from the engine
// measured.
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
		pkgs, err := exec.Command("go", "list", "-deps", "../../cmd/strata-bench-"+engine).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, pkgs)
		}
		// Of Strata's module only the harness and its data sets: no
		// engine package (the root, the page store, the codecs, ...).
		harness := map[string]bool{
			"github.com/stratadb/strata/internal/bench":    true,
			"github.com/stratadb/strata/internal/sysbench": true,
		}
		for _, p := range strings.Fields(string(pkgs)) {
			if (p == "github.com/stratadb/strata" || strings.HasPrefix(p, "github.com/stratadb/strata/internal/")) && !harness[p] {
				t.Errorf("strata-bench-%s links %s, a package of Strata's engine", engine, p)
			}
		}
	}
}

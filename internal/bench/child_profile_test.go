package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPhaseProfilerProfilesOnlyItsPhase: the profile starts when the run
// enters the measured phase and ends when it leaves it, so the file holds
// a complete profile; nothing is written without a path.
func TestPhaseProfilerProfilesOnlyItsPhase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	p := phaseProfiler{path: path, phase: "run"}
	p.observe("load")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("profile file exists during the load: %v", err)
	}
	p.observe("run")
	if p.f == nil {
		t.Fatal("no profile started when the run phase began")
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	p.observe("run") // progress within the phase: the same profile goes on
	p.observe("done")
	if p.f != nil {
		t.Fatal("profile still running after the phase ended")
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() == 0 {
		t.Fatalf("profile file: %v, %v", st, err)
	}

	var none phaseProfiler
	none.observe("run")
	if none.f != nil || none.stop() != nil {
		t.Fatal("a profiler without a path started a profile")
	}
}

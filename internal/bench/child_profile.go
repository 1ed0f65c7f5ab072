package bench

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// CPUProfileEnv names the environment variable that makes a bench child
// write a CPU profile of its measured phase ("run", not the load or the
// warm-up) to the file it names: `STRATA_BENCH_CPU_PROFILE=cpu.pprof
// strata bench ...` profiles each Strata run into that file (the last run
// wins), for `go tool pprof`.
const CPUProfileEnv = "STRATA_BENCH_CPU_PROFILE"

// phaseProfiler profiles one phase of a child's run into a file.
type phaseProfiler struct {
	path, phase string
	f           *os.File
	err         error
}

// observe starts the profile when the run enters the phase, and stops it
// when the run leaves it.
func (p *phaseProfiler) observe(phase string) {
	if p.path == "" || p.err != nil {
		return
	}
	switch {
	case phase == p.phase && p.f == nil:
		f, err := os.Create(p.path)
		if err != nil {
			p.err = fmt.Errorf("bench: cpu profile: %w", err)
			return
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			p.err = fmt.Errorf("bench: cpu profile: %w", err)
			return
		}
		p.f = f
	case phase != p.phase && p.f != nil:
		p.stop()
	}
}

// stop ends the profile, if one runs, and reports the first error.
func (p *phaseProfiler) stop() error {
	if p.f != nil {
		pprof.StopCPUProfile()
		if err := p.f.Close(); err != nil && p.err == nil {
			p.err = fmt.Errorf("bench: cpu profile: %w", err)
		}
		p.f = nil
	}
	return p.err
}

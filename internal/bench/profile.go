package bench

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// ProfileEnv names the environment variable that makes a child write a CPU
// profile of its measured phase (not the load or the warm-up) to the file
// it names, with ".<engine>" appended so that a run of several engines
// keeps each one's. It is for finding where a run's time goes; results
// measured with it on are slower by the profiler's sampling.
const ProfileEnv = "STRATA_BENCH_CPUPROFILE"

// startProfile starts the CPU profile ProfileEnv asks for, if any, and
// returns the function that stops it and reports whether the file was
// written whole.
func startProfile(engine string) (stop func() error, err error) {
	path := os.Getenv(ProfileEnv)
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path + "." + engine)
	if err != nil {
		return nil, fmt.Errorf("bench: cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("bench: cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("bench: cpu profile: %w", err)
		}
		return nil
	}, nil
}

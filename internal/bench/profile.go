package bench

import (
	"fmt"
	"os"
	"runtime"
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

// HeapProfileEnv names the environment variable that makes a child write a
// heap profile at the end of its measured phase (before the engine closes)
// to the file it names, with ".<engine>" appended as for ProfileEnv. It is
// for finding what an engine holds beyond its cache (`go tool pprof
// -sample_index=inuse_space`); it is written after the result's memory
// metrics are read, following a garbage collection so that the in-use
// figures are those of that moment rather than of the last cycle.
const HeapProfileEnv = "STRATA_BENCH_HEAPPROFILE"

// writeHeapProfile writes the heap profile HeapProfileEnv asks for, if any.
func writeHeapProfile(engine string) error {
	path := os.Getenv(HeapProfileEnv)
	if path == "" {
		return nil
	}
	f, err := os.Create(path + "." + engine)
	if err != nil {
		return fmt.Errorf("bench: heap profile: %w", err)
	}
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("bench: heap profile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("bench: heap profile: %w", err)
	}
	return nil
}

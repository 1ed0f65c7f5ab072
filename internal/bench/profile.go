package bench

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// ProfileEnv names the environment variable that makes a child write a CPU
// profile of its measured phase (not the load or the warm-up) to the file
// it names, with ".<engine>" appended so that a run of several engines
// keeps each one's. It is for finding where a run's time goes; results
// measured with it on are slower by the profiler's sampling.
const ProfileEnv = "STRATA_BENCH_CPUPROFILE"

// TraceEnv names the environment variable that makes a child write an
// execution trace of its measured phase to the file it names, with
// ".<engine>" appended as for ProfileEnv. It is for finding where a run's
// wall time goes that a CPU profile does not show: waits on locks, on
// I/O, on the scheduler (`go tool trace -pprof=sync FILE`, `=syscall`,
// `=sched`). Traces grow by tens of MB a second: use a short --duration.
const TraceEnv = "STRATA_BENCH_TRACE"

// MutexProfileEnv names the environment variable that makes a child write
// a mutex contention profile of its measured phase to the file it names,
// with ".<engine>" appended as for ProfileEnv: where goroutines waited for
// a lock, attributed to the code that held it (`go tool pprof FILE`). One
// contention event in mutexSampling is recorded.
const MutexProfileEnv = "STRATA_BENCH_MUTEXPROFILE"

const mutexSampling = 10

// BlockProfileEnv names the environment variable that makes a child write
// a blocking profile of its measured phase to the file it names, with
// ".<engine>" appended as for ProfileEnv: where goroutines waited on
// channels, sync primitives and selects (`go tool pprof FILE`). Waits for
// Strata's writer lock (internal/handoff: a channel receive) show here and
// not in the mutex profile. Blocking events of blockSampling ns or more
// are all recorded, shorter ones in proportion.
const BlockProfileEnv = "STRATA_BENCH_BLOCKPROFILE"

const blockSampling = 10_000

// startProfile starts the CPU profile ProfileEnv asks for, the mutex
// profile MutexProfileEnv asks for and the trace TraceEnv asks for, if
// any, and returns the function that stops them and reports whether the
// files were written whole.
func startProfile(engine string) (stop func() error, err error) {
	stopCPU, err := startCPUProfile(engine)
	if err != nil {
		return nil, err
	}
	stopMutex, stopBlock := startMutexProfile(engine), startBlockProfile(engine)
	stopCPU = func(stop func() error) func() error {
		return func() error { return errors.Join(stopMutex(), stopBlock(), stop()) }
	}(stopCPU)
	path := os.Getenv(TraceEnv)
	if path == "" {
		return stopCPU, nil
	}
	f, err := os.Create(path + "." + engine)
	if err == nil {
		if err = trace.Start(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("bench: trace: %w", err), stopCPU())
	}
	return func() error {
		trace.Stop()
		err := f.Close()
		if err != nil {
			err = fmt.Errorf("bench: trace: %w", err)
		}
		return errors.Join(err, stopCPU())
	}, nil
}

// startCPUProfile starts the CPU profile ProfileEnv asks for, if any.
func startCPUProfile(engine string) (stop func() error, err error) {
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

// startMutexProfile starts recording lock contention if MutexProfileEnv
// asks for it, and returns the function that writes the profile.
func startMutexProfile(engine string) (stop func() error) {
	return startSampledProfile(MutexProfileEnv, "mutex", engine, mutexSampling, func(rate int) { runtime.SetMutexProfileFraction(rate) })
}

// startBlockProfile starts recording blocking events if BlockProfileEnv
// asks for it, and returns the function that writes the profile.
func startBlockProfile(engine string) (stop func() error) {
	return startSampledProfile(BlockProfileEnv, "block", engine, blockSampling, runtime.SetBlockProfileRate)
}

// startSampledProfile sets the runtime's sampling to rate (with set) if
// the variable env names a file, and returns the function that sets it
// back to 0 and writes the runtime's profile name there, with
// ".<engine>" appended.
func startSampledProfile(env, name, engine string, rate int, set func(rate int)) (stop func() error) {
	path := os.Getenv(env)
	if path == "" {
		return func() error { return nil }
	}
	set(rate)
	return func() error {
		set(0)
		f, err := os.Create(path + "." + engine)
		if err != nil {
			return fmt.Errorf("bench: %s profile: %w", name, err)
		}
		err = pprof.Lookup(name).WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("bench: %s profile: %w", name, err)
		}
		return nil
	}
}

package bench

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// plan is a validated RunSpec and what it names.
type plan struct {
	spec    RunSpec // with defaults filled in
	wl      workload
	ds      Dataset
	factory Factory
	notes   []string
}

// Check validates spec as Run would, without running anything, except
// that the engine need not be registered in this binary (the parent
// checks specs whose engines live in the peers binary).
func Check(spec RunSpec) error {
	_, err := validate(spec, false)
	return err
}

// newPlan validates spec and fills in its defaults: the sysbench data set,
// and the workload's own distribution (sysbench's uniform, YCSB's zipfian,
// latest for ycsb_d).
func newPlan(spec RunSpec) (*plan, error) {
	return validate(spec, true)
}

func validate(spec RunSpec, needEngine bool) (*plan, error) {
	p := &plan{}
	var errs []error
	wl, err := lookupWorkload(spec.Workload)
	if err != nil {
		errs = append(errs, err)
	}
	if spec.Dataset == "" {
		spec.Dataset = "sysbench"
	}
	if spec.Distribution == "" {
		spec.Distribution = wl.defaultDist
	}
	if spec.Distribution != "" && !slices.Contains(Distributions, spec.Distribution) {
		errs = append(errs, fmt.Errorf("bench: unknown distribution %q (known: %v)", spec.Distribution, Distributions))
	}
	if wl.name == "ycsb_d" && spec.Distribution != "latest" {
		p.notes = append(p.notes, "ycsb_d reads the latest rows; distribution "+spec.Distribution+" is not used")
	}
	ds, err := NewDataset(spec.Dataset, spec.Seed, spec.TableSize)
	if err != nil {
		errs = append(errs, err)
	}
	var f Factory
	if needEngine {
		if f, err = Lookup(spec.Engine); err != nil {
			errs = append(errs, err)
		}
	} else if spec.Engine == "" {
		errs = append(errs, errors.New("bench: no engine"))
	}
	if spec.Threads < 1 {
		errs = append(errs, fmt.Errorf("bench: %d threads: want at least 1", spec.Threads))
	}
	if spec.Rate < 0 || math.IsNaN(spec.Rate) || math.IsInf(spec.Rate, 0) {
		errs = append(errs, fmt.Errorf("bench: rate %v: want a positive number of transactions a second, or 0", spec.Rate))
	} else if spec.Rate > 0 && spec.Threads > 0 {
		// Each worker starts one transaction every Threads/Rate: at least
		// a microsecond (the pacer's resolution, and far beyond what any
		// engine serves), and within the measured time.
		every := float64(spec.Threads) / spec.Rate
		if every < 1e-6 {
			errs = append(errs, fmt.Errorf("bench: rate %g with %d threads: each would start a transaction more often than every microsecond", spec.Rate, spec.Threads))
		} else if spec.Duration > 0 && every > spec.Duration.Seconds() {
			errs = append(errs, fmt.Errorf("bench: rate %g with %d threads: each would start one transaction every %.3gs, longer than the duration %v", spec.Rate, spec.Threads, every, spec.Duration))
		}
	}
	if spec.Duration <= 0 {
		errs = append(errs, fmt.Errorf("bench: duration %v: want a positive duration", spec.Duration))
	}
	if spec.Warmup < 0 {
		errs = append(errs, fmt.Errorf("bench: warm-up %v is negative", spec.Warmup))
	}
	if spec.Config.Dir == "" {
		errs = append(errs, errors.New("bench: no directory (config.dir)"))
	}
	if spec.Config.CacheBytes < 0 {
		errs = append(errs, fmt.Errorf("bench: cache of %d bytes is negative", spec.Config.CacheBytes))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	p.spec, p.wl, p.ds, p.factory = spec, wl, ds, f
	return p, nil
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stratadb/strata/internal/bench"
)

// benchReport is the --json output: the host and every result, so that runs
// on different machines can be told apart.
type benchReport struct {
	Host     hostInfo        `json:"host"`
	Results  []*bench.Result `json:"results"`
	Failures []runFailure    `json:"failures,omitempty"`
}

type hostInfo struct {
	CPUs      int    `json:"cpus"`
	Kernel    string `json:"kernel"`
	Machine   string `json:"machine"`
	GoVersion string `json:"go_version"`
	Date      string `json:"date"`
}

type runFailure struct {
	Engine   string `json:"engine"`
	Workload string `json:"workload"`
	Error    string `json:"error"`
}

func currentHost() hostInfo {
	h := hostInfo{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Date: time.Now().UTC().Format(time.RFC3339)}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
		h.Machine = unix.ByteSliceToString(u.Machine[:])
	}
	return h
}

func writeReport(path string, outcomes []runOutcome) error {
	rep := benchReport{Host: currentHost(), Results: []*bench.Result{}}
	for _, o := range outcomes {
		if o.Result != nil {
			rep.Results = append(rep.Results, o.Result)
		} else {
			rep.Failures = append(rep.Failures, runFailure{Engine: o.Engine, Workload: o.Workload, Error: o.Err.Error()})
		}
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

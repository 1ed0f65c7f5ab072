// Command strata-bench-child is the bench child for Strata's engine:
// `strata bench` runs it as
//
//	strata-bench-child bench-child
//
// with a bench.RunSpec on stdin and reads JSON events from its stdout (see
// internal/bench/protocol.go).
//
// It links the engine and the bench harness only, as an application
// embedding Strata would: the strata binary, which can run the same child
// (`strata bench-child`), also links the server, Prometheus, cobra and
// gonum/plot, whose code adds about 12 MiB to the resident size of every
// process it runs, memory a run under a limit would take from the cache.
// Build it next to strata:
//
//	go build -o . ./cmd/strata ./cmd/strata-bench-child
package main

import (
	"fmt"
	"os"

	"github.com/stratadb/strata/internal/bench"
	_ "github.com/stratadb/strata/internal/bench/strataengine" // registers "strata"
)

func main() {
	if len(os.Args) != 2 || os.Args[1] != bench.ChildCommand {
		fmt.Fprintf(os.Stderr, "usage: %s %s (run by strata bench, which speaks to it on stdin and stdout)\n", os.Args[0], bench.ChildCommand)
		os.Exit(2)
	}
	// RunChild has already reported err as the final event; stderr is for
	// whoever reads the diagnostics.
	if err := bench.RunChild(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "strata-bench-child:", err)
		os.Exit(1)
	}
}

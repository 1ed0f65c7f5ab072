package main

import (
	"fmt"
	"os"

	"github.com/stratadb/strata/internal/bench"
	_ "github.com/stratadb/strata/internal/bench/strataengine" // registers "strata"
)

// maybeRunBenchChild turns the process into a bench child when run as
// `strata bench-child` (how `strata bench` starts Strata's runs), before
// cobra sees the arguments: the child speaks the protocol of
// internal/bench on stdin and stdout, not a command line. The Strata
// engine adapter (internal/bench/strataengine) registers itself in
// internal/bench.
func maybeRunBenchChild() {
	if len(os.Args) != 2 || os.Args[1] != bench.ChildCommand {
		return
	}
	// RunChild has already reported err as the final event; stderr is for
	// whoever reads the diagnostics.
	if err := bench.RunChild(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "strata bench-child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

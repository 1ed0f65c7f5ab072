// Command strata-bench-peers is the bench child for Strata's peers (bbolt,
// Pebble, Badger): `strata bench` runs it as
//
//	strata-bench-peers bench-child
//
// with a bench.RunSpec on stdin and reads JSON events from its stdout (see
// internal/bench/protocol.go). Run without arguments, or as
// `strata-bench-peers engines`, it lists the engines it provides and their
// versions.
//
// It is built from its own module (github.com/stratadb/strata/bench), so
// that Strata's module does not depend on the peers:
//
//	cd bench && go build ./cmd/strata-bench-peers
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/stratadb/strata/bench/peers"
	"github.com/stratadb/strata/internal/bench"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "engines"
	if len(args) > 0 {
		cmd = args[0]
	}
	switch {
	case cmd == bench.ChildCommand && len(args) == 1:
		if err := bench.RunChild(stdin, stdout); err != nil {
			// RunChild reported the error on stdout already; stderr is
			// for a person reading the parent's output.
			fmt.Fprintf(stderr, "strata-bench-peers: %v\n", err)
			return 1
		}
		return 0
	case cmd == "engines" && len(args) <= 1:
		listEngines(stdout)
		return 0
	case cmd == "-h" || cmd == "-help" || cmd == "--help" || cmd == "help":
		usage(stdout)
		return 0
	}
	usage(stderr)
	return 2
}

func listEngines(w io.Writer) {
	versions := peers.Versions()
	for _, name := range bench.Engines() {
		v, ok := versions[name]
		if !ok {
			continue // registered by a package linked in for other reasons
		}
		fmt.Fprintf(w, "%s\t%s\n", name, v)
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `usage: strata-bench-peers [engines | %s]

  engines       list the engines this binary provides and their versions
                (the default)
  %s   run one benchmark: read a RunSpec (JSON) on stdin, write
                events (JSON lines) on stdout; started by strata bench
`, bench.ChildCommand, bench.ChildCommand)
}

package peers

import (
	"fmt"
	"io"

	"github.com/stratadb/strata/internal/bench"
)

// Main is the main function of a peer's bench binary, named name, which
// provides engine at version (the engine's package registered it from
// init). `strata bench` runs it as
//
//	name bench-child
//
// with a bench.RunSpec on stdin and reads JSON events from its stdout (see
// internal/bench/protocol.go). Run without arguments, or as `name engines`,
// it lists its engine and version. Main returns the exit status.
func Main(name, engine, version string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "engines"
	if len(args) > 0 {
		cmd = args[0]
	}
	switch {
	case cmd == bench.ChildCommand && len(args) == 1:
		if err := bench.RunChild(stdin, stdout); err != nil {
			// RunChild reported the error on stdout already; stderr is
			// for a person reading the parent's output.
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 1
		}
		return 0
	case cmd == "engines" && len(args) <= 1:
		fmt.Fprintf(stdout, "%s\t%s\n", engine, version)
		return 0
	case cmd == "-h" || cmd == "-help" || cmd == "--help" || cmd == "help":
		usage(stdout, name)
		return 0
	}
	usage(stderr, name)
	return 2
}

func usage(w io.Writer, name string) {
	fmt.Fprintf(w, `usage: %s [engines | %s]

  engines       list the engine this binary provides and its version
                (the default)
  %s   run one benchmark: read a RunSpec (JSON) on stdin, write
                events (JSON lines) on stdout; started by strata bench
`, name, bench.ChildCommand, bench.ChildCommand)
}

// Command strata-bench-pebble is the bench child of Pebble: `strata bench` runs
// it as
//
//	strata-bench-pebble bench-child
//
// with a bench.RunSpec on stdin and reads JSON events from its stdout (see
// internal/bench/protocol.go). Run without arguments, or as
// `strata-bench-pebble engines`, it prints its engine and version.
//
// It links Pebble and no other peer (see package peers), and it is built
// from its own module (github.com/stratadb/strata/bench), so that Strata's
// module does not depend on the peers:
//
//	cd bench && go build ./cmd/strata-bench-pebble
package main

import (
	"os"

	"github.com/stratadb/strata/bench/peers"
	"github.com/stratadb/strata/bench/peers/pebblepeer"
)

func main() {
	os.Exit(peers.Main("strata-bench-pebble", "pebble", pebblepeer.Version(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Command strata-bench-bbolt is the bench child of bbolt: `strata bench` runs
// it as
//
//	strata-bench-bbolt bench-child
//
// with a bench.RunSpec on stdin and reads JSON events from its stdout (see
// internal/bench/protocol.go). Run without arguments, or as
// `strata-bench-bbolt engines`, it prints its engine and version.
//
// It links bbolt and no other peer (see package peers), and it is built
// from its own module (github.com/stratadb/strata/bench), so that Strata's
// module does not depend on the peers:
//
//	cd bench && go build ./cmd/strata-bench-bbolt
package main

import (
	"os"

	"github.com/stratadb/strata/bench/peers"
	"github.com/stratadb/strata/bench/peers/boltpeer"
)

func main() {
	os.Exit(peers.Main("strata-bench-bbolt", "bbolt", boltpeer.Version(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

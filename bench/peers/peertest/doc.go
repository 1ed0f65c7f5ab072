// Package peertest holds the tests every peer adapter passes (the Engine
// contract, a model-based random test against a map, a crash test through
// a killed child process, runs through the child protocol) and a benchmark
// of cached read-only transactions. It links all three adapters, which no
// bench binary does.
package peertest

import (
	"github.com/stratadb/strata/bench/peers/badgerpeer"
	"github.com/stratadb/strata/bench/peers/boltpeer"
	"github.com/stratadb/strata/bench/peers/pebblepeer"
)

// versions maps each peer engine to its module's version in this binary.
func versions() map[string]string {
	return map[string]string{
		"bbolt":  boltpeer.Version(),
		"pebble": pebblepeer.Version(),
		"badger": badgerpeer.Version(),
	}
}

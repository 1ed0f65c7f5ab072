// Package peers holds the benchmark adapters of Strata's peers: bbolt,
// Pebble and Badger. Each file registers one engine with bench.Register from
// init; importing the package (for its side effects) makes them available
// to bench.RunChild in the strata-bench-peers binary.
//
// The adapters live in their own module (github.com/stratadb/strata/bench)
// so that Strata's module never depends on the peers.
package peers

import (
	"fmt"
	"runtime/debug"
	"sync"
)

// Module paths and the versions pinned in go.mod, the fallback when the
// binary carries no build information.
const (
	bboltModule   = "go.etcd.io/bbolt"
	bboltPinned   = "v1.5.0"
	pebbleModule  = "github.com/cockroachdb/pebble/v2"
	pebblePinned  = "v2.1.7"
	badgerModule  = "github.com/dgraph-io/badger/v4"
	badgerPinned  = "v4.9.6"
	mib           = 1 << 20
	defaultBudget = 64 * mib // used when Config.CacheBytes is not set
)

var (
	buildInfoOnce sync.Once
	buildDeps     map[string]string
)

// ModuleVersion returns the version of module path linked into this binary,
// or fallback when the build information does not list it.
func ModuleVersion(path, fallback string) string {
	buildInfoOnce.Do(func() {
		buildDeps = map[string]string{}
		bi, ok := debug.ReadBuildInfo()
		if !ok {
			return
		}
		for _, d := range bi.Deps {
			v := d.Version
			if d.Replace != nil && d.Replace.Version != "" {
				v = d.Replace.Version
			}
			buildDeps[d.Path] = v
		}
	})
	if v := buildDeps[path]; v != "" && v != "(devel)" {
		return v
	}
	return fallback
}

// Versions maps each engine of this package to the version of its module
// linked into the binary.
func Versions() map[string]string {
	return map[string]string{
		"bbolt":  ModuleVersion(bboltModule, bboltPinned),
		"pebble": ModuleVersion(pebbleModule, pebblePinned),
		"badger": ModuleVersion(badgerModule, badgerPinned),
	}
}

// sizeString formats a byte count in binary units ("64 MiB", "512 KiB").
func sizeString(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= mib && n%mib == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= mib:
		return fmt.Sprintf("%.1f MiB", float64(n)/mib)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// codecNote is the remark a peer's Describe ends with when a Strata codec
// was asked for: the peers keep their default compression.
func codecNote(codec string) string {
	if codec == "" {
		return ""
	}
	return fmt.Sprintf("; codec %q is Strata's, not applied", codec)
}

// Package peers is what the benchmark adapters of Strata's peers share:
// their command's main (Main), module versions, sizes and the space their
// files occupy. Each adapter is a package of its own that registers one
// engine with bench.Register from init (boltpeer, pebblepeer, badgerpeer),
// and each runs in a binary of its own (strata-bench-bbolt, -pebble,
// -badger), which links that engine alone: a binary that linked all three
// was 13 MiB more resident at rest (16.7 MiB against bbolt's own 3.5 MiB,
// mostly the other engines' code and data, which a memory limit charges
// to the engine measured).
//
// The adapters live in their own module (github.com/stratadb/strata/bench)
// so that Strata's module never depends on the peers.
package peers

import (
	"fmt"
	"runtime/debug"
	"sync"
)

const (
	// MiB is a mebibyte.
	MiB = 1 << 20
	// DefaultBudget is the cache budget of an engine whose Config.CacheBytes
	// is not set.
	DefaultBudget = 64 * MiB
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

// SizeString formats a byte count in binary units ("64 MiB", "512 KiB").
func SizeString(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= MiB && n%MiB == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= MiB:
		return fmt.Sprintf("%.1f MiB", float64(n)/MiB)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// CodecNote is the remark a peer's Describe ends with when a Strata codec
// was asked for: the peers keep their default compression.
func CodecNote(codec string) string {
	if codec == "" {
		return ""
	}
	return fmt.Sprintf("; codec %q is Strata's, not applied", codec)
}

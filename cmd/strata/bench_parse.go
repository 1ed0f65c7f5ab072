package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// parseSize reads a byte count: a plain number, or a number with a unit.
// Binary units (KiB, MiB, GiB, TiB, and the bare K, M, G, T) are powers of
// 1024; decimal ones (KB, MB, GB, TB) powers of 1000. Case does not matter;
// fractions are allowed ("1.5GiB").
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	if num == "" {
		return 0, fmt.Errorf("bad size %q: want a number with an optional unit (64MiB, 1.5GiB, 4096)", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("bad size %q: %v", s, err)
	}
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("bad size %q: unknown unit %q (use B, KiB, MiB, GiB, TiB, or KB, MB, GB, TB)", s, t[i:])
	}
	b := v * mult
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("bad size %q: too large", s)
	}
	if b != math.Trunc(b) {
		return 0, fmt.Errorf("bad size %q: not a whole number of bytes", s)
	}
	return int64(b), nil
}

var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// formatSize prints a byte count in the largest binary unit that keeps it
// at least 1, with up to one decimal.
func formatSize(b int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v := float64(b)
	u := 0
	for math.Abs(v) >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 || v == math.Trunc(v) {
		return fmt.Sprintf("%.0f %s", v, units[u])
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}

// Engines strata bench knows. Strata runs in strata-bench-child (or the
// strata binary itself); each peer in strata-bench-<engine>, built from the
// bench/ module.
var (
	allEngines  = []string{"strata", "bbolt", "pebble", "badger"}
	peerEngines = map[string]bool{"bbolt": true, "pebble": true, "badger": true}
)

// parseEngines reads --engines: a comma list of engine names, or "all".
// Duplicates are dropped, order is kept (it is the table's order).
func parseEngines(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, e := range splitList(s) {
		e = strings.ToLower(e)
		names := []string{e}
		if e == "all" {
			names = allEngines
		} else if e != "strata" && !peerEngines[e] {
			return nil, fmt.Errorf("unknown engine %q (known: %s, all)", e, strings.Join(allEngines, ", "))
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no engine given")
	}
	return out, nil
}

// splitList splits a comma list, trimming blanks and dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// autoShare is Config.CompressedShare's "tune R online".
const autoShare = -1

// parseShare reads --r: "auto" or a compressed share in [0, 1].
func parseShare(s string) (float64, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "auto" {
		return autoShare, nil
	}
	r, err := strconv.ParseFloat(s, 64)
	if err != nil || r < 0 || r > 1 || math.IsNaN(r) {
		return 0, fmt.Errorf("bad compressed share %q: want auto or a number in [0, 1]", s)
	}
	return r, nil
}

func formatShare(r float64) string {
	if r < 0 {
		return "auto"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// The default memory limit of a child: the engine's cache plus a fixed
// allowance for the Go runtime, code, memtables and the benchmark's own
// buffers (measured: Strata's process is ~30 MiB beyond its cache, Badger's
// memtables take up to 40 MiB). In a cgroup the OS page cache the child
// fills counts against it too, which is the point: an engine reading
// through the page cache gets no more memory than one doing direct I/O. A
// generous allowance would hand the peers a second cache that Strata,
// which bypasses the page cache, cannot use (a 1.25 × cache + 256 MiB rule
// gave bbolt 260 MiB of page cache next to Strata's 16 MiB cache).
const (
	memLimitCacheFactor = 1.0
	memLimitAllowance   = 96 << 20
	// goMemLimitFraction of the memory limit becomes the child's GOMEMLIMIT,
	// the same for every engine, leaving the rest for non-heap memory
	// (stacks, mmap, page cache) before the kernel's limit is hit.
	goMemLimitFraction = 0.8
)

func defaultMemLimit(cacheBytes int64) int64 {
	return int64(memLimitCacheFactor*float64(cacheBytes)) + memLimitAllowance
}

func goMemLimit(memLimit int64) int64 { return int64(goMemLimitFraction * float64(memLimit)) }

// childGoMemLimit is the GOMEMLIMIT of an engine's child: goMemLimit of
// the memory limit, except for Strata, whose cache lives in mmap'd arenas
// outside the Go heap, so its heap's share is that of what the cache leaves.
func childGoMemLimit(engine string, memLimit, cache int64) int64 {
	if engine == "strata" && memLimit > 0 {
		return goMemLimit(max(memLimit-cache, memLimit/8))
	}
	return goMemLimit(memLimit)
}

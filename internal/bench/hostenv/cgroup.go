// Package hostenv controls the host environment of a benchmark run so that
// engines are compared on equal terms: a memory limit per child process (a
// cgroup, which also charges the OS page cache the child fills), the peak
// memory it reached, dropping the page cache between load and run, and the
// read-ahead of the device under the data directory.
//
// Everything here is Linux-specific and mostly needs root; callers treat
// the errors as "not available" and say so in the results instead of
// failing the run.
package hostenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrNoMemoryController is returned (wrapped) by Limit when no cgroup memory
// controller can be written by this process.
var ErrNoMemoryController = errors.New("no writable cgroup memory controller")

// Group is a memory cgroup created for one child process.
type Group struct {
	// Dir is the cgroup's directory, Version 1 or 2.
	Dir     string
	Version int
	// Bytes is the memory limit. SwapLimited reports whether swap is
	// limited too (v1 memory.memsw.limit_in_bytes, v2 memory.swap.max), so
	// that the child cannot escape the limit by swapping.
	Bytes       int64
	SwapLimited bool
}

// Limit creates a memory cgroup named name limited to bytes, as a child of
// this process's own cgroup when that is writable, else at the root of the
// memory hierarchy. Put the child in it with Add, and Close it after the
// child has exited.
func Limit(name string, bytes int64) (*Group, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("hostenv: memory limit %d: must be positive", bytes)
	}
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("hostenv: bad cgroup name %q", name)
	}
	selfCgroup, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("hostenv: %w: %v", ErrNoMemoryController, err)
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("hostenv: %w: %v", ErrNoMemoryController, err)
	}
	var tried []string
	for _, h := range memoryHierarchies(selfCgroup, mountinfo, readControllers) {
		for _, parent := range parentCandidates(h) {
			g, err := create(h.version, filepath.Join(parent, name), bytes)
			if err == nil {
				return g, nil
			}
			tried = append(tried, err.Error())
		}
	}
	if len(tried) == 0 {
		return nil, fmt.Errorf("hostenv: %w: no memory hierarchy mounted", ErrNoMemoryController)
	}
	return nil, fmt.Errorf("hostenv: %w: %s", ErrNoMemoryController, strings.Join(tried, "; "))
}

// parentCandidates lists where a child cgroup may be created, preferred
// first: under our own cgroup (so limits set above us still apply), then at
// the hierarchy's root (our own directory may be missing from this mount
// namespace, or read-only).
func parentCandidates(h hierarchy) []string {
	var c []string
	if h.self != "" {
		if st, err := os.Stat(h.self); err == nil && st.IsDir() {
			c = append(c, h.self)
		}
	}
	if h.self != h.mount {
		c = append(c, h.mount)
	}
	return c
}

func create(version int, dir string, bytes int64) (*Group, error) {
	// A leftover from a crashed earlier run (same name) is reused if empty.
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	g := &Group{Dir: dir, Version: version, Bytes: bytes}
	limit := strconv.FormatInt(bytes, 10)
	var err error
	switch version {
	case 1:
		// memsw (memory+swap) must be ≥ the memory limit at all times, so
		// it is written after it; a fresh group's memsw is unlimited.
		err = g.write("memory.limit_in_bytes", limit)
		if err == nil && g.exists("memory.memsw.limit_in_bytes") {
			g.SwapLimited = g.write("memory.memsw.limit_in_bytes", limit) == nil
		}
	case 2:
		err = enableMemoryV2(dir)
		if err == nil {
			err = g.write("memory.max", limit)
		}
		if err == nil && g.exists("memory.swap.max") {
			g.SwapLimited = g.write("memory.swap.max", "0") == nil
		}
	default:
		err = fmt.Errorf("cgroup version %d", version)
	}
	if err != nil {
		os.Remove(dir)
		return nil, err
	}
	return g, nil
}

// enableMemoryV2 makes the memory controller available in a new v2 cgroup:
// it must be enabled in the parent's cgroup.subtree_control, which the
// kernel refuses when the parent has processes of its own (the "no internal
// processes" rule), hence the check of the result rather than of the write.
func enableMemoryV2(dir string) error {
	if hasController(dir, "memory") {
		return nil
	}
	parent := filepath.Dir(dir)
	werr := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+memory"), 0)
	if hasController(dir, "memory") {
		return nil
	}
	if werr != nil {
		return fmt.Errorf("enable the memory controller in %s: %w", parent, werr)
	}
	return fmt.Errorf("memory controller not available in %s", dir)
}

func hasController(dir, name string) bool { return slices.Contains(readControllers(dir), name) }

func readControllers(dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

func (g *Group) write(file, value string) error {
	// The kernel validates and applies the value in write(2); no O_CREATE.
	f, err := os.OpenFile(filepath.Join(g.Dir, file), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(value)
	cerr := f.Close()
	if werr != nil {
		return fmt.Errorf("write %q to %s: %w", value, f.Name(), werr)
	}
	return cerr
}

func (g *Group) exists(file string) bool {
	_, err := os.Stat(filepath.Join(g.Dir, file))
	return err == nil
}

func (g *Group) readInt(file string) (int64, bool) {
	b, err := os.ReadFile(filepath.Join(g.Dir, file))
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil
}

// Add moves process pid into the group. Memory the process allocated
// before stays charged where it was, so move a child right after starting
// it, before it does any work.
func (g *Group) Add(pid int) error {
	if err := g.write("cgroup.procs", strconv.Itoa(pid)); err != nil {
		return fmt.Errorf("hostenv: move pid %d into cgroup %s: %w", pid, g.Dir, err)
	}
	return nil
}

// Peak returns the highest memory usage of the group so far, page cache
// included (v1 memory.max_usage_in_bytes, v2 memory.peak, Linux ≥ 5.19).
func (g *Group) Peak() (int64, bool) {
	if g.Version == 1 {
		return g.readInt("memory.max_usage_in_bytes")
	}
	return g.readInt("memory.peak")
}

// OOMKills returns how many processes of the group the kernel killed for
// exceeding the limit, where the kernel reports it ("oom_kill" in v1
// memory.oom_control since Linux 4.13, in v2 memory.events).
func (g *Group) OOMKills() (int64, bool) {
	file := "memory.events"
	if g.Version == 1 {
		file = "memory.oom_control"
	}
	b, err := os.ReadFile(filepath.Join(g.Dir, file))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// Close removes the group. Call it after the child has exited; the kernel
// refuses (EBUSY) while the group has processes, which it may still have
// for a moment after wait(2) returned, hence the short retry.
func (g *Group) Close() error {
	var err error
	for i := 0; i < 50; i++ {
		if err = os.Remove(g.Dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("hostenv: remove cgroup: %w", err)
}

package hostenv

import (
	"bufio"
	"bytes"
	"path/filepath"
	"slices"
	"strings"
)

// hierarchy is a mounted cgroup hierarchy that has the memory controller.
type hierarchy struct {
	version int    // 1 or 2
	mount   string // where the hierarchy is mounted, e.g. /sys/fs/cgroup/memory
	// self is this process's cgroup as a directory under mount; empty when
	// it is not visible there (e.g. the mount shows another subtree).
	self string
}

// mountedCgroup is one cgroup or cgroup2 line of /proc/self/mountinfo.
type mountedCgroup struct {
	version int
	root    string // the hierarchy path the mount shows at its mount point
	point   string
	options []string // super options: the v1 controllers are listed there
}

// parseMountinfo returns the cgroup mounts of a /proc/self/mountinfo.
// Format (proc(5)): "36 35 98:0 /root /mount/point opts - fstype source superopts".
func parseMountinfo(mountinfo []byte) []mountedCgroup {
	var out []mountedCgroup
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 1 {
			continue
		}
		m := mountedCgroup{root: unescapeMountinfo(f[3]), point: unescapeMountinfo(f[4])}
		switch g[0] {
		case "cgroup":
			m.version = 1
		case "cgroup2":
			m.version = 2
		default:
			continue
		}
		if len(g) >= 3 {
			m.options = strings.Split(g[2], ",")
		}
		out = append(out, m)
	}
	return out
}

// unescapeMountinfo undoes the octal escapes (\040 for a space, ...) the
// kernel uses for paths in mountinfo.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			v := 0
			ok := true
			for _, c := range s[i+1 : i+4] {
				if c < '0' || c > '7' {
					ok = false
					break
				}
				v = v*8 + int(c-'0')
			}
			if ok {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// memoryHierarchies finds where the memory controller is mounted and where
// this process sits in it, from /proc/self/cgroup and /proc/self/mountinfo.
// A v1 memory hierarchy comes first: on hybrid hosts the v2 hierarchy is
// mounted too but the memory controller is bound to v1, and v2 cannot use
// it. controllersV2 reports the controllers available at a v2 directory
// (cgroup.controllers), which mountinfo does not list.
func memoryHierarchies(selfCgroup, mountinfo []byte, controllersV2 func(dir string) []string) []hierarchy {
	var v1Path, v2Path string
	haveV1, haveV2 := false, false
	sc := bufio.NewScanner(bytes.NewReader(selfCgroup))
	for sc.Scan() {
		// "hierarchy-ID:controller-list:cgroup-path"; v2 is "0::path".
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2Path, haveV2 = parts[2], true
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				v1Path, haveV1 = parts[2], true
			}
		}
	}
	var out []hierarchy
	for _, m := range parseMountinfo(mountinfo) {
		switch {
		case m.version == 1 && haveV1 && slices.Contains(m.options, "memory"):
			out = append(out, hierarchy{version: 1, mount: m.point, self: selfDir(m, v1Path)})
		case m.version == 2 && haveV2:
			h := hierarchy{version: 2, mount: m.point, self: selfDir(m, v2Path)}
			probe := h.self
			if probe == "" {
				probe = h.mount
			}
			if slices.Contains(controllersV2(probe), "memory") || slices.Contains(controllersV2(h.mount), "memory") {
				out = append(out, h)
			}
		}
	}
	// v1 before v2 (see above), keeping mount order otherwise.
	sorted := make([]hierarchy, 0, len(out))
	for _, v := range []int{1, 2} {
		for _, h := range out {
			if h.version == v {
				sorted = append(sorted, h)
			}
		}
	}
	return sorted
}

// selfDir maps a cgroup path from /proc/self/cgroup to a directory under the
// mount, which may show only a subtree (m.root) of the hierarchy.
func selfDir(m mountedCgroup, path string) string {
	rel, ok := strings.CutPrefix(path, m.root)
	if !ok || (rel != "" && !strings.HasPrefix(rel, "/") && m.root != "/") {
		return ""
	}
	return filepath.Join(m.point, rel)
}

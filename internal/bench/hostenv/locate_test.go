package hostenv

import (
	"slices"
	"testing"
)

// This machine's layout: a hybrid host whose memory controller is bound to
// a v1 hierarchy; the v2 hierarchy is mounted too but has no controllers.
const hybridCgroup = `9:name=systemd:/
4:memory:/process_api/cf73
3:cpuset:/
0::/
`

const hybridMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

func TestMemoryHierarchies(t *testing.T) {
	noControllers := func(string) []string { return nil }
	memoryEverywhere := func(string) []string { return []string{"cpu", "io", "memory", "pids"} }
	tests := []struct {
		name        string
		cgroup      string
		mountinfo   string
		controllers func(string) []string
		want        []hierarchy
	}{
		{
			name: "hybrid: v1 memory, v2 without controllers", cgroup: hybridCgroup, mountinfo: hybridMountinfo,
			controllers: noControllers,
			want:        []hierarchy{{version: 1, mount: "/sys/fs/cgroup/memory", self: "/sys/fs/cgroup/memory/process_api/cf73"}},
		},
		{
			name: "hybrid: v1 preferred even if v2 claims memory", cgroup: hybridCgroup, mountinfo: hybridMountinfo,
			controllers: memoryEverywhere,
			want: []hierarchy{
				{version: 1, mount: "/sys/fs/cgroup/memory", self: "/sys/fs/cgroup/memory/process_api/cf73"},
				{version: 2, mount: "/sys/fs/cgroup/unified", self: "/sys/fs/cgroup/unified"},
			},
		},
		{
			name: "pure v2", cgroup: "0::/user.slice/session-1.scope\n",
			mountinfo:   "25 21 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
			controllers: memoryEverywhere,
			want:        []hierarchy{{version: 2, mount: "/sys/fs/cgroup", self: "/sys/fs/cgroup/user.slice/session-1.scope"}},
		},
		{
			name: "v2 without memory controller", cgroup: "0::/a\n",
			mountinfo:   "25 21 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			controllers: noControllers,
		},
		{
			name: "v1 mount showing our own subtree (container)", cgroup: "4:memory:/docker/abc\n",
			mountinfo:   "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro,relatime - cgroup cgroup rw,memory\n",
			controllers: noControllers,
			want:        []hierarchy{{version: 1, mount: "/sys/fs/cgroup/memory", self: "/sys/fs/cgroup/memory"}},
		},
		{
			name: "v1 mount showing another subtree", cgroup: "4:memory:/other\n",
			mountinfo:   "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			controllers: noControllers,
			want:        []hierarchy{{version: 1, mount: "/sys/fs/cgroup/memory", self: ""}},
		},
		{
			name: "v1 mount with a path that only shares a prefix", cgroup: "4:memory:/docker/abcdef\n",
			mountinfo:   "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			controllers: noControllers,
			want:        []hierarchy{{version: 1, mount: "/sys/fs/cgroup/memory", self: ""}},
		},
		{
			name: "memory and cpu co-mounted, path with a space", cgroup: "3:cpu,memory:/my group\n",
			mountinfo:   `35 31 0:32 / /cg/cpu\040mem rw - cgroup cgroup rw,cpu,memory` + "\n",
			controllers: noControllers,
			want:        []hierarchy{{version: 1, mount: "/cg/cpu mem", self: "/cg/cpu mem/my group"}},
		},
		{
			name: "no memory controller at all", cgroup: "3:cpu:/\n",
			mountinfo:   "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
			controllers: noControllers,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := memoryHierarchies([]byte(tt.cgroup), []byte(tt.mountinfo), tt.controllers)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParentCandidates(t *testing.T) {
	dir := t.TempDir()
	if got := parentCandidates(hierarchy{mount: dir, self: dir + "/missing"}); !slices.Equal(got, []string{dir}) {
		t.Errorf("own cgroup missing: got %v, want only the root", got)
	}
	if got := parentCandidates(hierarchy{mount: "/root-of-hierarchy", self: dir}); !slices.Equal(got, []string{dir, "/root-of-hierarchy"}) {
		t.Errorf("got %v, want own cgroup then the root", got)
	}
	if got := parentCandidates(hierarchy{mount: dir, self: dir}); !slices.Equal(got, []string{dir}) {
		t.Errorf("own cgroup is the root: got %v, want it once", got)
	}
}

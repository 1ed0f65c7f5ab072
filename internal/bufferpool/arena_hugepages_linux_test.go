package bufferpool

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/stratadb/strata/internal/vfs"
)

// TestArenasRefuseHugePages: both arenas are advised out of transparent
// huge pages (VmFlags "nh" in /proc/self/smaps). Where THP applies to
// anonymous memory ("always"), one frame touched would otherwise make a
// 2 MiB page resident, and the pool's count of resident memory (its
// budget) would not be the process's.
func TestArenasRefuseHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skipf("no transparent huge pages here (%v): no advice to give", err)
	}
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 16 << 20, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	populate(t, p, 1)
	pt := p.parts[0]
	for name, a := range map[string]*arena{"frames": pt.frames, "images": pt.imgArena} {
		flags := vmFlags(t, uintptr(unsafe.Pointer(unsafe.SliceData(a.mem))))
		if !strings.Contains(" "+flags+" ", " nh ") {
			t.Errorf("%s arena: VmFlags %q, without nh (MADV_NOHUGEPAGE)", name, flags)
		}
	}
}

// vmFlags returns the VmFlags of the mapping that holds addr (adjacent
// arenas with the same flags may be one mapping).
func vmFlags(t *testing.T, addr uintptr) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		var from, to uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &from, &to); n == 2 {
			in = from <= addr && addr < to
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:"))
		}
	}
	t.Fatalf("no mapping holds %x", addr)
	return ""
}

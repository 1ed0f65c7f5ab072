package vfs

import (
	"math/rand/v2"
	"testing"
)

// TestMemLostBytesAfterSurvivingTruncation: bytes a failed Sync lost keep
// their durable value in a crash image, and when an unsynced truncation
// survives the crash (CrashNamespace), the durable value is what the
// truncation left: zeros where it cut, never the bytes it freed. (Found by
// a reviewer, thirty-third session: a torn image brought back "cd".)
func TestMemLostBytesAfterSurvivingTruncation(t *testing.T) {
	m := NewMem()
	f := create(t, m, "f")
	must(t, m.SyncDir("/"))
	writeAt(t, f, "abcdef", 0)
	must(t, f.Sync())
	must(t, f.Truncate(2))
	must(t, f.Truncate(6))
	writeAt(t, f, "WXYZ", 2)
	m.SetInjector(InjectAfter(0, OpSync))
	_ = f.Sync() // fails: "WXYZ" is lost, the truncations stay unsynced
	m.SetInjector(nil)
	rng := rand.New(rand.NewPCG(1, 2))
	for seed := range 300 {
		got := contents(t, m.CrashClone(CrashTorn|CrashNamespace, rng), "f")
		if got != "abcdef" && len(got) >= 4 && got[2:4] == "cd" {
			t.Fatalf("crash image %d %q: the truncation survived, yet the bytes it freed came back", seed, got)
		}
	}
}

package vfs

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
)

// CrashMode says what a simulated power loss does to file contents that
// were written but not synced. In both modes the namespace after the crash
// is the durable namespace (see MemFS): exactly the directory entries that
// some SyncDir made durable, recursively from the root.
type CrashMode int

const (
	// CrashDropUnsynced loses everything not synced: each surviving file
	// holds exactly its durable contents (as of its last File.Sync; empty
	// if never synced).
	CrashDropUnsynced CrashMode = iota

	// CrashTorn keeps a random part of the unsynced changes, as when the
	// page cache had written some of them back before the power went, and
	// may leave garbage where a sector write was cut. For each surviving
	// file, independently, with cur its current contents and dur its
	// durable contents:
	//
	//  1. Let p be the length of the longest common prefix of cur and dur.
	//     Draw n uniformly from [p, len(cur)].
	//  2. The file becomes cur[:n] followed, if len(dur) > n, by dur[n:]:
	//     the changes below offset n persisted, those above did not, and the
	//     size is max(n, len(dur)).
	//  3. If n > len(dur) (the file grew past its durable size), with
	//     probability 1/2 the bytes from max(len(dur), s) to n, where s is
	//     the start of the 512-byte sector holding byte n-1, are replaced by
	//     random bytes: a torn last sector.
	//
	// Drawing n from [0, len(cur)] would reach the same set of states: every
	// n <= p gives back dur (up to len(dur)). Starting at p makes crash tests
	// hit the states that differ from CrashDropUnsynced more often. The model
	// treats unsynced changes as persisting in file-offset order, which fits
	// append-only files such as Strata's segments; it does not produce
	// states where a later block persisted but an earlier one did not.
	CrashTorn
)

// String returns "drop-unsynced" or "torn".
func (c CrashMode) String() string {
	switch c {
	case CrashDropUnsynced:
		return "drop-unsynced"
	case CrashTorn:
		return "torn"
	}
	return fmt.Sprintf("CrashMode(%d)", int(c))
}

// tornSector is the size of the unit that a power loss can leave half
// written, a disk sector.
const tornSector = 512

// Crash simulates a power loss and a reboot, in place. The file system's
// contents become the crash image given by mode (see CrashMode); rng draws
// the torn states and may be nil for CrashDropUnsynced. Every file and lock
// handle obtained before the crash fails with ErrCrashed from then on, all
// locks are released, and the file system is usable again: new OpenFile
// calls work, and a crash point reached earlier (CrashAfterOps) is cleared.
// The injector, the short-write hook and OpCount are kept.
//
// The image is a deterministic function of the state and of rng: a seeded
// rng reproduces a torn crash.
func (m *MemFS) Crash(mode CrashMode, rng *rand.Rand) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.root = m.crashImage(mode, rng)
	m.gen++
	m.locks = map[string]bool{}
	m.crashed = false
	m.crashAt = -1
}

// CrashClone returns a new MemFS holding the image that Crash(mode, rng)
// would leave, and leaves m unchanged, so that one run can yield many crash
// images. The clone has no injector, short-write hook or crash point, and
// its OpCount is zero.
func (m *MemFS) CrashClone(mode CrashMode, rng *rand.Rand) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := NewMem()
	c.root = m.crashImage(mode, rng)
	return c
}

// CrashedClone returns the post-crash image, as CrashClone does, of the
// state captured when the crash point armed by CrashAfterOps was reached.
// Nothing can change a crashed MemFS, so that is its present state. If the
// crash point was not reached (see Crashed), it is the image of a crash now.
func (m *MemFS) CrashedClone(mode CrashMode, rng *rand.Rand) *MemFS {
	return m.CrashClone(mode, rng)
}

// crashImage builds the root of the file system a crash would leave.
// Called with m.mu held; it reads m and changes nothing.
func (m *MemFS) crashImage(mode CrashMode, rng *rand.Rand) *memNode {
	if mode != CrashDropUnsynced && mode != CrashTorn {
		panic(fmt.Sprintf("vfs: unknown crash mode %d", int(mode)))
	}
	if mode == CrashTorn && rng == nil {
		panic("vfs: CrashTorn needs an rng")
	}
	// A node reachable under several durable names (renamed into another
	// directory and both directories synced, the old one before the rename)
	// stays one node, like a hard link, and draws its torn state once.
	done := map[*memNode]*memNode{}
	var clone func(n *memNode) *memNode
	clone = func(n *memNode) *memNode {
		if c, ok := done[n]; ok {
			return c
		}
		c := &memNode{dir: n.dir, perm: n.perm, modTime: n.modTime}
		done[n] = c
		if n.dir {
			c.children = make(map[string]*memNode, len(n.syncedChildren))
			// Sorted, so that a seeded rng gives the same image every time.
			for _, name := range slices.Sorted(maps.Keys(n.syncedChildren)) {
				c.children[name] = clone(n.syncedChildren[name])
			}
			c.syncedChildren = maps.Clone(c.children)
			return c
		}
		var data []byte
		if mode == CrashTorn {
			data = tornContents(n.diskData(), n.synced, rng)
		} else {
			data = slices.Clone(n.synced)
		}
		// After a reboot everything on disk is durable.
		c.data = data
		c.synced = data[:len(data):len(data)]
		c.shared = true
		return c
	}
	return clone(m.root)
}

// tornContents returns a file's contents after a CrashTorn crash, in a new
// slice; see CrashTorn for the model.
func tornContents(cur, dur []byte, rng *rand.Rand) []byte {
	p := 0
	for p < len(cur) && p < len(dur) && cur[p] == dur[p] {
		p++
	}
	n := p + rng.IntN(len(cur)-p+1)
	out := make([]byte, max(n, len(dur)))
	copy(out, cur[:n])
	if len(dur) > n {
		copy(out[n:], dur[n:])
	}
	if n > len(dur) && rng.IntN(2) == 0 {
		start := max(len(dur), (n-1)/tornSector*tornSector)
		for i := start; i < n; i++ {
			out[i] = byte(rng.Uint32())
		}
	}
	return out
}

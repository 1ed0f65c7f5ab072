package vfs

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
)

// CrashMode says what a simulated power loss does to file contents that
// were written but not synced, and to namespace operations not made durable.
// It is CrashDropUnsynced or CrashTorn, possibly combined (|) with the
// flags CrashNamespace and (with CrashTorn only) CrashScatter; CrashStrict
// combines all of them. Without CrashNamespace the namespace after the crash
// is the durable namespace (see MemFS): exactly the directory entries that
// some SyncDir made durable, recursively from the root.
//
// Lock rules for this file: the exported functions take the MemFS's mu;
// the others are called with it held, or touch no MemFS.
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
	// treats unsynced changes as persisting in file-offset order; add
	// CrashScatter for states where a later sector persisted but an earlier
	// one did not.
	CrashTorn

	// CrashNamespace, combined with either mode, lets unsynced namespace
	// operations (creations, removals, renames, truncations) survive, as
	// ext4's journal commits them: the image applies, on top of the durable
	// namespace, the first k operations not yet made durable, in the order
	// they were made, k drawn uniformly (see mem_journal.go). A truncation
	// that survives changes the file's durable contents (cut, or extended
	// with zeros) before the file's data rules apply. A file whose creation
	// survives but that was never synced has no durable contents.
	CrashNamespace CrashMode = 2

	// CrashScatter, combined with CrashTorn, replaces its offset-order
	// model: the unsynced sectors of a file persist in any order, as the
	// page cache and the disk may write them. For each file, with cur its
	// current contents and dur its durable contents, p the length of their
	// longest common prefix:
	//
	//  1. The size L is drawn uniformly from [len(dur), max(len(dur),
	//     len(cur))]; the file starts as dur, cut or zero-extended to L
	//     (bytes never written read as zeros).
	//  2. A probability q is drawn: 0 or 1 a quarter of the time each,
	//     else uniform. Every 512-byte sector from the one holding p up to
	//     L persists with probability q, independently: its bytes below
	//     min(L, len(cur)) become cur's.
	//  3. With probability 1/2, one sector of that range, drawn uniformly,
	//     is torn: from a random offset in it to its end, its bytes are
	//     dur's again below len(dur) and random above.
	CrashScatter CrashMode = 4

	// CrashStrict is the strictest model: torn, scattered sectors, and
	// unsynced namespace operations that may survive.
	CrashStrict = CrashTorn | CrashNamespace | CrashScatter
)

// CrashModes lists the modes that crash tests should cycle through: the two
// base modes, and the namespace-journal model with each data model.
var CrashModes = []CrashMode{CrashDropUnsynced, CrashTorn, CrashDropUnsynced | CrashNamespace, CrashStrict}

// String returns "drop-unsynced" or "torn", followed by "+namespace" and
// "+scatter" for the flags set.
func (c CrashMode) String() string {
	if c&^(CrashTorn|CrashNamespace|CrashScatter) != 0 {
		return fmt.Sprintf("CrashMode(%d)", int(c))
	}
	s := "drop-unsynced"
	if c&CrashTorn != 0 {
		s = "torn"
	}
	if c&CrashNamespace != 0 {
		s += "+namespace"
	}
	if c&CrashScatter != 0 {
		s += "+scatter"
	}
	return s
}

// tornSector is the size of the unit that a power loss can leave half
// written, a disk sector.
const tornSector = 512

// Crash simulates a power loss and a reboot, in place. The file system's
// contents become the crash image given by mode (see CrashMode); rng draws
// the torn states and surviving namespace operations, and may be nil for
// CrashDropUnsynced alone. Every file and lock
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
	m.journal = nil
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
	c.refuseDirect = m.refuseDirect
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
	if mode&^(CrashTorn|CrashNamespace|CrashScatter) != 0 {
		panic(fmt.Sprintf("vfs: unknown crash mode %d", int(mode)))
	}
	if mode&CrashScatter != 0 && mode&CrashTorn == 0 {
		panic("vfs: CrashScatter needs CrashTorn")
	}
	if mode != CrashDropUnsynced && rng == nil {
		panic(fmt.Sprintf("vfs: crash mode %v needs an rng", mode))
	}
	// The journal's surviving prefix: the entries of the directories it
	// touched, and the sizes of the files it truncated.
	var entries map[*memNode]map[string]*memNode
	var truncs map[*memNode]truncation
	if mode&CrashNamespace != 0 {
		entries, truncs = m.journalPrefix(rng.IntN(len(m.journal) + 1))
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
			src := n.syncedChildren
			if e, ok := entries[n]; ok {
				src = e
			}
			c.children = make(map[string]*memNode, len(src))
			// Sorted, so that a seeded rng gives the same image every time.
			for _, name := range slices.Sorted(maps.Keys(src)) {
				c.children[name] = clone(src[name])
			}
			c.syncedChildren = maps.Clone(c.children)
			return c
		}
		dur := n.synced
		if t, ok := truncs[n]; ok {
			dur = t.apply(dur)
		}
		var data []byte
		switch {
		case mode&CrashScatter != 0:
			data = scatteredContents(n.diskData(dur), dur, rng)
		case mode&CrashTorn != 0:
			data = tornContents(n.diskData(dur), dur, rng)
		default:
			data = slices.Clone(dur)
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

// scatteredContents returns a file's contents after a CrashTorn|CrashScatter
// crash, in a new slice; see CrashScatter for the model.
func scatteredContents(cur, dur []byte, rng *rand.Rand) []byte {
	p := 0
	for p < len(cur) && p < len(dur) && cur[p] == dur[p] {
		p++
	}
	size := len(dur) + rng.IntN(max(len(cur)-len(dur), 0)+1)
	out := make([]byte, size)
	copy(out, dur)
	var q float64
	switch rng.IntN(4) {
	case 0:
		q = 0
	case 1:
		q = 1
	default:
		q = rng.Float64()
	}
	first := p / tornSector * tornSector
	for s := first; s < size; s += tornSector {
		if rng.Float64() < q {
			copy(out[s:min(s+tornSector, size)], cur[min(s, len(cur)):min(s+tornSector, size, len(cur))])
		}
	}
	if first < size && rng.IntN(2) == 0 {
		s := first + rng.IntN((size-first+tornSector-1)/tornSector)*tornSector
		end := min(s+tornSector, size)
		for i := s + rng.IntN(end-s); i < end; i++ {
			if i < len(dur) {
				out[i] = dur[i]
			} else {
				out[i] = byte(rng.Uint32())
			}
		}
	}
	return out
}

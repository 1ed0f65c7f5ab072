package vfs

// The MemFS journal: the namespace operations not yet known durable, in the
// order they were made, for crash images with CrashNamespace. Lock rules:
// every function here is called with the MemFS's mu held.
//
// On ext4 (data=ordered) every metadata operation (create, remove, rename,
// truncate) goes to the journal, which is committed by any fsync and every
// few seconds anyway, whole and in order. So an operation that no SyncDir
// (or, for a truncation, no Sync of the file) made durable may still
// survive a power loss, and if it does, so does every metadata operation
// made before it. POSIX promises neither; code must be correct whether such
// an operation persisted or not.
//
// A journal entry is dropped once what it did is durable anyway: a
// directory entry change once its directory is synced (SyncDir), a
// truncation once its file is synced. A crash image with CrashNamespace
// applies the first k remaining entries (k drawn from [0, len]) on top of
// the durable namespace: each directory then shows its entries as of the
// later of its last SyncDir and one instant common to all directories.

import (
	"maps"
	"slices"
)

// nsChange is one change to a directory entry: dir's entry name names node
// after it, or nothing if node is nil.
type nsChange struct {
	dir  *memNode
	name string
	node *memNode
}

// nsOp is one namespace operation: entry changes made atomically (a rename
// is two), or a truncation of file to size.
type nsOp struct {
	changes []nsChange
	file    *memNode
	size    int64
}

// logEntries records an operation that made changes to directory entries.
func (m *MemFS) logEntries(changes ...nsChange) {
	m.journal = append(m.journal, nsOp{changes: changes})
}

// logTruncate records a change of file's size by a truncation.
func (m *MemFS) logTruncate(file *memNode, size int64) {
	m.journal = append(m.journal, nsOp{file: file, size: size})
}

// journalDirSynced drops the journal's changes to dir, whose current
// entries have just become durable.
func (m *MemFS) journalDirSynced(dir *memNode) {
	m.pruneJournal(func(op *nsOp) {
		op.changes = slices.DeleteFunc(op.changes, func(c nsChange) bool { return c.dir == dir })
	})
}

// journalFileSynced drops the journal's truncations of file, whose size has
// just become durable.
func (m *MemFS) journalFileSynced(file *memNode) {
	m.pruneJournal(func(op *nsOp) {
		if op.file == file {
			op.file = nil
		}
	})
}

// pruneJournal applies drop to every entry, then removes those left empty.
func (m *MemFS) pruneJournal(drop func(op *nsOp)) {
	for i := range m.journal {
		drop(&m.journal[i])
	}
	m.journal = slices.DeleteFunc(m.journal, func(op nsOp) bool {
		return len(op.changes) == 0 && op.file == nil
	})
}

// truncation is what a file's truncations do to its durable contents: keep
// the first cut bytes, then zero-extend (or cut) to size.
type truncation struct{ cut, size int64 }

// apply returns b truncated as t says, sharing b's array when cut.
func (t truncation) apply(b []byte) []byte {
	b = b[:min(t.cut, int64(len(b))):min(t.cut, int64(len(b)))]
	if t.size <= int64(len(b)) {
		return b[:t.size:t.size]
	}
	out := make([]byte, t.size)
	copy(out, b)
	return out
}

// journalPrefix returns what the first k journal entries change on top of
// the durable state: the entries of each directory they touch (its durable
// entries with the changes applied, in order), and the truncations of each
// file they truncate.
func (m *MemFS) journalPrefix(k int) (entries map[*memNode]map[string]*memNode, truncs map[*memNode]truncation) {
	entries = map[*memNode]map[string]*memNode{}
	truncs = map[*memNode]truncation{}
	for _, op := range m.journal[:k] {
		for _, c := range op.changes {
			e, ok := entries[c.dir]
			if !ok {
				e = maps.Clone(c.dir.syncedChildren)
				entries[c.dir] = e
			}
			if c.node == nil {
				delete(e, c.name)
			} else {
				e[c.name] = c.node
			}
		}
		if op.file != nil {
			t, ok := truncs[op.file]
			if !ok {
				t.cut = op.size
			}
			t.cut = min(t.cut, op.size)
			t.size = op.size
			truncs[op.file] = t
		}
	}
	return entries, truncs
}

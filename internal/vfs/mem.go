package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MemFS is an in-memory file system that knows what a power loss would
// leave behind, modelled on Pebble's strict MemFS.
//
// # Durability
//
// Every file has its current contents and its durable contents. File.Sync
// makes the current contents (data and size) durable. Directory entries are
// separate: creating, renaming or removing a file or directory changes the
// current namespace at once, but the change becomes durable only when
// SyncDir is called on the directory that holds the entry (CrashNamespace
// images may keep it anyway, as ext4's journal would; see mem_journal.go). The durable
// namespace of a directory is a snapshot of its entries as of its last
// SyncDir, each entry naming a file or directory node (not a copy of it: a
// node's own contents keep their own durability). This is what POSIX
// promises, and stricter than ext4 in practice; code that survives MemFS
// crashes does not rely on any particular file system's kindness:
//
//   - a created file survives a crash only if its directory was synced after
//     the creation, and has only the data synced into it;
//   - a directory made by MkdirAll survives only if its parent was synced
//     after (the root always exists);
//   - a rename is atomic, but the crash image shows the old name until the
//     new name's directory is synced (and the old name still exists until
//     the old directory is synced too).
//
// A File.Sync that fails (by injection) loses the file's dirty bytes as a
// failed fsync does on Linux: they stay readable until the crash, but a
// later successful Sync does not make them durable, and a crash image
// shows the durable bytes in their place; see mem_failedsync.go, and
// NotIssuedError for injected failures that stand for a process death.
//
// Crash and CrashClone compute the state a crash would leave, in one of the
// CrashModes; see CrashMode for the exact model of each.
//
// # Paths
//
// Names are cleaned with filepath.Clean and taken relative to the root:
// "/db/x", "db/x" and "db/../db/x" are the same file. A name that climbs
// above the root ("../x") is invalid. There are no symbolic links and no
// permission checks (perm is only recorded for Stat).
//
// # Files
//
// OpenFile respects O_RDONLY, O_WRONLY, O_RDWR, O_CREATE, O_EXCL and
// O_TRUNC; O_APPEND is refused (Strata writes at explicit offsets).
// Directories cannot be opened as files. A file removed or renamed while
// open stays readable and writable through its handle, as on Unix. With
// OpenOptions.Direct, Direct reports true and every read and write must be
// aligned (offset, length and buffer address multiples of BlockSize), as
// O_DIRECT demands, so that tests catch misaligned direct I/O; misaligned
// transfers fail with ErrUnaligned.
//
// # Faults
//
// SetInjector installs a function consulted before every operation, which
// can fail it; SetShortWrites makes writes transfer only part of their
// bytes. CrashAfterOps makes the file system crash after a given number of
// mutating operations (see OpCount), after which everything fails with
// ErrCrashed and CrashedClone gives the post-crash image; a workload can so
// be crashed at every one of its operations in turn.
//
// A MemFS is safe for concurrent use; one mutex serializes all operations.
type MemFS struct {
	mu   sync.Mutex
	root *memNode
	// gen is incremented by Crash. Handles remember the generation they
	// were opened in and fail with ErrCrashed once it is past.
	gen uint64
	// locks holds the cleaned paths locked with Lock.
	locks map[string]bool

	injector   Injector
	shortWrite func(path string, off int64, n int) int

	// ops counts mutating operations (see OpCount).
	ops int
	// crashAt is the value of ops at which the file system crashes, or -1.
	crashAt int
	// crashed: the crash point was reached; every operation fails and the
	// tree is frozen as it was at that instant.
	crashed bool

	// journal lists the namespace operations not yet known durable, in
	// order (see mem_journal.go).
	journal []nsOp
	// refuseDirect: files opened with Direct are buffered, as on a file
	// system that refuses O_DIRECT (see RefuseDirect).
	refuseDirect bool
}

// RefuseDirect makes m a file system that refuses O_DIRECT, as the OS
// implementation finds some (tmpfs before Linux 6.6, some FUSE file
// systems, every non-Linux system): a file opened with Direct is buffered
// and its Direct reports false, but its reads and writes must still be
// aligned, so that tests catch misaligned direct I/O there too. Crash
// images keep the setting.
func (m *MemFS) RefuseDirect() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refuseDirect = true
}

// memNode is a file or a directory. Handles and directory entries (current
// and durable) point to nodes, so a node renamed or removed while open is
// the same node everywhere.
type memNode struct {
	dir     bool
	perm    os.FileMode
	modTime time.Time

	// Files. data is the current contents, synced the durable contents.
	// Sync does not copy: it makes synced a capacity-limited slice of data
	// and sets shared, and the next write that would touch bytes below
	// len(synced) copies data first (see cow). Without this, syncing an
	// append-only file after every small append would copy the whole file
	// each time.
	data   []byte
	synced []byte
	shared bool
	// lost holds the spans of data that a failed Sync marked clean without
	// writing them (see mem_failedsync.go), sorted and disjoint.
	lost []span

	// Directories: current entries, and durable entries as of the last
	// SyncDir.
	children       map[string]*memNode
	syncedChildren map[string]*memNode
}

func newDirNode(perm os.FileMode) *memNode {
	return &memNode{
		dir:            true,
		perm:           perm.Perm(),
		modTime:        time.Now(),
		children:       map[string]*memNode{},
		syncedChildren: map[string]*memNode{},
	}
}

// cow gives the node a private copy of data if a change at offset lo or
// above could be seen through synced.
func (n *memNode) cow(lo int64) {
	if n.shared && lo < int64(len(n.synced)) {
		n.data = slices.Clone(n.data)
		n.shared = false
	}
}

// resize sets the file's current size, zero-filling any growth, as
// ftruncate does.
func (n *memNode) resize(size int64) {
	old := int64(len(n.data))
	if size <= old {
		n.data = n.data[:size]
		n.unlose(size, old)
		return
	}
	n.cow(old)
	if size <= int64(cap(n.data)) {
		// The bytes past len may hold data from before an earlier shrink.
		n.data = n.data[:size]
		clear(n.data[old:])
		return
	}
	grown := make([]byte, size, max(size, 2*int64(cap(n.data))))
	copy(grown, n.data)
	n.data = grown
	n.shared = false
}

// writeAt writes p at off, growing the file with zeros as needed.
func (n *memNode) writeAt(p []byte, off int64) {
	if len(p) == 0 {
		return
	}
	if end := off + int64(len(p)); end <= int64(len(n.data)) && bytes.Equal(n.data[off:end], p) {
		// The bytes it holds already (recovery writing what it replays
		// again): nothing to copy, only lost bytes to dirty again.
		n.unlose(off&^(osPageSize-1), (end+osPageSize-1)&^(osPageSize-1))
		n.modTime = time.Now()
		return
	}
	n.cow(min(off, int64(len(n.data))))
	if end := off + int64(len(p)); end > int64(len(n.data)) {
		n.resize(end)
	}
	copy(n.data[off:], p)
	// The OS dirties whole pages: a write anywhere in a page makes the
	// next write-back write all of it, lost bytes included.
	n.unlose(off&^(osPageSize-1), (off+int64(len(p))+osPageSize-1)&^(osPageSize-1))
	n.modTime = time.Now()
}

// NewMem returns an empty MemFS: a root directory and nothing else.
func NewMem() *MemFS {
	return &MemFS{root: newDirNode(0o755), locks: map[string]bool{}, crashAt: -1}
}

// SetInjector makes fn decide, before every operation, whether it fails
// (see Injector); nil removes the injector. Operations that fn fails have no
// effect, except that mutating ones still count for OpCount and
// CrashAfterOps. The injector stays in place across Crash.
func (m *MemFS) SetInjector(fn Injector) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.injector = fn
}

// SetShortWrites makes fn decide how many bytes each write transfers: for a
// write of n bytes at off on path, if fn returns k < n, only the first k
// bytes (none if k <= 0) are written and WriteAt returns k and an error
// wrapping both ErrInjected and io.ErrShortWrite. A k >= n is a normal
// write. fn is called after the injector, only for writes it let through,
// with the MemFS lock held, so it must not call into the MemFS. nil
// removes the hook. It stays in place across Crash.
func (m *MemFS) SetShortWrites(fn func(path string, off int64, n int) int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.shortWrite = fn
}

// OpCount returns the number of mutating operations performed so far:
// writes, file syncs, truncations, removals, renames, directory syncs,
// MkdirAll calls, locks, and opens with O_CREATE or O_TRUNC. An operation
// counts once it has been attempted on a file system that had not crashed,
// whether it succeeded, failed or was failed by the injector. Crash does not
// reset the count. A test can run a deterministic workload once to learn
// its count, then crash it at every point in [0, count) with CrashAfterOps.
func (m *MemFS) OpCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ops
}

// CrashAfterOps arms a crash point: once n more mutating operations (see
// OpCount) have completed, the file system crashes at that instant. Its
// state is frozen as it was then, Crashed reports true, every later
// operation, on the FS or on any file or lock handle, fails with ErrCrashed,
// and CrashedClone (or Crash, to reboot in place) gives the post-crash
// image. With n == 0 the file system crashes at once; a negative n disarms
// the crash point.
func (m *MemFS) CrashAfterOps(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case n < 0:
		m.crashAt = -1
	case n == 0:
		m.crashed = true
		m.crashAt = -1
	default:
		m.crashAt = m.ops + n
	}
}

// Crashed reports whether the crash point set by CrashAfterOps was reached
// (and the file system has not been rebooted by Crash since).
func (m *MemFS) Crashed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.crashed
}

// mutated records the completion of a mutating operation and crashes the
// file system if that reached the crash point. Called with m.mu held.
func (m *MemFS) mutated() {
	m.ops++
	if m.crashAt >= 0 && m.ops >= m.crashAt {
		m.crashed = true
		m.crashAt = -1
	}
}

// begin starts an operation: it fails if the file system crashed, then asks
// the injector. Called with m.mu held. A mutating operation that gets past
// the crash check must call m.mutated when done, whatever its outcome.
func (m *MemFS) begin(op Op, path string) (crashErr, injErr error) {
	if m.crashed {
		return &os.PathError{Op: op.String(), Path: path, Err: ErrCrashed}, nil
	}
	if m.injector != nil {
		return nil, m.injector(op, path)
	}
	return nil, nil
}

// splitPath cleans name and splits it into components below the root; the
// root itself has none.
func splitPath(op, name string) ([]string, error) {
	c := filepath.ToSlash(filepath.Clean(name))
	c = strings.TrimLeft(c, "/")
	if c == "" || c == "." {
		return nil, nil
	}
	parts := strings.Split(c, "/")
	if parts[0] == ".." {
		return nil, &os.PathError{Op: op, Path: name, Err: fmt.Errorf("path escapes the file system root: %w", syscall.EINVAL)}
	}
	return parts, nil
}

// lookupDir returns the directory at comps.
func (m *MemFS) lookupDir(op, name string, comps []string) (*memNode, error) {
	d := m.root
	for _, c := range comps {
		next, ok := d.children[c]
		if !ok {
			return nil, &os.PathError{Op: op, Path: name, Err: os.ErrNotExist}
		}
		if !next.dir {
			return nil, &os.PathError{Op: op, Path: name, Err: syscall.ENOTDIR}
		}
		d = next
	}
	return d, nil
}

// lookupParent resolves name to its parent directory and its last
// component. The root has no parent: that is an EINVAL error.
func (m *MemFS) lookupParent(op, name string) (*memNode, string, error) {
	comps, err := splitPath(op, name)
	if err != nil {
		return nil, "", err
	}
	if len(comps) == 0 {
		return nil, "", &os.PathError{Op: op, Path: name, Err: syscall.EINVAL}
	}
	d, err := m.lookupDir(op, name, comps[:len(comps)-1])
	if err != nil {
		return nil, "", err
	}
	return d, comps[len(comps)-1], nil
}

// OpenFile implements FS; see MemFS for the flags it supports.
func (m *MemFS) OpenFile(name string, flag int, perm os.FileMode, opts OpenOptions) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cerr, ierr := m.begin(OpOpen, name)
	if cerr != nil {
		return nil, cerr
	}
	if flag&(os.O_CREATE|os.O_TRUNC) != 0 {
		defer m.mutated()
	}
	if ierr != nil {
		return nil, ierr
	}
	if flag&os.O_APPEND != 0 {
		return nil, &os.PathError{Op: "open", Path: name, Err: fmt.Errorf("O_APPEND is not supported by MemFS: %w", syscall.EINVAL)}
	}
	var readable, writable bool
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		readable = true
	case os.O_WRONLY:
		writable = true
	case os.O_RDWR:
		readable, writable = true, true
	default:
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EINVAL}
	}
	parent, base, err := m.lookupParent("open", name)
	if err != nil {
		if comps, _ := splitPath("open", name); len(comps) == 0 {
			err = &os.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
		}
		return nil, err
	}
	node, ok := parent.children[base]
	switch {
	case ok && flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrExist}
	case ok && node.dir:
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
	case !ok && flag&os.O_CREATE == 0:
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	case !ok:
		node = &memNode{perm: perm.Perm(), modTime: time.Now()}
		parent.children[base] = node
		m.logEntries(nsChange{parent, base, node})
	}
	if flag&os.O_TRUNC != 0 && writable && len(node.data) > 0 {
		// The durable contents are untouched: a truncation is a change
		// like any other until the next Sync (or a journal commit).
		node.data = nil
		node.shared = false
		node.lost = nil
		node.modTime = time.Now()
		m.logTruncate(node, 0)
	}
	return &memFile{
		fs:         m,
		node:       node,
		name:       name,
		gen:        m.gen,
		readable:   readable,
		writable:   writable,
		direct:     opts.Direct && !m.refuseDirect,
		checkAlign: opts.Direct,
	}, nil
}

// Remove implements FS.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cerr, ierr := m.begin(OpRemove, name)
	if cerr != nil {
		return cerr
	}
	defer m.mutated()
	if ierr != nil {
		return ierr
	}
	parent, base, err := m.lookupParent("remove", name)
	if err != nil {
		return err
	}
	node, ok := parent.children[base]
	if !ok {
		return &os.PathError{Op: "remove", Path: name, Err: os.ErrNotExist}
	}
	if node.dir && len(node.children) > 0 {
		return &os.PathError{Op: "remove", Path: name, Err: syscall.ENOTEMPTY}
	}
	delete(parent.children, base)
	m.logEntries(nsChange{parent, base, nil})
	return nil
}

// Rename implements FS. It follows rename(2): an existing newname is
// replaced if it is a file (or, for a directory, an empty directory).
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cerr, ierr := m.begin(OpRename, oldname)
	if cerr != nil {
		return cerr
	}
	defer m.mutated()
	if ierr != nil {
		return ierr
	}
	linkErr := func(err error) error {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	oldComps, err := splitPath("rename", oldname)
	if err != nil {
		return err
	}
	newComps, err := splitPath("rename", newname)
	if err != nil {
		return err
	}
	if len(oldComps) == 0 || len(newComps) == 0 {
		return linkErr(syscall.EBUSY)
	}
	oldParent, err := m.lookupDir("rename", oldname, oldComps[:len(oldComps)-1])
	if err != nil {
		return err
	}
	newParent, err := m.lookupDir("rename", newname, newComps[:len(newComps)-1])
	if err != nil {
		return err
	}
	oldBase, newBase := oldComps[len(oldComps)-1], newComps[len(newComps)-1]
	node, ok := oldParent.children[oldBase]
	if !ok {
		return linkErr(os.ErrNotExist)
	}
	if slices.Equal(oldComps, newComps) {
		return nil
	}
	if node.dir && len(newComps) > len(oldComps) && slices.Equal(newComps[:len(oldComps)], oldComps) {
		return linkErr(syscall.EINVAL) // a directory cannot move into itself
	}
	if target, ok := newParent.children[newBase]; ok {
		switch {
		case target.dir && !node.dir:
			return linkErr(syscall.EISDIR)
		case !target.dir && node.dir:
			return linkErr(syscall.ENOTDIR)
		case target.dir && len(target.children) > 0:
			return linkErr(syscall.ENOTEMPTY)
		}
	}
	delete(oldParent.children, oldBase)
	newParent.children[newBase] = node
	m.logEntries(nsChange{oldParent, oldBase, nil}, nsChange{newParent, newBase, node})
	return nil
}

// MkdirAll implements FS. New directories, like new files, are durable only
// once their parent directory is synced.
func (m *MemFS) MkdirAll(dir string, perm os.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cerr, ierr := m.begin(OpMkdir, dir)
	if cerr != nil {
		return cerr
	}
	defer m.mutated()
	if ierr != nil {
		return ierr
	}
	comps, err := splitPath("mkdir", dir)
	if err != nil {
		return err
	}
	d := m.root
	for _, c := range comps {
		next, ok := d.children[c]
		if !ok {
			next = newDirNode(perm)
			d.children[c] = next
			m.logEntries(nsChange{d, c, next})
		} else if !next.dir {
			return &os.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		d = next
	}
	return nil
}

// List implements FS.
func (m *MemFS) List(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cerr, ierr := m.begin(OpList, dir)
	if cerr != nil {
		return nil, cerr
	}
	if ierr != nil {
		return nil, ierr
	}
	comps, err := splitPath("open", dir)
	if err != nil {
		return nil, err
	}
	d, err := m.lookupDir("open", dir, comps)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(d.children)), nil
}

// Stat implements FS.
func (m *MemFS) Stat(name string) (os.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cerr, ierr := m.begin(OpStat, name)
	if cerr != nil {
		return nil, cerr
	}
	if ierr != nil {
		return nil, ierr
	}
	comps, err := splitPath("stat", name)
	if err != nil {
		return nil, err
	}
	if len(comps) == 0 {
		return m.root.info("/"), nil
	}
	parent, err := m.lookupDir("stat", name, comps[:len(comps)-1])
	if err != nil {
		return nil, err
	}
	base := comps[len(comps)-1]
	node, ok := parent.children[base]
	if !ok {
		return nil, &os.PathError{Op: "stat", Path: name, Err: os.ErrNotExist}
	}
	return node.info(base), nil
}

// SyncDir implements FS: the current entries of dir become its durable
// entries.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cerr, ierr := m.begin(OpSyncDir, dir)
	if cerr != nil {
		return cerr
	}
	defer m.mutated()
	if ierr != nil {
		return ierr
	}
	comps, err := splitPath("sync", dir)
	if err != nil {
		return err
	}
	d, err := m.lookupDir("sync", dir, comps)
	if err != nil {
		return err
	}
	d.syncedChildren = maps.Clone(d.children)
	m.journalDirSynced(d)
	return nil
}

// Lock implements FS with an in-memory lock table: a second Lock on the
// same (cleaned) path fails with ErrLocked until the first is closed. Like
// the OS implementation it creates the file if missing (its directory must
// exist). A crash releases all locks.
func (m *MemFS) Lock(name string) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cerr, ierr := m.begin(OpLock, name)
	if cerr != nil {
		return nil, cerr
	}
	defer m.mutated()
	if ierr != nil {
		return nil, ierr
	}
	parent, base, err := m.lookupParent("lock", name)
	if err != nil {
		return nil, err
	}
	node, ok := parent.children[base]
	if ok && node.dir {
		return nil, &os.PathError{Op: "lock", Path: name, Err: syscall.EISDIR}
	}
	comps, _ := splitPath("lock", name)
	key := strings.Join(comps, "/")
	if m.locks[key] {
		return nil, fmt.Errorf("%w: %s", ErrLocked, name)
	}
	if !ok {
		node = &memNode{perm: 0o644, modTime: time.Now()}
		parent.children[base] = node
		m.logEntries(nsChange{parent, base, node})
	}
	m.locks[key] = true
	return &memLock{fs: m, key: key, name: name, gen: m.gen}, nil
}

// memLock is a lock taken with MemFS.Lock.
type memLock struct {
	fs     *MemFS
	key    string
	name   string
	gen    uint64
	closed bool
}

// Close releases the lock.
func (l *memLock) Close() error {
	m := l.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if l.closed {
		return &os.PathError{Op: "unlock", Path: l.name, Err: os.ErrClosed}
	}
	l.closed = true
	if m.crashed || l.gen != m.gen {
		// After a crash the lock table belongs to the rebooted file
		// system (or to no one, while frozen): leave it alone.
		return &os.PathError{Op: "unlock", Path: l.name, Err: ErrCrashed}
	}
	delete(m.locks, l.key)
	return nil
}

// memFile is a handle on a MemFS file.
type memFile struct {
	fs       *MemFS
	node     *memNode
	name     string
	gen      uint64
	readable bool
	writable bool
	direct   bool // Direct's answer
	// checkAlign: Direct was asked, so reads and writes must be aligned
	// (also when the file system refused it: RefuseDirect).
	checkAlign bool
	closed     bool
}

// begin starts an operation on the handle, like MemFS.begin, and also fails
// on handles closed or opened before a crash. Called with fs.mu held.
func (f *memFile) begin(op Op) (crashErr, err error) {
	m := f.fs
	if m.crashed || f.gen != m.gen {
		return &os.PathError{Op: op.String(), Path: f.name, Err: ErrCrashed}, nil
	}
	if f.closed {
		return &os.PathError{Op: op.String(), Path: f.name, Err: os.ErrClosed}, nil
	}
	if m.injector != nil {
		return nil, m.injector(op, f.name)
	}
	return nil, nil
}

// ReadAt implements File. Like os.File, it returns io.EOF with the bytes
// read when the file ends before p is full.
func (f *memFile) ReadAt(p []byte, off int64) (int, error) { return f.readAt(p, off, f.checkAlign) }

// readAtUnaligned reads without the alignment check (unalignedIO).
func (f *memFile) readAtUnaligned(p []byte, off int64) (int, error) { return f.readAt(p, off, false) }

func (f *memFile) readAt(p []byte, off int64, align bool) (int, error) {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if cerr, err := f.begin(OpRead); cerr != nil || err != nil {
		return 0, firstErr(cerr, err)
	}
	if !f.readable {
		return 0, &os.PathError{Op: "read", Path: f.name, Err: syscall.EBADF}
	}
	if align {
		if err := checkAligned("read", f.name, p, off); err != nil {
			return 0, err
		}
	}
	if off < 0 {
		return 0, &os.PathError{Op: "read", Path: f.name, Err: syscall.EINVAL}
	}
	data := f.node.data
	if off >= int64(len(data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt implements File. Writing past the end extends the file, the gap
// reading as zeros.
func (f *memFile) WriteAt(p []byte, off int64) (int, error) { return f.writeAt(p, off, f.checkAlign) }

// writeAtUnaligned writes without the alignment check (unalignedIO).
func (f *memFile) writeAtUnaligned(p []byte, off int64) (int, error) { return f.writeAt(p, off, false) }

func (f *memFile) writeAt(p []byte, off int64, align bool) (int, error) {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	cerr, ierr := f.begin(OpWrite)
	if cerr != nil {
		return 0, cerr
	}
	defer m.mutated()
	if ierr != nil {
		return 0, ierr
	}
	if !f.writable {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: syscall.EBADF}
	}
	if align {
		if err := checkAligned("write", f.name, p, off); err != nil {
			return 0, err
		}
	}
	if off < 0 {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: syscall.EINVAL}
	}
	n := len(p)
	var err error
	if m.shortWrite != nil {
		if k := m.shortWrite(f.name, off, len(p)); k < len(p) {
			n = max(k, 0)
			err = &os.PathError{Op: "write", Path: f.name, Err: fmt.Errorf("%w: %w", ErrInjected, io.ErrShortWrite)}
		}
	}
	f.node.writeAt(p[:n], off)
	return n, err
}

// Sync implements File: the file's current contents become durable, except
// bytes that an earlier failed Sync lost (see MemFS). Its directory entry
// does not. A Sync failed by the injector loses the file's dirty bytes, as
// a failed fsync does on Linux, unless its error wraps ErrNotIssued.
func (f *memFile) Sync() error {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	cerr, ierr := f.begin(OpSync)
	if cerr != nil {
		return cerr
	}
	defer m.mutated()
	n := f.node
	if ierr != nil {
		if !errors.Is(ierr, ErrNotIssued) {
			n.loseDirty()
		}
		return ierr
	}
	if len(n.lost) > 0 {
		n.synced = n.diskData(n.synced)
		n.shared = false
	} else {
		n.synced = n.data[:len(n.data):len(n.data)]
		n.shared = true
	}
	m.journalFileSynced(n)
	return nil
}

// Truncate implements File.
func (f *memFile) Truncate(size int64) error {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	cerr, ierr := f.begin(OpTruncate)
	if cerr != nil {
		return cerr
	}
	defer m.mutated()
	if ierr != nil {
		return ierr
	}
	if !f.writable || size < 0 {
		return &os.PathError{Op: "truncate", Path: f.name, Err: syscall.EINVAL}
	}
	f.node.resize(size)
	f.node.modTime = time.Now()
	m.logTruncate(f.node, size)
	return nil
}

// Size implements File.
func (f *memFile) Size() (int64, error) {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if cerr, err := f.begin(OpStat); cerr != nil || err != nil {
		return 0, firstErr(cerr, err)
	}
	return int64(len(f.node.data)), nil
}

// Close implements File. Closing twice fails with os.ErrClosed, and closing
// a handle from before a crash fails with ErrCrashed; either way the handle
// is closed.
func (f *memFile) Close() error {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.crashed || f.gen != m.gen {
		f.closed = true
		return &os.PathError{Op: "close", Path: f.name, Err: ErrCrashed}
	}
	if f.closed {
		return &os.PathError{Op: "close", Path: f.name, Err: os.ErrClosed}
	}
	f.closed = true
	return nil
}

// Direct implements File: it reports whether direct I/O was requested,
// which MemFS always grants (and enforces).
func (f *memFile) Direct() bool { return f.direct }

// Name implements File.
func (f *memFile) Name() string { return f.name }

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// info describes the node under the given name.
func (n *memNode) info(name string) os.FileInfo {
	fi := memFileInfo{name: name, mode: n.perm, modTime: n.modTime}
	if n.dir {
		fi.mode |= os.ModeDir
	} else {
		fi.size = int64(len(n.data))
	}
	return fi
}

// memFileInfo implements os.FileInfo for MemFS.
type memFileInfo struct {
	name    string
	size    int64
	mode    os.FileMode
	modTime time.Time
}

func (fi memFileInfo) Name() string       { return fi.name }
func (fi memFileInfo) Size() int64        { return fi.size }
func (fi memFileInfo) Mode() os.FileMode  { return fi.mode }
func (fi memFileInfo) ModTime() time.Time { return fi.modTime }
func (fi memFileInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi memFileInfo) Sys() any           { return nil }

// String describes the current tree, one entry per line, with each file's
// current and durable sizes and whether its entry is durable; for test
// failure messages.
func (m *MemFS) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	var walk func(d *memNode, prefix string)
	walk = func(d *memNode, prefix string) {
		for _, name := range slices.Sorted(maps.Keys(d.children)) {
			c := d.children[name]
			durable := ""
			if d.syncedChildren[name] != c {
				durable = " (entry not durable)"
			}
			if c.dir {
				fmt.Fprintf(&b, "%s%s/%s\n", prefix, name, durable)
				walk(c, prefix+name+"/")
			} else {
				fmt.Fprintf(&b, "%s%s: %d bytes, %d durable%s\n", prefix, name, len(c.data), len(c.synced), durable)
			}
		}
	}
	walk(m.root, "/")
	return b.String()
}

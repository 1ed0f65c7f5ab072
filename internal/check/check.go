// Package check verifies a Strata database's files without changing them:
// `strata check DIR`.
//
// It verifies, read-only and without opening the database:
//
//   - the page store (pagestore.Inspect): the checkpoint file and the map
//     log's deltas (and its tail), every segment's header in both streams,
//     every record's checksum, the padding, sequence numbers, segment
//     stamps, the checkpoint's page map against the records it names, and
//     the map recovery would rebuild (with recovery's own code);
//   - the meta page (page 0);
//   - the B+tree from the meta page's root: every node decodes, keys are in
//     order within each node and within the bounds its parent's separators
//     give, every leaf is at the same depth, no page is reached twice,
//     every page reached exists in the store (freed pages are
//     unreachable), overflow chains have exactly the pages their value's
//     length needs, and pages reachable from the tree were written by a
//     transaction no later than the meta page's;
//   - the WAL (wal.Inspect): file numbering, headers, every record's
//     checksum and LSN, and the batches of the records Open would replay;
//     and that the WAL covers the meta page's LSN.
//
// Each problem names the file and offset (or page). A problem is either
// corruption, or a state a crash explains and Open repairs (Repairable:
// a torn tail, unreachable pages of lost commits, WAL records to replay),
// or leaked pages (Leak: unreachable pages in a database whose meta page
// says it was closed cleanly, which Open does not look for).
package check

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"

	"github.com/stratadb/strata/internal/btree"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
	"github.com/stratadb/strata/internal/wal"
)

// Problem is one finding.
type Problem struct {
	File   string // the file, if known
	Offset int64  // in File; -1 if none
	Page   int64  // the page, if the problem is about one; -1 if none
	Msg    string
	// Repairable: not corruption, a state Open repairs.
	Repairable bool
	// Leak: not corruption and not repaired: pages no tree reaches that
	// Open does not free (space lost, no data).
	Leak bool
}

func (p Problem) String() string {
	var b bytes.Buffer
	if p.File != "" {
		b.WriteString(p.File)
		if p.Offset >= 0 {
			fmt.Fprintf(&b, " offset %d", p.Offset)
		}
		b.WriteString(": ")
	}
	if p.Page >= 0 {
		fmt.Fprintf(&b, "page %d: ", p.Page)
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Report is what Check found.
type Report struct {
	Dir      string
	Problems []Problem
	// Figures of a walk that could be done.
	PageSize                int
	LivePages, Reachable    int
	Leaves, Branches        int
	OverflowPages, Keys     int64
	Depth                   int
	MetaTxID, MetaLSN       uint64
	WALFiles                int
	WALRecords, WALToReplay int64
	Segments                int
	// Of the page store: its checkpoint's format version, its segments of
	// the cold stream (records the cleaner relocated), the map log records
	// recovery applies.
	StoreVersion               uint32
	ColdSegments, MapLogDeltas int
	// CleanClose: the page store's checkpoint was written by a clean close.
	CleanClose bool
	// MetaClean: the meta page was written by a clean Close of the
	// database (Open then skips its walk for unreachable pages).
	MetaClean                       bool
	corruptCount, repairable, leaks int
	unreachable                     []int64 // pages the tree does not reach
}

// Corrupt is the number of problems that are corruption.
func (r *Report) Corrupt() int { return r.corruptCount }

// Repairable is the number of problems Open repairs.
func (r *Report) Repairable() int { return r.repairable }

// Leaks is the number of problems that are leaked pages: neither
// corruption nor repaired by Open.
func (r *Report) Leaks() int { return r.leaks }

func (r *Report) add(p Problem) {
	switch {
	case p.Leak:
		r.leaks++
	case p.Repairable:
		r.repairable++
	default:
		r.corruptCount++
	}
	r.Problems = append(r.Problems, p)
}

func (r *Report) page(id btree.PageID, file string, off int64, repairable bool, format string, args ...any) {
	r.add(Problem{File: file, Offset: off, Page: int64(id), Msg: fmt.Sprintf(format, args...), Repairable: repairable})
}

// ErrInUse: another process (or handle) has the database open.
var ErrInUse = errors.New("check: database in use")

// Check verifies the database in dir. The error is for what stops the
// check itself (I/O errors, not a database, in use); damage is in the
// report.
func Check(fs vfs.FS, dir string) (*Report, error) {
	r := &Report{Dir: dir}
	if st, err := fs.Stat(filepath.Join(dir, "CHECKPOINT")); err != nil || st.IsDir() {
		if _, err2 := fs.Stat(dir); err2 != nil {
			return nil, fmt.Errorf("check: %w", err2)
		}
		if err != nil {
			return nil, fmt.Errorf("check: %s has no CHECKPOINT: not a Strata database", dir)
		}
	}
	// Hold the database's locks, so that nothing writes while we read;
	// taking a lock changes no data. A lock file that is missing (a copy
	// of the files) is not created; one on a read-only file system is
	// locked read-only (vfs).
	var locks []io.Closer
	defer func() {
		for _, l := range locks {
			l.Close()
		}
	}()
	for _, name := range []string{filepath.Join(dir, "LOCK"), filepath.Join(dir, "wal", "wal.lock")} {
		if _, err := fs.Stat(name); err != nil {
			continue
		}
		l, err := fs.Lock(name)
		if errors.Is(err, vfs.ErrLocked) {
			return nil, fmt.Errorf("%w: %s is locked (is strata serve or another program using it?)", ErrInUse, name)
		}
		if err != nil {
			return nil, fmt.Errorf("check: lock %s: %w", name, err)
		}
		locks = append(locks, l)
	}
	in, err := pagestore.Inspect(fs, dir)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	defer in.Close()
	for _, f := range in.Findings {
		r.add(Problem{File: f.File, Offset: f.Offset, Page: -1, Msg: f.Msg, Repairable: f.Repairable})
	}
	r.Segments = len(in.Segments)
	for _, s := range in.Segments {
		if s.Stream == pagestore.StreamCold {
			r.ColdSegments++
		}
	}
	r.StoreVersion, r.MapLogDeltas = in.Version, in.Deltas
	r.CleanClose = in.CleanClose
	var m meta
	haveMeta := false
	if in.MapUsable {
		r.PageSize = in.PageSize
		r.LivePages = len(in.Pages())
		m, haveMeta = checkMeta(r, in)
		if haveMeta {
			r.MetaTxID, r.MetaLSN, r.MetaClean = m.txid, m.lsn, m.clean
			(&treeWalk{r: r, in: in, meta: m, seen: map[btree.PageID]bool{}, leafDepth: -1}).run()
		}
	}
	checkWAL(r, fs, filepath.Join(dir, "wal"), m, haveMeta)
	reportUnreachable(r, m)
	return r, nil
}

// meta is the database's meta page (page 0), as in the root package's
// meta.go (docs/FORMAT.md, "Database meta page").
type meta struct {
	pageSize  uint32
	root      uint64
	txid, lsn uint64
	// clean: written by a clean Close (Open does not look for unreachable
	// pages then).
	clean bool
}

// metaClean is the meta page's flag of a clean Close.
const metaClean = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func decodeMeta(page []byte) (meta, error) {
	var m meta
	if len(page) < 52 || string(page[:8]) != "STRATADB" {
		return m, errors.New("page 0 is not a Strata meta page")
	}
	if got, want := binary.LittleEndian.Uint32(page[40:]), crc32.Checksum(page[:40], castagnoli); got != want {
		return m, fmt.Errorf("meta page checksum mismatch (computed %#x, stored %#x)", want, got)
	}
	if v := binary.LittleEndian.Uint32(page[8:]); v != 1 {
		return m, fmt.Errorf("unsupported database format version %d", v)
	}
	m.pageSize = binary.LittleEndian.Uint32(page[12:])
	m.root = binary.LittleEndian.Uint64(page[16:])
	m.txid = binary.LittleEndian.Uint64(page[24:])
	m.lsn = binary.LittleEndian.Uint64(page[32:])
	if int(m.pageSize) != len(page) {
		return m, fmt.Errorf("meta page says %d-byte pages, the store has %d", m.pageSize, len(page))
	}
	// The flags and their checksum: both zero (no flag; the format before
	// flags), or flags that the checksum of bytes 0..48 covers.
	switch flags, crc := binary.LittleEndian.Uint32(page[44:]), binary.LittleEndian.Uint32(page[48:]); {
	case flags == 0 && crc == 0:
	case flags == 0:
		return m, fmt.Errorf("meta page has no flags but a flags checksum %#x", crc)
	case crc != crc32.Checksum(page[:48], castagnoli):
		return m, fmt.Errorf("meta page flags checksum mismatch (computed %#x, stored %#x)", crc32.Checksum(page[:48], castagnoli), crc)
	case flags&^metaClean != 0:
		return m, fmt.Errorf("meta page has unknown flags %#x", flags)
	default:
		m.clean = true
	}
	if !allZero(page[52:]) {
		return m, errors.New("meta page has nonzero bytes after its fields")
	}
	return m, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func checkMeta(r *Report, in *pagestore.Inspection) (meta, bool) {
	file, off := in.Where(0)
	if !in.Has(0) {
		if r.LivePages == 0 {
			return meta{}, false // an empty store: a database created but never written
		}
		r.page(0, "", -1, false, "the meta page is not in the store")
		return meta{}, false
	}
	page := make([]byte, in.PageSize)
	if err := in.ReadPage(0, page); err != nil {
		r.page(0, file, off, false, "%v", err)
		return meta{}, false
	}
	m, err := decodeMeta(page)
	if err != nil {
		r.page(0, file, off, false, "%v", err)
		return meta{}, false
	}
	return m, true
}

// treeWalk verifies the tree from the meta page's root.
type treeWalk struct {
	r         *Report
	in        *pagestore.Inspection
	meta      meta
	seen      map[btree.PageID]bool
	leafDepth int
	buf       []byte
}

func (w *treeWalk) run() {
	w.buf = make([]byte, w.in.PageSize)
	if w.meta.root != 0 {
		w.node(btree.PageID(w.meta.root), 0, nil, nil, 0, 1)
	}
	w.r.Reachable = len(w.seen)
	// Every other page is unreachable: pages of commits a crash lost, or
	// replaced after the last checkpoint (Open frees them), or leaked
	// (reportUnreachable says which, once the WAL is known).
	for _, id := range w.in.Pages() {
		if id != 0 && !w.seen[id] {
			w.r.unreachable = append(w.r.unreachable, int64(id))
		}
	}
}

// reportUnreachable reports the pages in the store the tree does not
// reach. After a crash Open frees them: repairable. If the meta page says
// the last Close was clean and no WAL record follows it, Open does not look
// for them (a clean Close leaves none): they are leaked, space lost for
// good though no data is.
func reportUnreachable(r *Report, m meta) {
	n := len(r.unreachable)
	if n == 0 {
		return
	}
	first := r.unreachable[:min(n, 10)]
	if m.clean && r.WALToReplay == 0 {
		r.add(Problem{Page: -1, Offset: -1, Leak: true,
			Msg: fmt.Sprintf("%d pages are in the store but not in the tree (first: %v), and the meta page says the database was closed cleanly: Open does not free them (leaked space, no data lost)", n, first)})
		return
	}
	r.add(Problem{Page: -1, Offset: -1, Repairable: true,
		Msg: fmt.Sprintf("%d pages are in the store but not in the tree (first: %v); Open frees them", n, first)})
}

// visit marks id reached from parent and reads it; false if it cannot be
// used.
func (w *treeWalk) visit(id, parent btree.PageID, what string) (btree.PageInfo, bool) {
	file, off := w.in.Where(id)
	switch {
	case id == 0:
		w.r.page(parent, "", -1, false, "%s is page 0 (the meta page)", what)
		return btree.PageInfo{}, false
	case w.seen[id]:
		w.r.page(id, file, off, false, "reached twice (again as %s of page %d)", what, parent)
		return btree.PageInfo{}, false
	case !w.in.Has(id):
		w.r.page(id, "", -1, false, "%s of page %d is not in the store (freed or never written)", what, parent)
		return btree.PageInfo{}, false
	}
	w.seen[id] = true
	if err := w.in.ReadPage(id, w.buf); err != nil {
		w.r.page(id, file, off, false, "%v", err)
		return btree.PageInfo{}, false
	}
	info, err := btree.InspectPage(id, w.buf)
	if err != nil {
		w.r.page(id, file, off, false, "%v", err)
		return btree.PageInfo{}, false
	}
	if info.TxID > w.meta.txid {
		w.r.page(id, file, off, false, "written by transaction %d, after the meta page's %d", info.TxID, w.meta.txid)
	}
	return info, true
}

// node verifies the subtree at id, whose keys must lie in [lo, hi) (nil:
// unbounded).
func (w *treeWalk) node(id, parent btree.PageID, lo, hi []byte, depth int, childNo int) {
	what := "the root"
	if parent != 0 {
		what = fmt.Sprintf("child %d", childNo)
	}
	info, ok := w.visit(id, parent, what)
	if !ok {
		return
	}
	file, off := w.in.Where(id)
	if info.Kind == btree.KindOverflow {
		w.r.page(id, file, off, false, "an overflow page where a node should be (%s of page %d)", what, parent)
		return
	}
	if depth > 64 {
		w.r.page(id, file, off, false, "tree deeper than 64 levels")
		return
	}
	if n := len(info.Keys); n > 0 {
		// In-node order is checked by InspectPage; the bounds here.
		if lo != nil && bytes.Compare(info.Keys[0], lo) < 0 {
			w.r.page(id, file, off, false, "first key %q is below its parent's separator %q", cut(info.Keys[0]), cut(lo))
		}
		if hi != nil && bytes.Compare(info.Keys[n-1], hi) >= 0 {
			w.r.page(id, file, off, false, "last key %q is not below its parent's separator %q", cut(info.Keys[n-1]), cut(hi))
		}
	}
	// Keys must be copied: w.buf is reused by the children.
	keys := make([][]byte, len(info.Keys))
	for i, k := range info.Keys {
		keys[i] = bytes.Clone(k)
	}
	if info.Kind == btree.KindLeaf {
		w.r.Leaves++
		w.r.Keys += int64(len(keys))
		if len(keys) == 0 && (parent != 0 || depth > 0) {
			w.r.page(id, file, off, false, "an empty leaf below the root")
		}
		if w.leafDepth < 0 {
			w.leafDepth = depth
			w.r.Depth = depth + 1
		} else if depth != w.leafDepth {
			w.r.page(id, file, off, false, "leaf at depth %d, other leaves at %d", depth, w.leafDepth)
		}
		values := info.Values
		for i, v := range values {
			if v.Overflow {
				if v.Length <= btree.MaxInlineValueSizeFor(w.in.PageSize) {
					w.r.page(id, file, off, false, "key %q: a %d-byte value in an overflow chain (values up to %d bytes are stored inline)", cut(keys[i]), v.Length, btree.MaxInlineValueSizeFor(w.in.PageSize))
				}
				w.chain(v.First, id, v.Length, keys[i])
			}
		}
		return
	}
	// A branch may hold no key, only its first child: deletes remove
	// empty nodes but do not merge (btree.Tx.Delete).
	w.r.Branches++
	children := info.Children
	for i, c := range children {
		clo, chi := lo, hi
		if i > 0 {
			clo = keys[i-1]
		}
		if i < len(keys) {
			chi = keys[i]
		}
		w.node(c, id, clo, chi, depth+1, i)
	}
}

// chain verifies the overflow chain of a value of length bytes.
func (w *treeWalk) chain(first, leaf btree.PageID, length int, key []byte) {
	capacity := btree.OverflowCapacity(w.in.PageSize)
	pages := (length + capacity - 1) / capacity
	id, left := first, length
	for i := 0; i < pages; i++ {
		if id == 0 {
			w.r.page(leaf, "", -1, false, "key %q: overflow chain ends after %d of %d pages", cut(key), i, pages)
			return
		}
		info, ok := w.visit(id, leaf, fmt.Sprintf("overflow page %d of key %q", i, cut(key)))
		if !ok {
			return
		}
		w.r.OverflowPages++
		file, off := w.in.Where(id)
		if info.Kind != btree.KindOverflow {
			w.r.page(id, file, off, false, "kind %d in the overflow chain of key %q", info.Kind, cut(key))
			return
		}
		if info.Used > left || (i < pages-1 && info.Used != capacity) {
			w.r.page(id, file, off, false, "overflow page holds %d bytes; the chain of key %q needs %d more, %d per page but the last", info.Used, cut(key), left, capacity)
			return
		}
		left -= info.Used
		if i == pages-1 && (info.Next != 0 || left != 0) {
			w.r.page(id, file, off, false, "the overflow chain of key %q runs on past its %d bytes", cut(key), length)
			return
		}
		id = info.Next
	}
}

func cut(k []byte) []byte {
	if len(k) > 40 {
		return k[:40]
	}
	return k
}

// checkWAL verifies the log and the batches Open would replay.
func checkWAL(r *Report, fs vfs.FS, dir string, m meta, haveMeta bool) {
	var bad *Problem
	in, err := wal.Inspect(fs, dir, func(lsn uint64, payload []byte) error {
		if !haveMeta || lsn <= m.lsn {
			return nil
		}
		r.WALToReplay++
		if err := decodeOps(payload); err != nil && bad == nil {
			bad = &Problem{File: dir, Offset: -1, Page: -1, Msg: fmt.Sprintf("WAL record %d: %v (Open would refuse to replay it)", lsn, err)}
		}
		return nil
	})
	if err != nil {
		r.add(Problem{File: dir, Offset: -1, Page: -1, Msg: err.Error()})
		return
	}
	for _, f := range in.Findings {
		r.add(Problem{File: f.File, Offset: f.Offset, Page: -1, Msg: f.Msg, Repairable: f.Repairable})
	}
	if bad != nil {
		r.add(*bad)
	}
	r.WALFiles, r.WALRecords = len(in.Files), in.Records
	applied := uint64(0) // without a meta page Open replays the log from its start
	if haveMeta {
		applied = m.lsn
	}
	for _, s := range in.Skips {
		// Open moved the log forward past records the meta page already
		// had (MinNextLSN); records it would replay must not be missing.
		if s.To > applied+1 {
			r.add(Problem{File: s.File, Offset: 16, Page: -1, Msg: fmt.Sprintf("the WAL has no records %d to %d, but the meta page has applied only LSN %d: records are missing", s.From, s.To-1, applied)})
		}
	}
	if !haveMeta || len(in.Files) == 0 {
		return
	}
	if in.FirstLSN > m.lsn+1 {
		r.add(Problem{File: in.Files[0], Offset: 16, Page: -1, Msg: fmt.Sprintf("the WAL starts at LSN %d, the meta page needs it from %d", in.FirstLSN, m.lsn+1)})
	}
	if in.NextLSN < m.lsn+1 {
		r.add(Problem{File: in.Files[len(in.Files)-1], Offset: -1, Page: -1, Msg: fmt.Sprintf("the WAL ends before LSN %d, but the meta page has applied LSN %d: records are missing", in.NextLSN, m.lsn)})
	}
	if r.WALToReplay > 0 {
		r.add(Problem{File: dir, Offset: -1, Page: -1, Repairable: true, Msg: fmt.Sprintf("%d WAL records after the meta page's LSN %d: Open replays them", r.WALToReplay, m.lsn)})
	}
}

// decodeOps checks an encoded batch, the payload of a WAL record
// (docs/FORMAT.md: `1 uvarint(len(key)) key uvarint(len(value)) value`
// or `2 uvarint(len(key)) key`), as the root package's decodeOps reads it.
func decodeOps(ops []byte) error {
	for len(ops) > 0 {
		op := ops[0]
		ops = ops[1:]
		klen, k := binary.Uvarint(ops)
		if k <= 0 || klen > uint64(len(ops)-k) {
			return errors.New("malformed batch: bad key length")
		}
		if klen == 0 {
			return errors.New("malformed batch: empty key")
		}
		ops = ops[k+int(klen):]
		switch op {
		case 1:
			vlen, k := binary.Uvarint(ops)
			if k <= 0 || vlen > uint64(len(ops)-k) {
				return errors.New("malformed batch: bad value length")
			}
			ops = ops[k+int(vlen):]
		case 2:
		default:
			return fmt.Errorf("malformed batch: op %d", op)
		}
	}
	return nil
}

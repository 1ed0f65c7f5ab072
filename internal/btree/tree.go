package btree

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/stratadb/strata/internal/bufferpool"
)

// PageID is a page of the tree, as in the buffer pool and page store. The
// zero id is never a node (the store's page 0 is the database's meta page).
type PageID = bufferpool.PageID

// Errors for callers.
var (
	ErrKeyTooLarge   = errors.New("btree: key too large")
	ErrValueTooLarge = errors.New("btree: value too large")
	ErrEmptyKey      = errors.New("btree: empty key")
)

// Tree is a B+tree over buffer-pool pages, changed in place between
// checkpoints.
//
// A version of the tree is its root page id and the transaction id (txid)
// that made it; every node records the txid of the last transaction that
// changed it. A write transaction changes a node in place unless the node
// is frozen: written by a transaction at or before the txids the caller
// gives Begin (the last checkpoint the caller started, or the newest open
// snapshot, whichever is later). A node of the checkpoint's tree is
// copied to a new page first (copy-on-write), and its parent points to
// the copy; the original is returned as replaced, for the caller to free
// once no checkpoint and no snapshot needs it. A node only a snapshot
// froze keeps its page, its old bytes copied to a version that readers of
// the snapshot read instead (versions.go). So the tree a checkpoint
// writes, and the tree a snapshot reads, never change under them, while a
// page changed by many commits between checkpoints is copied once, not
// once per commit.
//
// Readers that hold no snapshot read the current pages; the caller keeps
// them out while a transaction runs (the database's tree latch), so they
// never see half a transaction. Overflow chains are never changed in
// place: a new value gets a new chain.
//
// The transaction keeps what Abort needs to put the tree back as it was:
// the previous cells of the keys it changed, or copies of the nodes it
// changed in place (undo.go).
type Tree struct {
	pool     *bufferpool.Pool
	pageSize int
	fill     float64
	// spare are page buffers for before-images and undo the key log,
	// reused by the next transaction; scratch, leafBuf and branchBuf serve
	// splits. One transaction at a time uses them.
	spare     [][]byte
	undo      undoLog
	scratch   []byte
	sep       []byte
	leafBuf   []leafCell
	branchBuf []branchCell
	// versions are the nodes' versions that readers of older versions
	// of the tree read (versions.go).
	versions versionTable
}

// New returns a tree over pool. fillFactor (0.1..1) is how full sequential
// inserts leave pages (document 001).
func New(pool *bufferpool.Pool, fillFactor float64) *Tree {
	ps := pool.PageSize()
	return &Tree{pool: pool, pageSize: ps, fill: fillFactor, scratch: make([]byte, ps)}
}

// MaxKeySize is the largest key: a quarter of a page, so that a branch
// always holds at least three keys and a leaf at least one cell per split.
func (t *Tree) MaxKeySize() int { return t.pageSize/4 - 16 }

// MaxValueSize is the largest value (MaxValueSize, 16 MiB).
func (t *Tree) MaxValueSize() int { return MaxValueSize }

// MaxInlineValueSize is the largest value always stored in its leaf,
// whatever its key: a quarter page, like keys. A longer value is stored in
// its leaf too if its cell fits in half the page less the node header
// (Inline), else in a chain of overflow pages.
func (t *Tree) MaxInlineValueSize() int { return t.pageSize/4 - 16 }

// Inline says whether a value of valueLen bytes under a key of keyLen
// bytes is stored in its leaf: up to MaxInlineValueSize always, and beyond
// while the cell takes at most half the page less the node header, so
// that any two cells share a page and every split succeeds (splitPoint).
// Short keys thus keep values of almost half a page inline: at 4 KiB pages
// values up to about 2,000 bytes instead of 1,008 (12% of the JSON events
// of the benchmarks were between the two, each then a page of its own).
func (t *Tree) Inline(keyLen, valueLen int) bool {
	return valueLen <= t.MaxInlineValueSize() || leafCellSize(keyLen, valueLen, false) <= (t.pageSize-nodeHeaderSize)/2
}

// VerifyPage checks that page holds a valid node. The database installs
// it as the buffer pool's Verify hook, so every page is checked once when
// it is loaded from the store, and reads of cached pages need no check.
// Pages the tree writes are valid by construction.
func VerifyPage(id PageID, page []byte) error {
	check := checkNode
	if len(page) >= overflowHeaderSize && page[0] == kindOverflow {
		check = checkOverflow
	}
	if err := check(page); err != nil {
		return fmt.Errorf("btree: page %d: %w", id, err)
	}
	return nil
}

// readNode pins page id shared and calls fn with it. The page was verified
// when it entered the pool (VerifyPage), or written by the tree; its kind
// is checked here because a wrong child pointer could name page 0.
func (t *Tree) readNode(id PageID, fn func(n node) error) error {
	return t.readNodeFrom(id, readAny, fn)
}

// read says where readNodeFrom may take a page from.
type read uint8

const (
	readAny        read = iota // the pool, reading the store if need be
	readCached                 // memory only (bufferpool.Pool.GetCached), counted
	readCachedLook             // frames only, nothing counted (an image is not promoted)
)

// readNodeFrom is readNode, reading only pages in memory unless r is
// readAny (bufferpool.ErrNotCached for others).
func (t *Tree) readNodeFrom(id PageID, r read, fn func(n node) error) error {
	var pg bufferpool.Page
	var err error
	if r == readAny {
		pg, err = t.pool.Get(id, bufferpool.Shared)
	} else {
		pg, err = t.pool.GetCached(id, bufferpool.Shared, r == readCached)
	}
	if err != nil {
		return err
	}
	return readPinned(id, pg, fn)
}

// readPinned calls fn with node id, pinned as pg, and releases it.
func readPinned(id PageID, pg bufferpool.Page, fn func(n node) error) error {
	defer pg.Release()
	b := pg.Data()
	switch b[0] {
	case kindLeaf:
	case kindBranch:
		pg.MarkInner()
	default:
		return fmt.Errorf("btree: page %d: %w: kind %d", id, ErrCorruptNode, b[0])
	}
	return fn(node(b))
}

// Get looks key up in the current version rooted at root and appends its
// value to dst.
func (t *Tree) Get(root PageID, key, dst []byte) ([]byte, bool, error) {
	return t.GetAt(root, Live, key, dst)
}

// GetAt is Get in the version of transaction asOf rooted at root: the
// version a snapshot taken then reads, as it was then although commits
// since changed its nodes in place (versions.go).
func (t *Tree) GetAt(root PageID, asOf uint64, key, dst []byte) ([]byte, bool, error) {
	dst, ref, found, _, err := t.lookup(root, asOf, key, dst, true, readAny, 0)
	if err != nil || !found || !ref.overflow {
		return dst, found, err
	}
	dst, err = t.ReadOverflow(dst, ref)
	return dst, found, err
}

// OverflowRef is a value stored in overflow pages, as Lookup finds it.
type OverflowRef struct {
	Length   int
	first    PageID
	overflow bool
}

// Lookup finds key in the version rooted at root. An inline value is
// appended to dst; a value in overflow pages is returned as a reference
// for ReadOverflow, which the caller may call after it lets writers in
// again (chains are never changed in place).
func (t *Tree) Lookup(root PageID, key, dst []byte) ([]byte, OverflowRef, bool, error) {
	dst, ref, found, _, err := t.lookup(root, Live, key, dst, true, readAny, 0)
	return dst, ref, found, err
}

// CountNone, as LookupCached's seen, counts no page of the path.
const CountNone = ^PageID(0)

// LookupCached is Lookup reading only pages in memory: if a page on key's
// path is not (or is being read by another goroutine), it returns that
// page's id (and nothing else), for the caller to read it
// (bufferpool.Pool.Get) after letting writers in, and then look again.
// The pool counts the pages of the path in its statistics below page
// seen: all of them if seen is 0, none if it is CountNone. A caller that
// looks again after reading page p passes p (the pages down to p were
// counted by the first look and by the read); a look ahead of a use that
// will count passes CountNone. A page not counted is not promoted from
// an image either (that would count): it is returned as not in memory.
func (t *Tree) LookupCached(root PageID, key, dst []byte, seen PageID) ([]byte, OverflowRef, bool, PageID, error) {
	return t.lookup(root, Live, key, dst, true, readCached, seen)
}

// MissingPage returns the first page on key's path in the version rooted
// at root that is not in memory (as LookupCached finds it, counting
// nothing), or 0 if the whole path is.
func (t *Tree) MissingPage(root PageID, key []byte) (PageID, error) {
	_, _, _, missing, err := t.lookup(root, Live, key, nil, false, readCached, CountNone)
	return missing, err
}

// lookup is Lookup in the version of transaction asOf (Live: the current
// one) with r where the pages are read from, appending the value to dst
// only with keep; with readCached, the pages down to seen (see
// LookupCached) are read as readCachedLook. A node newer than asOf is
// read from its version (versions.go); a peek that finds one fails.
func (t *Tree) lookup(root PageID, asOf uint64, key, dst []byte, keep bool, r read, seen PageID) ([]byte, OverflowRef, bool, PageID, error) {
	counting := seen == 0
	base, orig := len(dst), dst
	id := root
	for levels := 0; id != 0; levels++ {
		if levels > maxDepth {
			return dst[:base], OverflowRef{}, false, 0, errTooDeep(root)
		}
		from := r
		if from == readCached && !counting {
			from = readCachedLook
		}
		if id == seen {
			counting = true
		}
		var next PageID
		var ref OverflowRef
		var found, leaf bool
		// A peeked leaf's value is appended to dst before the read is
		// known good, and cut off again if it was not (forget, below).
		if t.peekNode(id, from != readCachedLook, true, func(n node) error {
			if n.txid() > asOf {
				return errPeekFailed // its version is read below
			}
			if n.kind() == kindBranch {
				if next = PageID(n.child(n.childFor(key))); next == 0 {
					return errPeekFailed
				}
				return nil
			}
			leaf, found, ref, dst = true, false, OverflowRef{}, dst[:base]
			i, ok := n.search(key)
			if !ok {
				return nil
			}
			v, overflow, length := n.value(i)
			if overflow {
				ref = OverflowRef{Length: length, first: PageID(binary.LittleEndian.Uint64(v)), overflow: true}
			} else if keep {
				dst = append(dst, v...)
			}
			found = true
			return nil
		}) {
			if !leaf {
				id = next
				continue
			}
			return dst, ref, found, 0, nil
		}
		next, ref, found, dst = 0, OverflowRef{}, false, forget(orig, dst)
		read, err := t.readNodeAt(id, asOf, from, func(n node) error {
			if n.kind() == kindBranch {
				next = PageID(n.child(n.childFor(key)))
				if next == 0 {
					return fmt.Errorf("btree: page %d: %w: zero child", id, ErrCorruptNode)
				}
				return nil
			}
			i, ok := n.search(key)
			if !ok {
				return nil
			}
			found = true
			v, overflow, length := n.value(i)
			if overflow {
				ref = OverflowRef{Length: length, first: PageID(binary.LittleEndian.Uint64(v)), overflow: true}
			} else if keep {
				dst = append(dst, v...)
			}
			return nil
		})
		if from != readAny && errors.Is(err, bufferpool.ErrNotCached) {
			return dst[:base], OverflowRef{}, false, read, nil
		}
		if err != nil || next == 0 {
			return dst, ref, found, 0, err
		}
		id = next
	}
	return dst, OverflowRef{}, false, 0, nil
}

// forget returns orig (a lookup's dst as the caller gave it) with nothing
// left of the bytes a failed leaf peek appended (now dst): they may be
// another page's, and must not stay reachable in the caller's spare
// capacity, nor keep a new array alive.
func forget(orig, dst []byte) []byte {
	if len(dst) > len(orig) && cap(orig) > len(orig) && &dst[0] == &orig[:cap(orig)][0] {
		clear(dst[len(orig):])
	}
	return orig
}

// ReadOverflow appends the value ref refers to to dst.
func (t *Tree) ReadOverflow(dst []byte, ref OverflowRef) ([]byte, error) {
	if !ref.overflow {
		return dst, nil
	}
	var v [overflowRef]byte
	binary.LittleEndian.PutUint64(v[:], uint64(ref.first))
	return t.readValue(dst, v[:], true, ref.Length)
}

// Tx is a write transaction: one at a time per tree (the caller serializes
// transactions and keeps readers without a snapshot out while one runs).
type Tx struct {
	t    *Tree
	txid uint64
	// Nodes with txid <= frozen do not change in place as they are:
	// those with txid <= durable (a checkpoint's) are copied on write,
	// the others (an open snapshot's only) are copied aside to a version
	// first (versions.go).
	durable, frozen uint64
	root            PageID
	begun           PageID // the root at Begin
	// created are the pages this transaction allocated (copies, split
	// halves, new roots, overflow chains); scrap those of them it dropped
	// again; freed the committed pages it replaced or dropped.
	created map[PageID]struct{}
	scrap   []PageID
	freed   []PageID
	// versions are the pages holding the versions of nodes this
	// transaction changed in place although a snapshot froze them.
	versions []PageID
	// Undo (undo.go): undo is the key log of the simple writes;
	// pageUndo, set by the first write that is not simple, makes every
	// node changed in place from then on copied first into before (one
	// page buffer each, at most maxBeforeImages bytes in all); noUndo
	// keeps neither.
	undo     *undoLog
	before   map[PageID][]byte
	pageUndo bool
	noUndo   bool
	done     bool
	// aborting: an Abort began and did not finish (done is set too, so
	// the transaction takes no more writes); undone counts the key log's
	// records it has undone (from the last), so that a call after an
	// error resumes.
	aborting bool
	undone   int
}

// pageBuffer returns a page-sized buffer for a before-image.
func (t *Tree) pageBuffer() []byte {
	if n := len(t.spare); n > 0 {
		b := t.spare[n-1]
		t.spare = t.spare[:n-1]
		return b
	}
	return make([]byte, t.pageSize)
}

// recycleImages gives the transaction's before-image buffers back to the
// tree for the next transaction.
func (tx *Tx) recycleImages() {
	for id, img := range tx.before {
		tx.t.spare = append(tx.t.spare, img)
		delete(tx.before, id)
	}
}

// maxBeforeImages bounds a transaction's before-images: beyond it, nodes
// are copied instead of changed in place, which needs no before-image.
var maxBeforeImages = 4 << 20 // a variable for tests

// Begin starts a write transaction with id txid on the version rooted at
// root (0 for an empty tree). Nodes written by transactions up to durable
// (the last checkpoint begun) are copied on write, with their path; nodes
// written after durable and up to frozen (the newest open snapshot, if
// later) keep their page and leave a version of their bytes for the
// snapshots (versions.go).
func (t *Tree) Begin(root PageID, txid, durable, frozen uint64) *Tx {
	tx := &Tx{t: t, txid: txid, durable: durable, frozen: max(durable, frozen), root: root, begun: root,
		created: make(map[PageID]struct{}), before: make(map[PageID][]byte), undo: &t.undo}
	tx.undo.reset()
	return tx
}

// Root is the root of the transaction's version so far.
func (tx *Tx) Root() PageID { return tx.root }

// Get looks key up in the transaction's version, its own changes included.
func (tx *Tx) Get(key, dst []byte) ([]byte, bool, error) {
	return tx.t.Get(tx.root, key, dst)
}

// step is one node of a descent: its page, the child index taken (for
// branches) and the node's txid when the descent read it.
type step struct {
	id    PageID
	child int
	txid  uint64
}

// maxDepth bounds a descent: no tree of this package is deeper (a branch
// holds at least three children: 3^64 pages), so a deeper path is a
// branch that points back up, a page that is corrupt though its checksum
// is good; without the bound a read looped forever holding the tree latch
// and Walk overflowed the stack at Open.
const maxDepth = 64

func errTooDeep(root PageID) error {
	return fmt.Errorf("btree: %w: the tree at page %d is over %d levels deep (a branch points back up)", ErrCorruptNode, root, maxDepth)
}

// descend returns the path from the root to key's leaf, root first.
func (tx *Tx) descend(key []byte, path []step) ([]step, error) {
	path = path[:0]
	for id := tx.root; ; {
		if len(path) > maxDepth {
			return nil, errTooDeep(tx.root)
		}
		var next PageID
		var txid uint64
		depth := len(path)
		err := tx.t.readBranch(id, func(n node) error {
			txid, next, path = n.txid(), 0, path[:depth]
			if n.kind() == kindLeaf {
				return nil
			}
			c := n.childFor(key)
			path = append(path[:depth], step{id: id, child: c, txid: txid})
			next = PageID(n.child(c))
			if next == 0 {
				return fmt.Errorf("btree: page %d: %w: zero child", id, ErrCorruptNode)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if next == 0 {
			return append(path, step{id: id, txid: txid}), nil
		}
		id = next
	}
}

// writable returns node path[d] pinned exclusively and ready to change:
// the node itself if it may change in place (copied first if the
// transaction keeps page undo, see needsCopy); a node only a snapshot
// froze, also changed in place once its bytes are copied to a version
// (versions.go) if no reader holds it; else a copy on a new page that
// its parent (made writable in turn) now points to. path[d].id is
// updated to the page returned. The caller marks it dirty and releases
// it.
func (tx *Tx) writable(path []step, d int) (bufferpool.Page, error) {
	id := path[d].id
	// Look first: a frozen node is only read (a checkpoint may be writing
	// it, a snapshot reading it), never pinned exclusively but by TryGet.
	var txid uint64
	if err := tx.t.readNode(id, func(n node) error { txid = n.txid(); return nil }); err != nil {
		return bufferpool.Page{}, err
	}
	// An unfrozen node (one this transaction changed already included)
	// changes in place if it needs no copy (made or copied already by this
	// transaction, or no page undo), or while the copies stay within their
	// bound; past it, it is copied on write like a frozen node, also if
	// simple writes changed it (their key undo then finds it under the
	// root at Begin).
	unfrozen := txid == tx.txid || txid > tx.frozen
	room := !tx.needsCopy(id) || len(tx.before)*tx.t.pageSize < maxBeforeImages
	if unfrozen && room {
		pg, err := tx.t.pool.Get(id, bufferpool.Exclusive)
		if err != nil {
			return pg, err
		}
		tx.changeInPlace(id, pg)
		return pg, nil
	}
	// A copy: the version a snapshot reads, or the node's new page.
	nid, err := tx.t.pool.Allocate()
	if err != nil {
		return bufferpool.Page{}, err
	}
	npg, err := tx.t.pool.Create(nid)
	if err != nil {
		_ = tx.t.pool.FreePage(nid)
		return bufferpool.Page{}, err
	}
	tx.created[nid] = struct{}{}
	if err := tx.t.readNode(id, func(n node) error { copy(npg.Data(), n); return nil }); err != nil {
		npg.Release()
		return bufferpool.Page{}, err
	}
	// Only a snapshot froze the node (no checkpoint's tree holds it): if
	// no reader holds it now, the copy becomes the version the snapshots
	// read, and the node changes in place, its path unchanged. Page undo
	// restores it if the transaction aborts (a frozen node is never
	// written simply: putSimple switched to page undo).
	if room && txid > tx.durable && (tx.pageUndo || tx.noUndo) {
		if pg, ok := tx.t.pool.TryGet(id, bufferpool.Exclusive); ok {
			// Recorded at once, so that a snapshot's reader finds the
			// version instead of waiting for the node (pinAt).
			tx.t.versions.add(id, txid, tx.txid, nid)
			npg.MarkDirty() // written back if evicted before it is freed
			npg.Release()
			delete(tx.created, nid)
			tx.versions = append(tx.versions, nid)
			tx.changeInPlace(id, pg)
			return pg, nil
		}
	}
	// Copy on write.
	node(npg.Data()).setTxid(tx.txid)
	npg.MarkDirty()
	tx.replaced(id)
	path[d].id = nid
	if err := tx.pointTo(path, d, nid); err != nil {
		npg.Release()
		return bufferpool.Page{}, err
	}
	return npg, nil
}

// changeInPlace readies node id, pinned exclusively as pg, for a change
// in place: its before-image is kept if the transaction needs one, and it
// takes the transaction's txid.
func (tx *Tx) changeInPlace(id PageID, pg bufferpool.Page) {
	if tx.needsCopy(id) {
		img := tx.t.pageBuffer()
		copy(img, pg.Data())
		tx.before[id] = img
	}
	node(pg.Data()).setTxid(tx.txid)
}

// pointTo makes the parent of path[d] (or the root) point to id.
func (tx *Tx) pointTo(path []step, d int, id PageID) error {
	if d == 0 {
		tx.root = id
		return nil
	}
	ppg, err := tx.writable(path, d-1)
	if err != nil {
		return err
	}
	node(ppg.Data()).setChild(path[d-1].child, uint64(id))
	ppg.MarkDirty()
	ppg.Release()
	return nil
}

// replaced records that page id (a node or an overflow page) left the
// tree: dropped at commit if this transaction made it, else returned to
// the caller to free when no reader needs it.
func (tx *Tx) replaced(id PageID) {
	if _, own := tx.created[id]; own {
		delete(tx.created, id)
		tx.scrap = append(tx.scrap, id)
		return
	}
	tx.freed = append(tx.freed, id)
}

// newNode allocates and creates an empty node page of this transaction.
func (tx *Tx) newNode(kind uint8, first PageID) (bufferpool.Page, error) {
	id, err := tx.t.pool.Allocate()
	if err != nil {
		return bufferpool.Page{}, err
	}
	pg, err := tx.t.pool.Create(id)
	if err != nil {
		_ = tx.t.pool.FreePage(id)
		return bufferpool.Page{}, err
	}
	initNode(pg.Data(), kind, uint64(first), tx.txid)
	pg.MarkDirty()
	tx.created[id] = struct{}{}
	return pg, nil
}

func (tx *Tx) check(key []byte) error {
	if tx.done {
		return errors.New("btree: transaction finished")
	}
	if len(key) == 0 {
		return ErrEmptyKey
	}
	if len(key) > tx.t.MaxKeySize() {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrKeyTooLarge, len(key), tx.t.MaxKeySize())
	}
	return nil
}

// Put sets key to value.
func (tx *Tx) Put(key, value []byte) error {
	if err := tx.check(key); err != nil {
		return err
	}
	if len(value) > MaxValueSize {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrValueTooLarge, len(value), MaxValueSize)
	}
	cell := leafCell{key: key, value: value, length: len(value)}
	var ref [overflowRef]byte
	if !tx.t.Inline(len(key), len(value)) {
		tx.switchToPages()
		first, err := tx.writeChain(value)
		if err != nil {
			return err
		}
		binary.LittleEndian.PutUint64(ref[:], uint64(first))
		cell.value, cell.overflow = ref[:], true
	}
	if tx.root == 0 {
		tx.switchToPages()
		pg, err := tx.newNode(kindLeaf, 0)
		if err != nil {
			return err
		}
		tx.root = pg.ID()
		pg.Release()
	}
	var buf [12]step
	path, err := tx.descend(key, buf[:0])
	if err != nil {
		return err
	}
	if !tx.pageUndo && !tx.noUndo {
		if done, err := tx.putSimple(path, key, value); done || err != nil {
			return err
		}
	}
	d := len(path) - 1
	pg, err := tx.writable(path, d)
	if err != nil {
		return err
	}
	defer pg.Release()
	pg.MarkDirty()
	n := node(pg.Data())
	i, found := n.search(key)
	if found {
		if v, overflow, length := n.value(i); overflow {
			if err := tx.dropChain(v, length); err != nil {
				return err
			}
		}
		if n.replaceLeafValue(i, cell.value, cell.overflow, cell.length) {
			return nil
		}
		n.deleteCell(i)
	} else if n.insertLeaf(i, cell.key, cell.value, cell.overflow, cell.length) {
		return nil
	}
	// The leaf is full: split it, the new cell included. Its cells are
	// read from a copy, since both halves are rewritten.
	s := tx.t.scratch
	copy(s, n)
	cells := slices.Insert(leafCells(node(s), tx.t.leafBuf), i, cell)
	tx.t.leafBuf = cells[:0]
	fill := 0.5
	if i == len(cells)-1 {
		fill = tx.t.fill // an append at the end: sequential inserts
	}
	k := splitPoint(len(cells), func(j int) int { return cells[j].size() }, tx.t.pageSize, fill)
	rpg, err := tx.newNode(kindLeaf, 0)
	if err != nil {
		return err
	}
	defer rpg.Release()
	if err := encodeLeaf(rpg.Data(), cells[k:], tx.txid); err != nil {
		return err
	}
	if err := encodeLeaf(n, cells[:k], tx.txid); err != nil {
		return err
	}
	tx.t.sep = append(tx.t.sep[:0], cells[k].key...)
	return tx.insertSeparator(path, d, tx.t.sep, rpg.ID())
}

// insertSeparator adds (sep, right) to the parent of path[d], the node
// right was split off from, splitting parents up to the root as needed.
// sep may be tx.t.sep: it is consumed before that buffer is reused.
func (tx *Tx) insertSeparator(path []step, d int, sep []byte, right PageID) error {
	if d == 0 {
		// A new root above the old one.
		rpg, err := tx.newNode(kindBranch, path[0].id)
		if err != nil {
			return err
		}
		defer rpg.Release()
		if !node(rpg.Data()).insertBranch(0, sep, uint64(right)) {
			return fmt.Errorf("btree: separator of %d bytes does not fit an empty branch", len(sep))
		}
		tx.root = rpg.ID()
		return nil
	}
	pg, err := tx.writable(path, d-1)
	if err != nil {
		return err
	}
	defer pg.Release()
	pg.MarkDirty()
	n := node(pg.Data())
	c := path[d-1].child // right becomes child c+1: cell c
	if n.insertBranch(c, sep, uint64(right)) {
		return nil
	}
	s := tx.t.scratch
	copy(s, n)
	first := node(s).firstChild()
	cells := slices.Insert(branchCells(node(s), tx.t.branchBuf), c, branchCell{key: sep, child: uint64(right)})
	tx.t.branchBuf = cells[:0]
	k := splitPoint(len(cells), func(j int) int { return cells[j].size() }, tx.t.pageSize, 0.5)
	// cells[k] moves up: its child becomes the new right node's first.
	rpg, err := tx.newNode(kindBranch, 0)
	if err != nil {
		return err
	}
	defer rpg.Release()
	if err := encodeBranch(rpg.Data(), cells[k].child, cells[k+1:], tx.txid); err != nil {
		return err
	}
	if err := encodeBranch(n, first, cells[:k], tx.txid); err != nil {
		return err
	}
	// The scratch page (and so cells) is reused by the parent's split.
	up := slices.Clone(cells[k].key)
	return tx.insertSeparator(path, d-1, up, rpg.ID())
}

// Delete removes key; it reports whether it was there. Empty leaves are
// removed from their parents (lazy rebalancing: nodes are not merged while
// they hold anything; the fill factor and compression make sparse pages
// cheap on disk).
func (tx *Tx) Delete(key []byte) (bool, error) {
	if err := tx.check(key); err != nil {
		return false, err
	}
	if tx.root == 0 {
		return false, nil
	}
	var buf [12]step
	path, err := tx.descend(key, buf[:0])
	if err != nil {
		return false, err
	}
	d := len(path) - 1
	found, simple := false, false
	if err := tx.t.readNode(path[d].id, func(n node) error {
		var i int
		if i, found = n.search(key); found {
			_, overflow, _ := n.value(i)
			simple = !tx.frozenNode(n.txid()) && !overflow && n.count() > 1
		}
		return nil
	}); err != nil || !found {
		return false, err // an absent key changes nothing, copies nothing
	}
	if !tx.pageUndo && !tx.noUndo {
		if !simple {
			tx.switchToPages()
		} else if done, err := tx.deleteSimple(path[d].id, key); done || err != nil {
			return done, err
		}
	}
	pg, err := tx.writable(path, d)
	if err != nil {
		return false, err
	}
	pg.MarkDirty()
	n := node(pg.Data())
	i, _ := n.search(key)
	if v, overflow, length := n.value(i); overflow {
		if err := tx.dropChain(v, length); err != nil {
			pg.Release()
			return false, err
		}
	}
	n.deleteCell(i)
	empty := n.count() == 0
	pg.Release()
	if !empty {
		return true, nil
	}
	// Remove empty nodes bottom-up: a node is empty when it has no cell
	// (a leaf) or no child (a branch).
	for ; empty; d-- {
		tx.replaced(path[d].id)
		if d == 0 {
			tx.root = 0
			return true, nil
		}
		var count int
		if err := tx.t.readNode(path[d-1].id, func(n node) error { count = n.count(); return nil }); err != nil {
			return true, err
		}
		if count == 0 {
			continue // the parent's only child is gone: it goes too
		}
		ppg, err := tx.writable(path, d-1)
		if err != nil {
			return true, err
		}
		p := node(ppg.Data())
		if c := path[d-1].child; c == 0 {
			p.setChild(0, p.child(1))
			p.deleteCell(0)
		} else {
			p.deleteCell(c - 1)
		}
		ppg.MarkDirty()
		ppg.Release()
		empty = false
	}
	return true, tx.collapseRoot()
}

// collapseRoot replaces a root branch that has a single child by that
// child, as often as needed.
func (tx *Tx) collapseRoot() error {
	for levels := 0; tx.root != 0; levels++ {
		if levels > maxDepth {
			return errTooDeep(tx.root)
		}
		var only PageID
		err := tx.t.readNode(tx.root, func(n node) error {
			if n.kind() == kindBranch && n.count() == 0 {
				only = PageID(n.firstChild())
			}
			return nil
		})
		if err != nil || only == 0 {
			return err
		}
		tx.replaced(tx.root)
		tx.root = only
	}
	return nil
}

// Created returns the pages the transaction wrote and kept.
func (tx *Tx) Created() []PageID {
	ids := make([]PageID, 0, len(tx.created))
	for id := range tx.created {
		ids = append(ids, id)
	}
	return ids
}

// Scrap returns the pages the transaction created and dropped again (an
// overflow chain written and overwritten in one commit, a split's page
// dropped by a later write): Commit returns them among the freed pages,
// but no version ever used them, so they may be freed as soon as no
// reader of an older version remains, without a checkpoint.
func (tx *Tx) Scrap() []PageID { return tx.scrap }

// Versions returns the pages holding versions of nodes the transaction
// changed in place although an open snapshot froze them (versions.go).
// They are not among the pages Commit or Abort returns: the caller frees
// each (ForgetVersions first) once no reader of a version before this
// transaction remains, whether it committed or not (a reader may have
// found a version while it ran).
func (tx *Tx) Versions() []PageID { return tx.versions }

// Commit ends the transaction and returns the new root (0 for an empty
// tree) and the pages to free: the committed pages the transaction
// replaced, which the caller frees when no reader needs them, and the
// pages it created and dropped again.
func (tx *Tx) Commit() (PageID, []PageID, error) {
	if tx.done {
		return 0, nil, errors.New("btree: transaction finished")
	}
	tx.done = true
	tx.recycleImages()
	tx.undo.reset()
	return tx.root, append(tx.freed, tx.scrap...), nil
}

// Abort abandons the transaction: the nodes it changed in place get their
// copies back and its simple writes are undone (undo.go), and the pages it
// created are returned for freeing (no version ever used them).
//
// An error leaves the tree partly put back. A page that could not be read
// (an I/O error) stops Abort before it changes anything for that page, so
// Abort may be called again, and resumes where it stopped: a transient
// read error need not lose the tree. Every call returns the same pages.
// An error that another call cannot cure is returned again: a corrupt page
// (ErrCorruptNode, or the store's), or ErrCannotUndo (a leaf not as the
// transaction left it, a transaction begun with DisableUndo). The caller
// must then not use the tree any more.
func (tx *Tx) Abort() ([]PageID, error) {
	if tx.noUndo {
		tx.done = true
		return nil, errNoUndo
	}
	if tx.done && !tx.aborting {
		return nil, nil // committed, or aborted
	}
	tx.done, tx.aborting = true, true // no more writes, even if this fails
	ids := append(tx.Created(), tx.scrap...)
	// Each restored copy leaves the map (restoring it again after the key
	// log changed its page would undo those changes twice).
	var err error
	for id, img := range tx.before {
		pg, gerr := tx.t.pool.Get(id, bufferpool.Exclusive)
		if gerr != nil {
			err = cmp.Or(err, gerr)
			continue
		}
		copy(pg.Data(), img)
		pg.MarkDirty()
		pg.Release()
		tx.t.spare = append(tx.t.spare, img)
		delete(tx.before, id)
	}
	if err != nil {
		return ids, err
	}
	// The tree is now as it was when the transaction switched to page
	// copies, under the root it had at Begin (simple writes do not change
	// the root); the key log takes it back to Begin.
	tx.root = tx.begun
	if err := tx.undoKeys(); err != nil {
		return ids, err
	}
	tx.aborting = false
	tx.undo.reset()
	return ids, nil
}

// walkAhead is how many children of a branch Walk asks the pool to read
// at once before it visits them.
const walkAhead = 64

// Walk calls fn with the id of every page of the version rooted at root:
// nodes and overflow pages. It reads every node (and the overflow pages,
// to follow their chains), a branch's children read ahead walkAhead at a
// time (bufferpool.Pool.ReadAhead: leaves written together come in one
// read): Open's walk for unreachable pages read a 1 GiB tree one 4 KiB
// page after another before (docs/KVSTORE.md, "Recovery time").
func (t *Tree) Walk(root PageID, fn func(PageID)) error { return t.walk(root, 0, fn) }

// walk is Walk of the subtree at root, depth levels below the version's
// root.
func (t *Tree) walk(root PageID, depth int, fn func(PageID)) error {
	if root == 0 {
		return nil
	}
	if depth > maxDepth {
		return errTooDeep(root)
	}
	fn(root)
	var kids []PageID
	type chain struct {
		first  PageID
		length int
	}
	var chains []chain
	err := t.readNode(root, func(n node) error {
		if n.kind() == kindLeaf {
			for i := 0; i < n.count(); i++ {
				if v, overflow, length := n.value(i); overflow {
					chains = append(chains, chain{PageID(binary.LittleEndian.Uint64(v)), length})
				}
			}
			return nil
		}
		for i := 0; i <= n.count(); i++ {
			kids = append(kids, PageID(n.child(i)))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range chains {
		if err := t.walkChain(c.first, c.length, func(id PageID, _ []byte) { fn(id) }); err != nil {
			return err
		}
	}
	for i, k := range kids {
		if i%walkAhead == 0 {
			t.pool.ReadAhead(kids[i:min(i+walkAhead, len(kids))])
		}
		if err := t.walk(k, depth+1, fn); err != nil {
			return err
		}
	}
	return nil
}

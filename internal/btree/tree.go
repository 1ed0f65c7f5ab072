package btree

import (
	"bytes"
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

// Tree is a copy-on-write B+tree over buffer-pool pages.
//
// A version of the tree is its root page id. Committed pages are never
// changed: a write transaction copies every node it changes to a new page
// (and the path from it to the root), so a reader that holds a root sees one
// consistent version, without latches beyond the page it is reading and
// without waiting for the writer, for as long as the pages of that version
// are not freed. The transaction returns the pages it replaced; the caller
// frees them once no reader and no durable checkpoint needs them.
type Tree struct {
	pool     *bufferpool.Pool
	pageSize int
	fill     float64
	// spillNodes is how many nodes a write transaction keeps
	// materialised on the Go heap before it writes them to their pages
	// (spill), so that a large transaction's memory is the pool's.
	spillNodes int
}

// New returns a tree over pool. fillFactor (0.1..1) is how full sequential
// inserts leave pages (document 001). A write transaction keeps at most
// maxTxHeap bytes of materialised nodes on the Go heap, and at most an
// eighth of the pool's budget (but at least 16 nodes); beyond that it
// writes them to their pool pages.
func New(pool *bufferpool.Pool, fillFactor float64) *Tree {
	ps := pool.PageSize()
	return &Tree{pool: pool, pageSize: ps, fill: fillFactor,
		spillNodes: max(16, int(min(pool.CacheSize()/8, maxTxHeap)/int64(ps)))}
}

// maxTxHeap bounds a write transaction's materialised nodes on the heap.
const maxTxHeap = 4 << 20

// MaxKeySize is the largest key: a quarter of a page, so that a branch
// always holds at least three keys and a leaf at least one cell per split.
func (t *Tree) MaxKeySize() int { return t.pageSize/4 - 16 }

// MaxValueSize is the largest value (MaxValueSize, 16 MiB).
func (t *Tree) MaxValueSize() int { return MaxValueSize }

// MaxInlineValueSize is the largest value stored in its leaf; longer ones
// go to a chain of overflow pages. A quarter page, like keys, so that a
// leaf cell always fits with room to split.
func (t *Tree) MaxInlineValueSize() int { return t.pageSize/4 - 16 }

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
	pg, err := t.pool.Get(id, bufferpool.Shared)
	if err != nil {
		return err
	}
	defer pg.Release()
	b := pg.Data()
	if k := b[0]; k != kindLeaf && k != kindBranch {
		return fmt.Errorf("btree: page %d: %w: kind %d", id, ErrCorruptNode, k)
	}
	return fn(node(b))
}

// Get looks key up in the version rooted at root and appends its value to
// dst.
func (t *Tree) Get(root PageID, key, dst []byte) ([]byte, bool, error) {
	id := root
	for {
		next, v, found, err := t.step(id, key, dst)
		if err != nil || next == 0 {
			return v, found, err
		}
		id = next
	}
}

// step reads node id on the way to key: a branch gives the child to read
// next; a leaf gives key's value appended to dst (next is 0).
func (t *Tree) step(id PageID, key, dst []byte) (next PageID, v []byte, found bool, err error) {
	var overflow bool
	var ref [overflowRef]byte
	var length int
	err = t.readNode(id, func(n node) error {
		if n.kind() == kindBranch {
			next = PageID(n.child(n.childFor(key)))
			return nil
		}
		i, ok := n.search(key)
		if ok {
			var v []byte
			v, overflow, length = n.value(i)
			if overflow {
				copy(ref[:], v) // read the chain after unpinning the leaf
			} else {
				dst = append(dst, v...)
			}
			found = true
		}
		return nil
	})
	if err != nil || next != 0 {
		return next, dst, false, err
	}
	if overflow {
		dst, err = t.readValue(dst, ref[:], true, length)
	}
	return 0, dst, found, err
}

// wnode is a node materialised in a write transaction: a new page that only
// this transaction can see, so it is changed in place until commit.
type wnode struct {
	id     PageID
	leaf   bool
	first  PageID // branch
	leaves []leafCell
	kids   []branchCell
	arena  []byte // owns keys and values copied in
	// created: the page exists in the pool (Materialize or a spill
	// wrote it).
	created bool
	// spilled: the node's content is only in its page (leaves, kids and
	// arena are nil); load reads it back before the node is changed.
	spilled bool
}

// own copies b into the node's arena. The arena grows by new chunks of at
// least a page, never by reallocation: the cells point into the chunks,
// so a reallocated arena would keep every older copy alive.
func (w *wnode) own(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	if cap(w.arena)-len(w.arena) < len(b) {
		w.arena = make([]byte, 0, max(len(b), arenaChunk))
	}
	start := len(w.arena)
	w.arena = append(w.arena, b...)
	return w.arena[start:len(w.arena):len(w.arena)]
}

// arenaChunk is the size of a node arena's chunks.
const arenaChunk = 8 << 10

func (w *wnode) space() int {
	if w.leaf {
		return leafSpace(w.leaves)
	}
	return branchSpace(w.kids)
}

// Tx is a write transaction: one at a time per tree (the caller serializes).
type Tx struct {
	t      *Tree
	txid   uint64
	root   PageID
	nodes  map[PageID]*wnode   // node pages created by this transaction
	chains map[PageID]struct{} // overflow pages created by this transaction
	freed  []PageID            // committed pages this transaction replaced
	scrap  []PageID            // pages this transaction created, then dropped
	done   bool
	// resident counts the nodes materialised on the Go heap (not spilled);
	// spills counts the spills.
	resident, spills int
}

// Begin starts a write transaction on the version rooted at root (0 for an
// empty tree).
func (t *Tree) Begin(root PageID, txid uint64) *Tx {
	return &Tx{t: t, txid: txid, root: root, nodes: make(map[PageID]*wnode), chains: make(map[PageID]struct{})}
}

// Get looks key up in the transaction's version, its own changes included.
func (tx *Tx) Get(key, dst []byte) ([]byte, bool, error) {
	id := tx.root
	for id != 0 {
		w, ok := tx.nodes[id]
		if !ok {
			return tx.t.Get(id, key, dst) // an unchanged, committed subtree
		}
		if w.spilled {
			// Its page is current, but its children may be nodes of
			// this transaction that changed since: one step at a time.
			next, v, found, err := tx.t.step(id, key, dst)
			if err != nil || next == 0 {
				return v, found, err
			}
			id = next
			continue
		}
		if w.leaf {
			i, found := slices.BinarySearchFunc(w.leaves, key, func(c leafCell, k []byte) int { return bytes.Compare(c.key, k) })
			if !found {
				return dst, false, nil
			}
			c := w.leaves[i]
			dst, err := tx.t.readValue(dst, c.value, c.overflow, c.length)
			return dst, true, err
		}
		id = childAt(w, childIndex(w, key))
	}
	return dst, false, nil
}

// Root is the root of the transaction's version so far.
func (tx *Tx) Root() PageID { return tx.root }

// pathEntry is one step of a descent: the node and the child index taken.
type pathEntry struct {
	w     *wnode
	child int
}

// load returns the writable node for id: itself if this transaction created
// it, else a copy on a new page (the old page joins the freed list).
func (tx *Tx) load(id PageID) (*wnode, error) {
	if w, ok := tx.nodes[id]; ok {
		if w.spilled {
			if err := tx.unspill(w); err != nil {
				return nil, err
			}
		}
		return w, nil
	}
	w := &wnode{}
	if err := tx.t.materialise(id, w); err != nil {
		return nil, err
	}
	if err := tx.place(w); err != nil {
		return nil, err
	}
	tx.freed = append(tx.freed, id)
	return w, nil
}

// unspill reads a spilled node of the transaction back from its page.
func (tx *Tx) unspill(w *wnode) error {
	if err := tx.t.materialise(w.id, w); err != nil {
		return err
	}
	w.spilled = false
	tx.resident++
	return nil
}

// spillIfLarge writes the transaction's materialised nodes to their pages
// and drops their heap copies, once more than spillNodes of them are on
// the heap. Called between operations only: no path holds a node then.
func (tx *Tx) spillIfLarge() error {
	if tx.resident <= tx.t.spillNodes {
		return nil
	}
	if err := tx.writeNodes(); err != nil {
		return err
	}
	for _, w := range tx.nodes {
		w.leaves, w.kids, w.arena, w.spilled = nil, nil, nil, true
	}
	tx.resident = 0
	tx.spills++
	return nil
}

// materialise reads node id's page into w's cells (w's id is kept).
func (t *Tree) materialise(id PageID, w *wnode) error {
	w.leaves, w.kids, w.first = nil, nil, 0
	return t.readNode(id, func(n node) error {
		w.arena = make([]byte, 0, len(n))
		if n.kind() == kindLeaf {
			w.leaf = true
			for _, c := range leafCells(n, nil) {
				c.key, c.value = w.own(c.key), w.own(c.value)
				w.leaves = append(w.leaves, c)
			}
		} else {
			w.first = PageID(n.firstChild())
			for _, c := range branchCells(n, nil) {
				c.key = w.own(c.key)
				w.kids = append(w.kids, c)
			}
		}
		return nil
	})
}

// place gives w a new page id; the page itself is created at Commit.
func (tx *Tx) place(w *wnode) error {
	id, err := tx.t.pool.Allocate()
	if err != nil {
		return err
	}
	w.id = id
	tx.nodes[w.id] = w
	tx.resident++
	return nil
}

// descend copies the path to key's leaf and returns it, root first.
func (tx *Tx) descend(key []byte) ([]pathEntry, error) {
	if tx.root == 0 {
		w := &wnode{leaf: true}
		if err := tx.place(w); err != nil {
			return nil, err
		}
		tx.root = w.id
	}
	var path []pathEntry
	id := tx.root
	var parent *wnode
	for {
		w, err := tx.load(id)
		if err != nil {
			return nil, err
		}
		if parent != nil {
			setChild(parent, path[len(path)-1].child, w.id)
		} else {
			tx.root = w.id
		}
		if w.leaf {
			return append(path, pathEntry{w: w}), nil
		}
		i := childIndex(w, key)
		path = append(path, pathEntry{w: w, child: i})
		id = childAt(w, i)
		parent = w
	}
}

func childIndex(w *wnode, key []byte) int {
	i, _ := slices.BinarySearchFunc(w.kids, key, func(c branchCell, k []byte) int {
		if bytes.Compare(c.key, k) <= 0 {
			return -1
		}
		return 1
	})
	return i
}

func childAt(w *wnode, i int) PageID {
	if i == 0 {
		return w.first
	}
	return PageID(w.kids[i-1].child)
}

func setChild(w *wnode, i int, id PageID) {
	if i == 0 {
		w.first = id
	} else {
		w.kids[i-1].child = uint64(id)
	}
}

// Put sets key to value.
func (tx *Tx) Put(key, value []byte) error {
	if err := tx.check(key); err != nil {
		return err
	}
	if len(value) > MaxValueSize {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrValueTooLarge, len(value), MaxValueSize)
	}
	if err := tx.spillIfLarge(); err != nil {
		return err
	}
	path, err := tx.descend(key)
	if err != nil {
		return err
	}
	leaf := path[len(path)-1].w
	i, found := slices.BinarySearchFunc(leaf.leaves, key, func(c leafCell, k []byte) int { return bytes.Compare(c.key, k) })
	if found {
		if err := tx.dropValue(leaf.leaves[i]); err != nil {
			return err
		}
	}
	c := leafCell{key: leaf.own(key), length: len(value)}
	if len(value) > tx.t.MaxInlineValueSize() {
		first, err := tx.writeChain(value)
		if err != nil {
			return err
		}
		var ref [overflowRef]byte
		binary.LittleEndian.PutUint64(ref[:], uint64(first))
		c.value, c.overflow = leaf.own(ref[:]), true
	} else {
		c.value = leaf.own(value)
	}
	if found {
		leaf.leaves[i] = c
	} else {
		leaf.leaves = slices.Insert(leaf.leaves, i, c)
	}
	return tx.splitUp(path)
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
	if err := tx.spillIfLarge(); err != nil {
		return false, err
	}
	path, err := tx.descend(key)
	if err != nil {
		return false, err
	}
	leaf := path[len(path)-1].w
	i, found := slices.BinarySearchFunc(leaf.leaves, key, func(c leafCell, k []byte) int { return bytes.Compare(c.key, k) })
	if !found {
		return false, nil
	}
	if err := tx.dropValue(leaf.leaves[i]); err != nil {
		return false, err
	}
	leaf.leaves = slices.Delete(leaf.leaves, i, i+1)
	// Remove empty nodes bottom-up.
	for d := len(path) - 1; d > 0; d-- {
		w := path[d].w
		if (w.leaf && len(w.leaves) > 0) || (!w.leaf && (len(w.kids) > 0 || w.first != 0)) {
			break
		}
		tx.drop(w)
		p := path[d-1]
		if p.child == 0 {
			if len(p.w.kids) == 0 {
				p.w.first = 0
			} else {
				p.w.first = PageID(p.w.kids[0].child)
				p.w.kids = p.w.kids[1:]
			}
		} else {
			p.w.kids = slices.Delete(p.w.kids, p.child-1, p.child)
		}
	}
	// Collapse root branches left with a single child: the child (a node
	// of this transaction or a committed page) becomes the root.
	for {
		r, err := tx.residentNode(tx.root)
		if err != nil {
			return false, err
		}
		if r == nil || r.leaf || len(r.kids) > 0 {
			break
		}
		tx.drop(r)
		tx.root = r.first
	}
	if r, err := tx.residentNode(tx.root); err != nil {
		return false, err
	} else if r != nil && r.leaf && len(r.leaves) == 0 {
		tx.drop(r)
		tx.root = 0
	}
	return true, nil
}

// residentNode returns the transaction's node id, read back if spilled,
// or nil if id is not a node of the transaction.
func (tx *Tx) residentNode(id PageID) (*wnode, error) {
	w := tx.nodes[id]
	if w != nil && w.spilled {
		if err := tx.unspill(w); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// drop discards a node created by this transaction.
func (tx *Tx) drop(w *wnode) {
	delete(tx.nodes, w.id)
	if !w.spilled {
		tx.resident--
	}
	tx.scrap = append(tx.scrap, w.id)
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

// splitUp splits the nodes of path that no longer fit a page, bottom-up.
func (tx *Tx) splitUp(path []pathEntry) error {
	for d := len(path) - 1; d >= 0; d-- {
		w := path[d].w
		if w.space() <= tx.t.pageSize {
			return nil
		}
		right := &wnode{leaf: w.leaf}
		var sep []byte
		// A node split at its end (sequential inserts) keeps the
		// fill-factor share on the left; elsewhere it splits in half.
		fill := 0.5
		if d == len(path)-1 && path[d].child == 0 && w.leaf {
			fill = tx.t.fill
		}
		if w.leaf {
			k := splitPoint(len(w.leaves), func(i int) int { return w.leaves[i].size() }, tx.t.pageSize, fill)
			for _, c := range w.leaves[k:] {
				right.leaves = append(right.leaves, leafCell{key: right.own(c.key), value: right.own(c.value), overflow: c.overflow, length: c.length})
			}
			w.leaves = w.leaves[:k]
			sep = right.leaves[0].key
		} else {
			k := splitPoint(len(w.kids), func(i int) int { return w.kids[i].size() }, tx.t.pageSize, 0.5)
			// kids[k] moves up: its child becomes the right node's first.
			sep = right.own(w.kids[k].key)
			right.first = PageID(w.kids[k].child)
			for _, c := range w.kids[k+1:] {
				right.kids = append(right.kids, branchCell{key: right.own(c.key), child: c.child})
			}
			w.kids = w.kids[:k]
		}
		if err := tx.place(right); err != nil {
			return err
		}
		if d == 0 {
			root := &wnode{first: w.id}
			root.kids = []branchCell{{key: root.own(sep), child: uint64(right.id)}}
			if err := tx.place(root); err != nil {
				return err
			}
			tx.root = root.id
			return nil
		}
		p := path[d-1]
		p.w.kids = slices.Insert(p.w.kids, p.child, branchCell{key: p.w.own(sep), child: uint64(right.id)})
	}
	return nil
}

// Created returns the pages the transaction wrote (valid after Commit).
func (tx *Tx) Created() []PageID {
	ids := make([]PageID, 0, len(tx.nodes)+len(tx.chains))
	for id := range tx.nodes {
		ids = append(ids, id)
	}
	for id := range tx.chains {
		ids = append(ids, id)
	}
	return ids
}

// Commit writes every node of the transaction to its page and returns the
// new root (0 for an empty tree) and the pages to free: the committed pages
// the transaction replaced, which the caller frees when no reader needs
// them, and the pages it created and dropped again.
func (tx *Tx) Commit() (PageID, []PageID, error) {
	if tx.done {
		return 0, nil, errors.New("btree: transaction finished")
	}
	tx.done = true
	if err := tx.writeNodes(); err != nil {
		return 0, nil, err
	}
	return tx.root, append(tx.freed, tx.scrap...), nil
}

// Materialize writes the transaction's nodes to their pages, so that a
// Cursor over Root() sees the transaction's writes so far. The pages stay
// the transaction's: later writes change them and Commit writes them
// again. A cursor must not be used across later writes.
func (tx *Tx) Materialize() error {
	if tx.done {
		return errors.New("btree: transaction finished")
	}
	return tx.writeNodes()
}

// writeNodes encodes every node of the transaction into its page.
func (tx *Tx) writeNodes() error {
	for _, w := range tx.nodes {
		if w.spilled {
			continue // its page is current
		}
		var pg bufferpool.Page
		var err error
		if w.created {
			pg, err = tx.t.pool.Get(w.id, bufferpool.Exclusive)
		} else {
			pg, err = tx.t.pool.Create(w.id)
		}
		if err != nil {
			return err
		}
		w.created = true
		if w.leaf {
			err = encodeLeaf(pg.Data(), w.leaves, tx.txid)
		} else {
			err = encodeBranch(pg.Data(), uint64(w.first), w.kids, tx.txid)
		}
		pg.MarkDirty()
		pg.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// Abort abandons the transaction; the pages it created are returned for
// freeing (they were never part of a committed version).
func (tx *Tx) Abort() []PageID {
	tx.done = true
	return append(tx.Created(), tx.scrap...)
}

// Walk calls fn with the id of every page of the version rooted at root:
// nodes and overflow pages. It reads every node (and the overflow pages,
// to follow their chains).
func (t *Tree) Walk(root PageID, fn func(PageID)) error {
	if root == 0 {
		return nil
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
	for _, k := range kids {
		if err := t.Walk(k, fn); err != nil {
			return err
		}
	}
	return nil
}

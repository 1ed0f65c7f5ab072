package btree

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// dumpTree describes every page of the version rooted at root, in page id
// order: a node's kind, txid, first child and cells (keys, values or
// overflow references, children), an overflow page's bytes (by checksum).
// Two versions with equal dumps have the same pages, structure, contents
// and txids, whatever the byte layout of their cells.
func dumpTree(t *testing.T, tr *Tree, root PageID) string {
	t.Helper()
	var ids []PageID
	if err := tr.Walk(root, func(id PageID) { ids = append(ids, id) }); err != nil {
		t.Fatalf("walk %d: %v", root, err)
	}
	slices.Sort(ids)
	if d := slices.Compact(slices.Clone(ids)); len(d) != len(ids) {
		t.Fatalf("version %d reaches a page twice", root)
	}
	var b strings.Builder
	for _, id := range ids {
		pg, err := tr.pool.Get(id, bufferpool.Shared)
		if err != nil {
			t.Fatalf("page %d: %v", id, err)
		}
		n := node(pg.Data())
		switch n.kind() {
		case kindOverflow:
			fmt.Fprintf(&b, "%d overflow %08x\n", id, crc32.ChecksumIEEE(pg.Data()))
		case kindLeaf:
			fmt.Fprintf(&b, "%d leaf txid %d:", id, n.txid())
			for i := range n.count() {
				v, overflow, length := n.value(i)
				fmt.Fprintf(&b, " %q=%v/%d/%x", n.key(i), overflow, length, crc32.ChecksumIEEE(v))
			}
			b.WriteByte('\n')
		default:
			fmt.Fprintf(&b, "%d branch txid %d: %d", id, n.txid(), n.firstChild())
			for i := range n.count() {
				fmt.Fprintf(&b, " %q>%d", n.key(i), n.child(i+1))
			}
			b.WriteByte('\n')
		}
		pg.Release()
	}
	return b.String()
}

// reachable is the set of pages of the versions rooted at roots.
func reachable(t *testing.T, tr *Tree, roots ...PageID) map[PageID]bool {
	t.Helper()
	live := map[PageID]bool{}
	for _, r := range roots {
		if err := tr.Walk(r, func(id PageID) { live[id] = true }); err != nil {
			t.Fatal(err)
		}
	}
	return live
}

// TestAbortRestoresTree runs random transactions (puts, overwrites,
// deletes, duplicate keys, values inline and in overflow pages) that are
// committed, aborted, or aborted after an I/O error injected at a random
// point (a read of the page store: a failed write fails the store for good; with a cache small enough
// that pages are evicted and read back). After every Abort the current
// version and the kept older versions must be page for page what they
// were (dumpTree: structure, contents, txids), the pages Abort returns
// must be in none of them, and after freeing those no page of the store
// may be outside the kept versions and the pages commits replaced. The
// next transaction reuses the aborted one's txid, as the database does.
// It runs with the before-image bound as shipped, lowered to a few pages
// and to none, so that page undo also copies on write past the bound (and
// a new root is common).
func TestAbortRestoresTree(t *testing.T) {
	for _, c := range []struct {
		pageSize int
		bound    int // pages of before-images, 0: maxBeforeImages, -1: none
	}{{4096, 0}, {4096, 3}, {4096, -1}, {16384, 2}} {
		t.Run(fmt.Sprintf("%d-bound%d", c.pageSize, c.bound), func(t *testing.T) {
			if c.bound != 0 {
				defer func(old int) { maxBeforeImages = old }(maxBeforeImages)
				maxBeforeImages = max(c.bound, 0) * c.pageSize
			}
			testAbortRestoresTree(t, c.pageSize)
		})
	}
}

func testAbortRestoresTree(t *testing.T, ps int) {
	fs := vfs.NewMem()
	cd, _ := codec.New(codec.LZ4, 0)
	s, err := pagestore.Open("db", pagestore.Options{FS: fs, PageSize: ps, Codec: cd, DisableBackground: true, WriteBufferSize: 4 * ps})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := s.Allocate(); err != nil || id != 0 {
		t.Fatalf("allocate page 0: %d %v", id, err)
	}
	pool, err := bufferpool.New(s, bufferpool.Options{CacheSize: int64(24 * ps), Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { fs.SetInjector(nil); pool.Close(); s.Close() }()
	tr := New(pool, 1.0)
	rng := rand.New(rand.NewPCG(uint64(ps), 7))

	type version struct {
		root  PageID
		model map[string]string
		dump  string
	}
	var root PageID
	model := map[string]string{}
	var old []version
	replaced := map[PageID]bool{} // freed by commits, never freed here: old versions use them
	var frozen, committed uint64
	aborts, faulted, abortFaults := 0, 0, 0
	txns := 300
	if raceEnabled {
		txns = 100 // single-goroutine: the race detector only slows it
	}
	// Past txns only until faults have been injected, in a transaction and
	// in an abort (reads fail only on cache misses, which a short run may
	// not have).
	for txn := 1; txn <= txns || (faulted == 0 || abortFaults == 0) && txn <= 3*txns; txn++ {
		if txn%15 == 0 {
			old = append(old, version{root, model, dumpTree(t, tr, root)})
			frozen = committed
		}
		before := dumpTree(t, tr, root)
		tx := tr.Begin(root, committed+1, frozen, frozen)
		next := maps(model)
		mode := rng.IntN(4) // 0, 1: commit; 2: abort; 3: fault, then abort
		if mode == 3 {
			fs.SetInjector(vfs.InjectRandom(rand.New(rand.NewPCG(uint64(txn), 3)), 0.2, vfs.OpRead))
		}
		var opErr error
		var hot []string // keys of this transaction, written again
		for op := 0; op < 1+rng.IntN(80) && opErr == nil; op++ {
			k := fmt.Sprintf("k%05d", rng.IntN(2500))
			if len(hot) > 0 && rng.IntN(4) == 0 {
				k = hot[rng.IntN(len(hot))]
			}
			hot = append(hot, k)
			if rng.IntN(3) == 0 {
				var ok bool
				ok, opErr = tx.Delete([]byte(k))
				if opErr == nil {
					if _, had := next[k]; had != ok {
						t.Fatalf("txn %d: Delete(%q) = %v, model has it: %v", txn, k, ok, had)
					}
					delete(next, k)
				}
				continue
			}
			n := rng.IntN(ps / 16)
			switch rng.IntN(30) {
			case 0:
				n = ps + rng.IntN(2*ps) // overflow pages
			case 1:
				n = ps/4 - 40 // near the inline limit: splits
			}
			v := fmt.Sprintf("v%d.%d-%s", txn, op, randBytes(rng, n))
			if opErr = tx.Put([]byte(k), []byte(v)); opErr == nil {
				next[k] = v
			}
		}
		fs.SetInjector(nil)
		if opErr != nil && !errors.Is(opErr, vfs.ErrInjected) {
			t.Fatalf("txn %d: %v", txn, opErr)
		}
		if mode < 2 && opErr == nil {
			r, freed, err := tx.Commit()
			if err != nil {
				t.Fatal(err)
			}
			live := reachable(t, tr, r)
			for _, id := range freed {
				if live[id] {
					t.Fatalf("txn %d: commit frees page %d of its version", txn, id)
				}
				replaced[id] = true
			}
			root, model, committed = r, next, committed+1
			checkVersion(t, tr, root, model, rng)
			continue
		}
		aborts++
		if opErr != nil {
			faulted++
		}
		// Half the faulted transactions meet faults in Abort too: it is
		// called again until it succeeds (the faults stop after three
		// tries), resuming where it stopped. The pages it puts back are
		// first written back and evicted, so that it reads them.
		if mode == 3 && rng.IntN(2) == 0 {
			// Written back, then evicted by reading other versions' pages:
			// the abort reads its pages back.
			if err := pool.FlushAll(); err != nil {
				t.Fatal(err)
			}
			for _, v := range old {
				dumpTree(t, tr, v.root)
			}
			fs.SetInjector(vfs.InjectRandom(rand.New(rand.NewPCG(uint64(txn), 5)), 0.2, vfs.OpRead))
		}
		ids, err := tx.Abort()
		for try := 1; err != nil && errors.Is(err, vfs.ErrInjected); try++ {
			abortFaults++
			if try == 3 {
				fs.SetInjector(nil)
			}
			ids, err = tx.Abort()
		}
		fs.SetInjector(nil)
		if err != nil {
			t.Fatalf("txn %d: abort (after %v): %v", txn, opErr, err)
		}
		if got := dumpTree(t, tr, root); got != before {
			t.Fatalf("txn %d: abort (after %v) left the tree changed:\n%s", txn, opErr, diffLines(before, got))
		}
		roots := []PageID{root}
		for _, v := range old {
			if got := dumpTree(t, tr, v.root); got != v.dump {
				t.Fatalf("txn %d: abort changed the version of root %d:\n%s", txn, v.root, diffLines(v.dump, got))
			}
			roots = append(roots, v.root)
		}
		live := reachable(t, tr, roots...)
		for _, id := range ids {
			if live[id] || replaced[id] {
				t.Fatalf("txn %d: abort returns page %d, which a version uses", txn, id)
			}
			if err := pool.FreePage(id); err != nil {
				t.Fatalf("txn %d: free %d: %v", txn, id, err)
			}
		}
		if err := pool.FlushAll(); err != nil {
			t.Fatal(err)
		}
		if err := s.ForEachPage(func(id PageID) error {
			if id != 0 && !live[id] && !replaced[id] {
				return fmt.Errorf("page %d is in no version: leaked", id)
			}
			return nil
		}); err != nil {
			t.Fatalf("txn %d: after abort: %v", txn, err)
		}
		checkVersion(t, tr, root, model, rng)
	}
	t.Logf("%d aborts, %d after an injected fault, %d aborts failed by one and called again", aborts, faulted, abortFaults)
	if faulted == 0 || abortFaults == 0 {
		t.Fatal("no fault was injected (in a transaction, in an abort): the test tests nothing")
	}
}

// randBytes is n random letters: values the page store cannot compress
// much, so that the small cache evicts and reads pages back.
func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(rng.IntN(26))
	}
	return b
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// diffLines shows the lines of want and got that differ.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

// TestBeforeImagesBounded: a transaction's page copies stay within
// maxBeforeImages even for leaves its simple writes changed before it
// switched to page undo (past the bound such a leaf is copied on write,
// as any other), and Abort still puts the tree back.
func TestBeforeImagesBounded(t *testing.T) {
	const ps = 4096
	defer func(old int) { maxBeforeImages = old }(maxBeforeImages)
	maxBeforeImages = 4 * ps
	tr, _, _ := newTestTree(t, ps, 4<<20, 1.0)
	tx := tr.Begin(0, 1, 0, 0)
	key := func(i int) []byte { return fmt.Appendf(nil, "k%05d", i) }
	for i := range 400 {
		if err := tx.Put(key(i), make([]byte, 200)); err != nil {
			t.Fatal(err)
		}
	}
	root, _, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	before := dumpTree(t, tr, root)
	for _, commit := range []bool{false, true} {
		tx = tr.Begin(root, 2, 0, 0)
		for i := 0; i < 400; i += 10 { // one key in (nearly) every leaf: simple
			if err := tx.Put(key(i), []byte("simple")); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Put([]byte("big"), make([]byte, 2*ps)); err != nil { // switches to page undo
			t.Fatal(err)
		}
		for i := 0; i < 400; i += 10 {
			if err := tx.Put(key(i), []byte("paged")); err != nil {
				t.Fatal(err)
			}
			if n := len(tx.before) * ps; n > maxBeforeImages {
				t.Fatalf("before-images hold %d bytes, bound %d", n, maxBeforeImages)
			}
		}
		if !commit {
			if _, err := tx.Abort(); err != nil {
				t.Fatal(err)
			}
			if got := dumpTree(t, tr, root); got != before {
				t.Fatalf("abort left the tree changed:\n%s", diffLines(before, got))
			}
			continue
		}
		r, _, err := tx.Commit()
		if err != nil {
			t.Fatal(err)
		}
		for i := range 400 {
			want := make([]byte, 200)
			if i%10 == 0 {
				want = []byte("paged")
			}
			if v, ok, err := tr.Get(r, key(i), nil); err != nil || !ok || !bytes.Equal(v, want) {
				t.Fatalf("Get(%s) = %q %v %v", key(i), v, ok, err)
			}
		}
	}
}

// TestKeyLogNotRetained: the key log of one large transaction is not kept
// by the tree after it ends.
func TestKeyLogNotRetained(t *testing.T) {
	tr, _, _ := newTestTree(t, 16384, 8<<20, 1.0)
	tx := tr.Begin(0, 1, 0, 0)
	if err := tx.Put([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	root, _, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	tx = tr.Begin(root, 2, 0, 0)
	v := make([]byte, 1000)
	for range 6000 { // 6 MB of old values: simple writes of one key
		if err := tx.Put([]byte("k"), v); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if c := cap(tr.undo.buf); c > maxBeforeImages {
		t.Fatalf("the tree keeps a key log of %d bytes", c)
	}
}

// TestAbortResumesAfterReadError: an abort that stops at a page it cannot
// read, called again, resumes where it stopped. The transaction made a
// simple write to leaf A, then one to leaf B, then switched to page undo
// (an overflow value) and changed B again (B's before-image holds the
// simple write). A is evicted; B and the root stay in memory. The first
// abort restores B's before-image, undoes B's simple write, then fails
// reading A. The second must neither restore B's before-image again (that
// would bring the simple write back) nor undo B's key again.
func TestAbortResumesAfterReadError(t *testing.T) {
	const ps = 4096
	fs := vfs.NewMem()
	cd, _ := codec.New(codec.LZ4, 0)
	s, err := pagestore.Open("db", pagestore.Options{FS: fs, PageSize: ps, Codec: cd, DisableBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := s.Allocate(); err != nil || id != 0 {
		t.Fatalf("allocate page 0: %d %v", id, err)
	}
	// No compressed tier: an evicted page is read from the files.
	pool, err := bufferpool.New(s, bufferpool.Options{CacheSize: 24 * ps, Partitions: 1, FixedShare: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { fs.SetInjector(nil); pool.Close(); s.Close() }()
	tr := New(pool, 1.0)
	key := func(i int) []byte { return fmt.Appendf(nil, "k%04d", i) }
	tx := tr.Begin(0, 1, 0, 0)
	for i := range 2000 {
		if err := tx.Put(key(i), bytes.Repeat([]byte{'a'}, 100)); err != nil {
			t.Fatal(err)
		}
	}
	root, _, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	before := dumpTree(t, tr, root)
	leaf := func(tx *Tx, k []byte) PageID {
		path, err := tx.descend(k, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(path) != 2 {
			t.Fatalf("tree of height %d, want 2", len(path))
		}
		return path[1].id
	}

	tx = tr.Begin(root, 2, 0, 0)
	put := func(k, v []byte) {
		if err := tx.Put(k, v); err != nil {
			t.Fatal(err)
		}
	}
	put(key(10), []byte("simple A"))
	put(key(1000), []byte("simple B"))
	if tx.pageUndo {
		t.Fatal("the simple writes switched to page undo")
	}
	put(key(1500), bytes.Repeat([]byte{'o'}, 2*ps)) // overflow: page undo from here
	put(key(1001), []byte("paged B"))
	a, b, c := leaf(tx, key(10)), leaf(tx, key(1000)), leaf(tx, key(1500))
	if _, ok := tx.before[b]; !ok || a == b || b == c {
		t.Fatalf("leaves A %d, B %d, C %d; B has a before-image: %v", a, b, c, ok)
	}
	// A written back and evicted; the root, B and C read last.
	if err := pool.FlushAll(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i += 20 {
		leaf(tx, key(i))
	}
	for _, k := range []int{1000, 1500} {
		leaf(tx, key(k))
	}
	if pool.InMemory(a) || !pool.InMemory(b) || !pool.InMemory(c) || !pool.InMemory(tx.begun) {
		t.Fatalf("in memory: A %v, B %v, C %v, root %v; want only A out", pool.InMemory(a), pool.InMemory(b), pool.InMemory(c), pool.InMemory(tx.begun))
	}

	fs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpRead {
			return vfs.InjectedError(op, path)
		}
		return nil
	})
	if _, err := tx.Abort(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("abort with A unreadable: %v", err)
	}
	if tx.undone != 1 {
		t.Fatalf("the failed abort undid %d keys, want B's one", tx.undone)
	}
	if err := tx.Put(key(5), []byte("x")); err == nil {
		t.Fatal("a transaction whose abort failed took a write")
	}
	if _, _, err := tx.Commit(); err == nil {
		t.Fatal("a transaction whose abort failed committed")
	}
	fs.SetInjector(nil)
	if _, err := tx.Abort(); err != nil {
		t.Fatalf("abort again: %v", err)
	}
	if got := dumpTree(t, tr, root); got != before {
		t.Fatalf("the resumed abort left the tree changed:\n%s", diffLines(before, got))
	}
}

// TestAbortWithoutUndoFailsEveryTime: a transaction begun with DisableUndo
// cannot be aborted, and says so on every call (a caller that tries again
// must not take a second call for success).
func TestAbortWithoutUndoFailsEveryTime(t *testing.T) {
	tr, _, _ := newTestTree(t, 4096, 1<<20, 1.0)
	tx := tr.Begin(0, 1, 0, 0)
	tx.DisableUndo()
	if err := tx.Put([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := tx.Abort(); !errors.Is(err, ErrCannotUndo) {
			t.Fatalf("abort %d: %v, want ErrCannotUndo", i+1, err)
		}
	}
}

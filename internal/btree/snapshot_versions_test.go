package btree

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/bufferpool"
)

// TestSnapshotVersionsModel runs random transactions against a map while
// snapshots come and go, as the database runs them: each transaction
// begins with the newest open snapshot frozen and an older checkpoint
// durable, so nodes only a snapshot froze change in place and leave a
// version (versions.go); some transactions abort (their versions wait
// like a commit's); versions and replaced pages are freed, ForgetVersions
// first, once no snapshot before the transaction that made them is open,
// so their page ids are reused. Every open snapshot is read (lookups,
// scans both ways, seeks) after every transaction and must read the
// database as it was when taken.
func TestSnapshotVersionsModel(t *testing.T) {
	for _, ps := range []int{4096, 16384} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			tr, _, pool := newTestTree(t, ps, 1<<20, 1.0)
			rng := rand.New(rand.NewPCG(uint64(ps), 7))
			model := map[string]string{}
			var root PageID
			type snapshot struct {
				root  PageID
				txid  uint64
				model map[string]string
			}
			var snaps []snapshot
			type pending struct {
				txid uint64
				ids  []PageID
			}
			var frees []pending
			var durable, committed uint64
			versions, aborted := 0, 0
			freeReady := func() {
				oldest := committed + 1
				for _, s := range snaps {
					oldest = min(oldest, s.txid)
				}
				for len(frees) > 0 && frees[0].txid <= oldest {
					for _, id := range frees[0].ids {
						tr.ForgetVersions([]PageID{id})
						if err := pool.FreePage(id); err != nil {
							t.Fatal(err)
						}
					}
					frees = frees[1:]
				}
			}
			for txn := 1; txn <= 200; txn++ {
				switch r := rng.IntN(10); {
				case r < 2:
					snaps = append(snaps, snapshot{root, committed, model})
				case r < 4 && len(snaps) > 0:
					snaps = slices.Delete(snaps, 0, 1) // oldest
				case r < 5 && len(snaps) > 0:
					snaps = snaps[:len(snaps)-1] // newest
				case r == 5:
					durable = committed // a checkpoint froze the tree
				}
				newest := uint64(0)
				for _, s := range snaps {
					newest = max(newest, s.txid)
				}
				tx := tr.Begin(root, committed+1, durable, newest)
				next := make(map[string]string, len(model))
				for k, v := range model {
					next[k] = v
				}
				for op := 0; op < 1+rng.IntN(40); op++ {
					k := randKey(rng)
					if rng.IntN(3) == 0 {
						if _, err := tx.Delete([]byte(k)); err != nil {
							t.Fatal(err)
						}
						delete(next, k)
						continue
					}
					n := rng.IntN(120)
					if rng.IntN(40) == 0 {
						n = 2 * ps // in overflow pages
					}
					v := fmt.Sprintf("v%d-%s", txn, bytes.Repeat([]byte("x"), n))
					if err := tx.Put([]byte(k), []byte(v)); err != nil {
						t.Fatal(err)
					}
					next[k] = v
				}
				versions += len(tx.Versions())
				if rng.IntN(8) == 0 {
					ids, err := tx.Abort()
					if err != nil {
						t.Fatal(err)
					}
					for _, id := range ids {
						if err := pool.FreePage(id); err != nil {
							t.Fatal(err)
						}
					}
					frees = append(frees, pending{committed + 1, tx.Versions()})
					aborted += len(tx.Versions())
				} else {
					r, freed, err := tx.Commit()
					if err != nil {
						t.Fatal(err)
					}
					root, model, committed = r, next, uint64(txn)
					frees = append(frees, pending{committed, append(freed, tx.Versions()...)})
				}
				freeReady()
				checkVersion(t, tr, root, model, rng)
				for _, s := range snaps {
					checkVersionAt(t, tr, s.root, s.txid, s.model, rng)
				}
			}
			if versions == 0 || aborted == 0 {
				t.Fatalf("%d versions kept, %d of them by aborted transactions: the test checks too little", versions, aborted)
			}
			snaps = nil
			freeReady()
			if n := tr.Versions(); n != 0 {
				t.Fatalf("%d versions left in the table with no snapshot open", n)
			}
		})
	}
}

// TestSnapshotVersionKeepsThePath: a write to a leaf an open snapshot
// froze changes the leaf in place, leaving one version for the snapshot,
// instead of copying the leaf and every node above it; but if a reader
// holds the leaf (an iterator), the leaf is copied on write (and its
// parent, which must point to the copy, changes in place leaving a
// version), and the reader goes on reading it unchanged.
func TestSnapshotVersionKeepsThePath(t *testing.T) {
	tr, _, _ := newTestTree(t, 4096, 16<<20, 1.0)
	// Long keys: branches of a few keys, three levels.
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%05d%0200d", i, 0)) }
	tx := tr.Begin(0, 1, 0, 0)
	for i := 0; i < 5000; i++ {
		if err := tx.Put(key(i), []byte("old")); err != nil {
			t.Fatal(err)
		}
	}
	root, _, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	depth := 0
	for id := root; ; depth++ {
		var child PageID
		if err := tr.readNode(id, func(n node) error {
			if n.kind() == kindBranch {
				child = PageID(n.child(0))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if child == 0 {
			break
		}
		id = child
	}
	if depth < 2 {
		t.Fatalf("tree of %d levels: want at least 3", depth+1)
	}
	// A snapshot at txid 1; transaction 2 writes under it.
	tx = tr.Begin(root, 2, 0, 1)
	if err := tx.Put(key(7), []byte("new")); err != nil {
		t.Fatal(err)
	}
	newRoot, freed, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if newRoot != root || len(freed) != 0 || len(tx.Versions()) != 1 {
		t.Fatalf("write under a snapshot: root %d → %d, %d pages replaced, %d versions: want the root kept, none replaced, one version", root, newRoot, len(freed), len(tx.Versions()))
	}
	for _, c := range []struct {
		asOf uint64
		want string
	}{{1, "old"}, {2, "new"}, {Live, "new"}} {
		if v, ok, err := tr.GetAt(root, c.asOf, key(7), nil); err != nil || !ok || string(v) != c.want {
			t.Fatalf("GetAt(%d) = %q %v %v, want %q", c.asOf, v, ok, err, c.want)
		}
	}

	// An iterator of the snapshot at txid 2 holds key 9's leaf (the leaf
	// transaction 2 changed): transaction 3 cannot take it, and copies it.
	c := new(Cursor)
	tr.InitCursorAt(c, root, 2, nil, nil)
	defer c.Release()
	if !c.SeekGE(key(9)) || string(c.Value()) != "old" {
		t.Fatalf("cursor at %q = %q", c.Key(), c.Value())
	}
	tx = tr.Begin(root, 3, 0, 2)
	if err := tx.Put(key(9), []byte("new")); err != nil {
		t.Fatal(err)
	}
	newRoot, freed, err = tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if newRoot != root || len(freed) != 1 || len(tx.Versions()) != 1 {
		t.Fatalf("write to a leaf a reader holds: root %d → %d, %d pages replaced, %d versions: want the leaf copied, its parent changed in place leaving a version", root, newRoot, len(freed), len(tx.Versions()))
	}
	if !c.Next() || !bytes.Equal(c.Key(), key(10)) || string(c.Value()) != "old" {
		t.Fatalf("cursor moved to %q = %q, want %q = old", c.Key(), c.Value(), key(10))
	}
	if !c.SeekGE(key(7)) || string(c.Value()) != "new" {
		t.Fatalf("cursor at txid 2 reads %q = %q, want the value of transaction 2", c.Key(), c.Value())
	}
	if !c.SeekGE(key(9)) || string(c.Value()) != "old" {
		t.Fatalf("cursor at txid 2 reads %q = %q, want the value before transaction 3", c.Key(), c.Value())
	}
	for _, k := range []struct {
		asOf uint64
		i    int
		want string
	}{{1, 7, "old"}, {1, 9, "old"}, {2, 7, "new"}, {2, 9, "old"}} {
		if v, _, err := tr.GetAt(root, k.asOf, key(k.i), nil); err != nil || string(v) != k.want {
			t.Fatalf("GetAt(%d, %s) = %q %v, want %q", k.asOf, key(k.i), v, err, k.want)
		}
	}
	if v, _, err := tr.Get(newRoot, key(9), nil); err != nil || string(v) != "new" {
		t.Fatalf("Get = %q %v", v, err)
	}
}

// TestVersionMissingIsCorrupt: a node newer than the version read with no
// version kept (a page whose txid is wrong) is ErrCorruptNode, not another
// version's bytes.
func TestVersionMissingIsCorrupt(t *testing.T) {
	tr, _, pool := newTestTree(t, 4096, 1<<20, 1.0)
	tx := tr.Begin(0, 1, 0, 0)
	if err := tx.Put([]byte("a"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	root, _, err := tx.Commit()
	if err != nil {
		t.Fatal(err)
	}
	pg, err := pool.Get(root, bufferpool.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	node(pg.Data()).setTxid(5)
	pg.MarkDirty()
	pg.Release()
	if _, _, err := tr.GetAt(root, 1, []byte("a"), nil); !errors.Is(err, ErrCorruptNode) {
		t.Fatalf("GetAt: %v, want ErrCorruptNode", err)
	}
	c := new(Cursor)
	tr.InitCursorAt(c, root, 1, nil, nil)
	if c.First() || !errors.Is(c.Err(), ErrCorruptNode) {
		t.Fatalf("cursor: %v, want ErrCorruptNode", c.Err())
	}
}

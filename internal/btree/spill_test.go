package btree

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLargeTransactionSpills: a transaction that changes far more nodes
// than its heap allowance spills them to their pages and reads them back,
// with reads, deletes (down to an empty tree and up again) and a cursor in
// the middle, and commits the same tree a map describes.
func TestLargeTransactionSpills(t *testing.T) {
	tr, _, _ := newTestTree(t, 4096, 1<<20, 1)
	if tr.spillNodes != 32 {
		t.Fatalf("spill allowance %d nodes, want 32 for 1 MiB of 4 KiB pages", tr.spillNodes)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	model := map[string]string{}
	var root PageID
	for round := 0; round < 4; round++ {
		tx := tr.Begin(root, uint64(round+1))
		for i := 0; i < 6000; i++ {
			k := fmt.Sprintf("key%06d", rng.IntN(20000))
			switch op := rng.IntN(10); {
			case op < 6:
				v := fmt.Sprintf("v%d-%d-%s", round, i, make([]byte, rng.IntN(120)))
				if err := tx.Put([]byte(k), []byte(v)); err != nil {
					t.Fatal(err)
				}
				model[k] = v
			case op < 8:
				if _, err := tx.Delete([]byte(k)); err != nil {
					t.Fatal(err)
				}
				delete(model, k)
			default:
				v, ok, err := tx.Get([]byte(k), nil)
				if want, has := model[k]; err != nil || ok != has || string(v) != want {
					t.Fatalf("round %d op %d: get %s = %q %v %v, want %q %v", round, i, k, v, ok, err, want, has)
				}
			}
			if round == 3 && i == 5000 {
				// Delete all but the 10 smallest keys from the right:
				// subtrees empty one by one and the root collapses onto
				// its leftmost child, which is not on the delete path
				// and may be spilled.
				keys := slices.Sorted(maps.Keys(model))
				for j := len(keys) - 1; j >= 10; j-- {
					if _, err := tx.Delete([]byte(keys[j])); err != nil {
						t.Fatal(err)
					}
					delete(model, keys[j])
				}
				if err := tx.Materialize(); err != nil {
					t.Fatal(err)
				}
				checkVersion(t, tr, tx.Root(), model, rng)
			}
		}
		if tx.spills == 0 {
			t.Fatalf("round %d: the transaction never spilled", round)
		}
		if tx.resident > tr.spillNodes+8 {
			t.Fatalf("round %d: %d nodes on the heap, allowance %d", round, tx.resident, tr.spillNodes)
		}
		if err := tx.Materialize(); err != nil {
			t.Fatal(err)
		}
		checkVersion(t, tr, tx.Root(), model, rng)
		newRoot, _, err := tx.Commit()
		if err != nil {
			t.Fatal(err)
		}
		root = newRoot
		checkVersion(t, tr, root, model, rng)
	}
}

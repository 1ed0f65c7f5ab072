package strata

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestUpdateIteratorMergesWrites: an iterator in Update over committed
// keys plus the transaction's sets, overwrites and deletes, moved at random
// in both directions (turning round, seeking, running off either end),
// agrees with a sorted model at every step.
func TestUpdateIteratorMergesWrites(t *testing.T) {
	db, err := Open("db", memOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(5, 5))
	model := map[string]string{}
	b := db.NewBatch()
	for i := 0; i < 300; i += 2 {
		k := fmt.Sprintf("k%03d", i)
		b.Set([]byte(k), []byte("tree"))
		model[k] = "tree"
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 20; round++ {
		err := db.Update(func(tx *Tx) error {
			m := maps2(model)
			for i := 0; i < 60; i++ {
				k := fmt.Sprintf("k%03d", rng.IntN(300))
				if rng.IntN(3) == 0 {
					if err := tx.Delete([]byte(k)); err != nil {
						return err
					}
					delete(m, k)
				} else {
					v := fmt.Sprintf("tx%d-%d", round, i)
					if err := tx.Set([]byte(k), []byte(v)); err != nil {
						return err
					}
					m[k] = v
				}
			}
			keys := slices.Sorted(mapsKeys(m))
			it, err := tx.NewIter(nil)
			if err != nil {
				return err
			}
			defer it.Close()
			pos := -1 // index into keys; -1 or len(keys): off the end
			for step := 0; step < 400; step++ {
				var ok bool
				var what string
				switch op := rng.IntN(6); {
				case op == 0:
					ok, pos, what = it.First(), 0, "First"
				case op == 1:
					ok, pos, what = it.Last(), len(keys)-1, "Last"
				case op == 2:
					k := fmt.Sprintf("k%03d", rng.IntN(310))
					i, _ := slices.BinarySearch(keys, k)
					ok, pos, what = it.SeekGE([]byte(k)), i, "SeekGE "+k
				case op == 3:
					k := fmt.Sprintf("k%03d", rng.IntN(310))
					i, _ := slices.BinarySearch(keys, k)
					ok, pos, what = it.SeekLT([]byte(k)), i-1, "SeekLT "+k
				case op == 4:
					if !it.Valid() {
						continue
					}
					ok, pos, what = it.Next(), pos+1, "Next"
				default:
					if !it.Valid() {
						continue
					}
					ok, pos, what = it.Prev(), pos-1, "Prev"
				}
				want := pos >= 0 && pos < len(keys)
				if ok != want {
					return fmt.Errorf("round %d step %d %s: valid %v, want %v (%v)", round, step, what, ok, want, it.Error())
				}
				if ok && (string(it.Key()) != keys[pos] || string(it.Value()) != m[keys[pos]]) {
					return fmt.Errorf("round %d step %d %s: at %s=%s, want %s=%s", round, step, what, it.Key(), it.Value(), keys[pos], m[keys[pos]])
				}
			}
			model = m
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func maps2(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

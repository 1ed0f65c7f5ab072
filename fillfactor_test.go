package strata

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestFillFactorLargeCellSplit is the case that made a fill-factor split
// produce a right half larger than a page: a leaf holding one key of
// MaxKeySize with a quarter-page value, then sequential small rows.
func TestFillFactorLargeCellSplit(t *testing.T) {
	for _, c := range []struct{ page, fill int }{{16384, 50}, {4096, 10}, {4096, 30}} {
		t.Run(fmt.Sprintf("page%d-fill%d", c.page, c.fill), func(t *testing.T) {
			fs := vfs.NewMem()
			o := &Options{PageSize: c.page, FillFactor: c.fill, CacheSize: 1 << 20, Partitions: 2, Codec: "lz4", fs: fs}
			db, err := Open("db", o)
			if err != nil {
				t.Fatal(err)
			}
			model := map[string][]byte{}
			set := func(k string, v []byte) {
				t.Helper()
				if err := db.Set([]byte(k), v); err != nil {
					t.Fatalf("set %.10q (%d-byte value): %v", k, len(v), err)
				}
				model[k] = v
			}
			set("a", []byte("1"))
			big := "b" + string(bytes.Repeat([]byte("k"), db.MaxKeySize()-1))
			set(big, bytes.Repeat([]byte("v"), c.page/4-16))
			for i := 0; i < 300; i++ {
				set(fmt.Sprintf("d%03d", i), bytes.Repeat([]byte{byte(i)}, 100))
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if db, err = Open("db", o); err != nil {
				t.Fatalf("reopen with the same options: %v", err)
			}
			defer db.Close()
			for k, v := range model {
				if got, err := db.Get([]byte(k)); err != nil || !bytes.Equal(got, v) {
					t.Fatalf("get %.10q: %d bytes, %v", k, len(got), err)
				}
			}
		})
	}
}

// TestFillFactorModel: random and sequential inserts, overwrites and
// deletes with keys and values of every size (up to the limits) at every
// fill factor from 10 to 100, checked against a map, through reopen and
// through iterators in transactions.
func TestFillFactorModel(t *testing.T) {
	fills := []int{10, 20, 30, 40, 50, 60, 70, 75, 80, 90, 100}
	for _, fill := range fills {
		for _, page := range []int{4096, 16384} {
			t.Run(fmt.Sprintf("page%d-fill%d", page, fill), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(fill), uint64(page)))
				fs := vfs.NewMem()
				o := &Options{PageSize: page, FillFactor: fill, CacheSize: 1 << 20, Partitions: 1, Codec: "lz4", fs: fs}
				db, err := Open("db", o)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { db.Close() }()
				model := map[string][]byte{}
				size := func(limit int) int {
					switch rng.IntN(4) {
					case 0:
						return limit
					case 1:
						return 1 + rng.IntN(limit)
					default:
						return 1 + rng.IntN(120)
					}
				}
				seq := 0
				for step := 0; step < 600; step++ {
					var k string
					if rng.IntN(3) > 0 { // sequential: the fill-factor splits
						seq++
						k = fmt.Sprintf("s%06d", seq)
					} else {
						k = fmt.Sprintf("r%x", rng.Uint64())
					}
					if n := size(db.MaxKeySize()); n > len(k) {
						k += string(bytes.Repeat([]byte{'_'}, n-len(k)))
					}
					v := bytes.Repeat([]byte{byte(step)}, size(page/4-16)-1)
					if rng.IntN(20) == 0 {
						v = make([]byte, page+rng.IntN(3*page)) // overflow pages
					}
					if err := db.Update(func(tx *Tx) error {
						if err := tx.Set([]byte(k), v); err != nil {
							return err
						}
						if rng.IntN(8) == 0 && len(model) > 0 {
							keys := slices.Sorted(mapsKeys(model))
							victim := keys[rng.IntN(len(keys))]
							delete(model, victim)
							if err := tx.Delete([]byte(victim)); err != nil {
								return err
							}
						}
						if step%50 == 0 {
							it, err := tx.NewIter(nil)
							if err != nil {
								return err
							}
							it.Close()
						}
						return nil
					}); err != nil {
						t.Fatalf("step %d: set %d-byte key, %d-byte value: %v", step, len(k), len(v), err)
					}
					model[k] = v
					if step%200 == 199 {
						if err := db.Close(); err != nil {
							t.Fatal(err)
						}
						if db, err = Open("db", o); err != nil {
							t.Fatalf("reopen: %v", err)
						}
					}
				}
				got := scanAll(t, db)
				if len(got) != len(model) {
					t.Fatalf("scan has %d keys, model %d", len(got), len(model))
				}
				for k, v := range model {
					if !bytes.Equal([]byte(got[k]), v) {
						t.Fatalf("key %.12q: %d bytes, want %d", k, len(got[k]), len(v))
					}
				}
			})
		}
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

package strata_test

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/stratadb/strata"
)

func Example() {
	dir, _ := os.MkdirTemp("", "strata-example-")
	defer os.RemoveAll(dir)

	db, err := strata.Open(dir, nil) // defaults: 4 KiB pages, zstd, 64 MiB cache
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	b := db.NewBatch()
	b.Set([]byte("apple"), []byte("red"))
	b.Set([]byte("banana"), []byte("yellow"))
	b.Set([]byte("cherry"), []byte("dark red"))
	if err := b.Commit(strata.Sync); err != nil { // all three, atomically, durably
		log.Fatal(err)
	}

	v, _ := db.Get([]byte("banana"))
	fmt.Println("banana is", string(v))

	it, _ := db.NewIter(&strata.IterOptions{LowerBound: []byte("b")})
	for it.First(); it.Valid(); it.Next() {
		fmt.Printf("%s=%s\n", it.Key(), it.Value())
	}
	it.Close()
	// Output:
	// banana is yellow
	// banana=yellow
	// cherry=dark red
}

func ExampleDB_Get() {
	dir, _ := os.MkdirTemp("", "strata-example-")
	defer os.RemoveAll(dir)
	db, _ := strata.Open(dir, nil)
	defer db.Close()

	_, err := db.Get([]byte("missing"))
	fmt.Println(errors.Is(err, strata.ErrNotFound))
	// Output: true
}

func ExampleDB_AppendValue() {
	dir, _ := os.MkdirTemp("", "strata-example-")
	defer os.RemoveAll(dir)
	db, _ := strata.Open(dir, nil)
	defer db.Close()
	db.Set([]byte("apple"), []byte("red"))
	db.Set([]byte("banana"), []byte("yellow"))

	buf := make([]byte, 0, 64) // reused: no allocation per read
	for _, k := range []string{"apple", "banana"} {
		var err error
		buf, err = db.AppendValue(buf[:0], []byte(k))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s is %s\n", k, buf)
	}
	// Output:
	// apple is red
	// banana is yellow
}

func ExampleDB_NewSnapshot() {
	dir, _ := os.MkdirTemp("", "strata-example-")
	defer os.RemoveAll(dir)
	db, _ := strata.Open(dir, nil)
	defer db.Close()

	db.Set([]byte("k"), []byte("old"))
	snap, _ := db.NewSnapshot()
	db.Set([]byte("k"), []byte("new"))

	v, _ := snap.Get([]byte("k"))
	fmt.Println(string(v)) // the snapshot does not see later writes
	snap.Close()
	v, _ = db.Get([]byte("k"))
	fmt.Println(string(v))
	// Output:
	// old
	// new
}

func ExampleDB_Update() {
	dir, _ := os.MkdirTemp("", "strata-example-")
	defer os.RemoveAll(dir)
	db, _ := strata.Open(dir, nil)
	defer db.Close()

	db.Set([]byte("counter"), []byte("1"))
	err := db.Update(func(tx *strata.Tx) error {
		v, err := tx.Get([]byte("counter"))
		if err != nil {
			return err
		}
		return tx.Set([]byte("counter"), append(v, '+'))
	})
	v, _ := db.Get([]byte("counter"))
	fmt.Println(string(v), err)
	// Output: 1+ <nil>
}

func ExampleIterator_Prev() {
	dir, _ := os.MkdirTemp("", "strata-example-")
	defer os.RemoveAll(dir)
	db, _ := strata.Open(dir, nil)
	defer db.Close()

	for _, k := range []string{"a", "b", "c", "d"} {
		db.Set([]byte(k), nil)
	}
	it, _ := db.NewIter(&strata.IterOptions{UpperBound: []byte("d")})
	for it.Last(); it.Valid(); it.Prev() {
		fmt.Print(string(it.Key()))
	}
	it.Close()
	fmt.Println()
	// Output: cba
}

func ExampleTx_NewIter() {
	dir, _ := os.MkdirTemp("", "strata-example-")
	defer os.RemoveAll(dir)
	db, _ := strata.Open(dir, nil)
	defer db.Close()
	db.Set([]byte("a"), []byte("1"))

	// Move every key under the prefix "new/", reading and writing in one
	// serializable transaction.
	err := db.Update(func(tx *strata.Tx) error {
		it, err := tx.NewIter(&strata.IterOptions{UpperBound: []byte("new/")})
		if err != nil {
			return err
		}
		var keys, vals [][]byte
		for it.First(); it.Valid(); it.Next() {
			keys = append(keys, bytes.Clone(it.Key()))
			vals = append(vals, bytes.Clone(it.Value()))
		}
		if err := it.Close(); err != nil {
			return err
		}
		for i, k := range keys { // writes end the iterator: collect first
			tx.Delete(k)
			tx.Set(append([]byte("new/"), k...), vals[i])
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	v, _ := db.Get([]byte("new/a"))
	fmt.Println(string(v))
	// Output: 1
}

package strata

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

func iterKeys(t *testing.T, it *Iterator) string {
	t.Helper()
	var keys []string
	for it.First(); it.Valid(); it.Next() {
		keys = append(keys, string(it.Key())+"="+string(it.Value()))
	}
	return strings.Join(keys, ",")
}

// TestTxIterator: an iterator in Update sees the transaction's writes; a
// later write or the end of the transaction ends it with a clear error.
func TestTxIterator(t *testing.T) {
	db, err := Open("db", memOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 0; i < 3; i++ {
		if err := db.Set([]byte(fmt.Sprintf("k%d", i)), []byte("old")); err != nil {
			t.Fatal(err)
		}
	}
	var leaked *Iterator
	err = db.Update(func(tx *Tx) error {
		if err := tx.Set([]byte("k1"), []byte("new")); err != nil {
			return err
		}
		if err := tx.Delete([]byte("k2")); err != nil {
			return err
		}
		if err := tx.Set([]byte("k3"), []byte("added")); err != nil {
			return err
		}
		it, err := tx.NewIter(&IterOptions{LowerBound: []byte("k1")})
		if err != nil {
			return err
		}
		if got, want := iterKeys(t, it), "k1=new,k3=added"; got != want {
			t.Errorf("iterator in Update: %s, want %s", got, want)
		}
		if err := tx.Set([]byte("k4"), []byte("x")); err != nil {
			return err
		}
		if it.First() || !errors.Is(it.Error(), ErrTxChanged) {
			t.Errorf("iterator after a write: valid %v, err %v", it.Valid(), it.Error())
		}
		it.Close()
		if leaked, err = tx.NewIter(nil); err != nil {
			return err
		}
		if got, want := iterKeys(t, leaked), "k0=old,k1=new,k3=added,k4=x"; got != want {
			t.Errorf("second iterator: %s, want %s", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if leaked.First() || !errors.Is(leaked.Error(), ErrTxDone) {
		t.Errorf("iterator after Update returned: valid %v, err %v", leaked.Valid(), leaked.Error())
	}
	// An aborted transaction's iterator pages are given back.
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	before := db.Stats().Store.LivePages
	errStop := errors.New("stop")
	err = db.Update(func(tx *Tx) error {
		for i := 0; i < 200; i++ {
			tx.Set([]byte(fmt.Sprintf("a%03d", i)), []byte(strings.Repeat("v", 100)))
		}
		it, err := tx.NewIter(nil)
		if err != nil {
			return err
		}
		defer it.Close()
		return errStop
	})
	if !errors.Is(err, errStop) {
		t.Fatal(err)
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if after := db.Stats().Store.LivePages; after > before {
		t.Errorf("aborted transaction left %d pages (live %d → %d)", after-before, before, after)
	}
	err = db.View(func(tx *Tx) error {
		it, err := tx.NewIter(nil)
		if err != nil {
			return err
		}
		defer it.Close()
		if got, want := iterKeys(t, it), "k0=old,k1=new,k3=added,k4=x"; got != want {
			t.Errorf("iterator in View: %s, want %s", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReviewUpdateFailedWrite: a Set that the batch took but the tree
// could not apply (a read error on a page not in the cache) must not be
// committed when fn ignores its error. Otherwise the WAL record holds the
// write while the tree does not: the database shows one state and
// recovers another after a crash. (Writes now reach the tree at commit: a
// read error there discards the whole transaction, WAL record included.)
func TestReviewUpdateFailedWrite(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs)
	opts.CacheSize = 256 << 10
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	key := func(i int) []byte { return []byte(fmt.Sprintf("key%05d", i)) }
	const n = 3000
	b := db.NewBatch()
	for i := 0; i < n; i++ {
		v := make([]byte, 300)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		b.Set(key(i), v)
	}
	if err := b.Commit(Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open("db", opts); err != nil {
		t.Fatal(err)
	}
	var fail atomic.Bool
	fs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpRead && fail.Load() {
			return vfs.InjectedError(op, path)
		}
		return nil
	})
	// The writes go to the tree when Update commits: fail the page reads
	// from the end of fn until Update returns.
	err = db.Update(func(tx *Tx) error {
		for i := 0; i < n; i++ {
			if err := tx.Set(key(i), []byte("new")); err != nil {
				return err
			}
		}
		fail.Store(true)
		return nil
	})
	fail.Store(false)
	fs.SetInjector(nil)
	if err == nil || !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Update whose commit met a read error returned %v, want the read error", err)
	}
	failed := key(0)
	now := scanAll(t, db)
	if now[string(failed)] == "new" {
		t.Errorf("a write of the failed transaction is visible")
	}
	if err := db.Sync(); err != nil {
		t.Fatal(err)
	}
	ropts := memOptions(fs.CrashClone(vfs.CrashDropUnsynced, nil))
	ropts.CacheSize = opts.CacheSize
	db2, err := Open("db", ropts)
	if err != nil {
		t.Fatal(err)
	}
	recovered := scanAll(t, db2)
	if fmt.Sprint(now) != fmt.Sprint(recovered) {
		t.Errorf("%s is %.8q before a crash and %.8q after recovery", failed, now[string(failed)], recovered[string(failed)])
	}
	db2.Close()
	db.Close()
}

// TestTxIteratorSurvivesRefusedWrite: a write refused before it changes
// anything (empty key) leaves the transaction's iterators valid.
func TestTxIteratorSurvivesRefusedWrite(t *testing.T) {
	db, err := Open("db", memOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Set([]byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *Tx) error {
		it, err := tx.NewIter(nil)
		if err != nil {
			return err
		}
		defer it.Close()
		if err := tx.Set(nil, []byte("x")); !errors.Is(err, ErrEmptyKey) {
			t.Errorf("empty key: %v", err)
		}
		if !it.First() || string(it.Key()) != "a" {
			t.Errorf("iterator after a refused write: valid %v, err %v", it.Valid(), it.Error())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

package strata

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestBatchChunks: a batch and an Update transaction of several MiB are
// built in chunks (no write spans two, values of every size up to the
// limit), read back inside the transaction, committed, and replayed from
// the WAL after a crash with every value intact.
func TestBatchChunks(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs)
	opts.CheckpointWAL = 1 << 40
	opts.CheckpointReplaced = -1
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	value := func(i int) []byte {
		n := []int{1, 100, 3000, 70 << 10, 2 << 20}[i%5] // up to a chunk's size and past it
		return bytes.Repeat([]byte{byte(i)}, n)
	}
	b := db.NewBatch()
	for i := 0; i < 40; i++ {
		if err := b.Set([]byte(fmt.Sprintf("b%03d", i)), value(i)); err != nil {
			t.Fatal(err)
		}
	}
	if b.used < 5 {
		t.Fatalf("%d MiB in %d chunks", b.size>>20, b.used)
	}
	for _, c := range b.ops() {
		if err := decodeOps(c, func(byte, []byte, []byte) error { return nil }); err != nil {
			t.Fatalf("a chunk does not hold whole writes: %v", err)
		}
	}
	if err := b.Commit(Sync); err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *Tx) error {
		for i := 0; i < 40; i++ {
			if err := tx.Set([]byte(fmt.Sprintf("u%03d", i)), value(i+1)); err != nil {
				return err
			}
		}
		for i := 0; i < 40; i++ {
			if v, err := tx.Get([]byte(fmt.Sprintf("u%03d", i))); err != nil || !bytes.Equal(v, value(i+1)) {
				return fmt.Errorf("u%03d in the transaction: %d bytes, %v", i, len(v), err)
			}
		}
		it, err := tx.NewIter(&IterOptions{LowerBound: []byte("u")})
		if err != nil {
			return err
		}
		defer it.Close()
		i := 0
		for it.First(); it.Valid(); it.Next() {
			if !bytes.Equal(it.Value(), value(i+1)) {
				return fmt.Errorf("iterator at %s: %d bytes", it.Key(), len(it.Value()))
			}
			i++
		}
		if i != 40 {
			return fmt.Errorf("iterator saw %d keys", i)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Sync(); err != nil {
		t.Fatal(err)
	}
	db = reopenAfterCrash(t, fs, db)
	for i := 0; i < 40; i++ {
		for _, k := range []struct {
			key string
			v   []byte
		}{{fmt.Sprintf("b%03d", i), value(i)}, {fmt.Sprintf("u%03d", i), value(i + 1)}} {
			if v, err := db.Get([]byte(k.key)); err != nil || !bytes.Equal(v, k.v) {
				t.Fatalf("%s after recovery: %d bytes, %v", k.key, len(v), err)
			}
		}
	}
}

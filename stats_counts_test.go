package strata

import (
	"errors"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestStatsCountCommittedWrites: Sets and Deletes count every committed
// write (Set, Delete, batches, Update), and nothing that failed or was
// discarded; Batches counts only Batch commits.
func TestStatsCountCommittedWrites(t *testing.T) {
	db, err := Open("db", memOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.Set([]byte("a"), []byte("1")))
	must(db.Delete([]byte("a")))
	b := db.NewBatch()
	must(b.Set([]byte("b"), []byte("2")))
	must(b.Set([]byte("c"), []byte("3")))
	must(b.Delete([]byte("d")))
	must(b.Commit(nil))
	must(db.Update(func(tx *Tx) error {
		must(tx.Set([]byte("e"), []byte("4")))
		return tx.Delete([]byte("b"))
	}))
	// Discarded: an Update whose function fails, and a refused write.
	_ = db.Update(func(tx *Tx) error {
		must(tx.Set([]byte("f"), []byte("5")))
		return errors.New("no")
	})
	if err := db.Set(nil, []byte("x")); !errors.Is(err, ErrEmptyKey) {
		t.Fatalf("empty key: %v", err)
	}
	st := db.Stats()
	if st.Sets != 4 || st.Deletes != 3 || st.Batches != 1 || st.Transactions != 1 {
		t.Errorf("Sets %d Deletes %d Batches %d Transactions %d, want 4 3 1 1", st.Sets, st.Deletes, st.Batches, st.Transactions)
	}
}

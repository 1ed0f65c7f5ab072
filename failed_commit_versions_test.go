package strata

import (
	"fmt"
	"testing"
)

// TestFailedCommitUnderASnapshot: a commit under an open snapshot changes
// the snapshot's leaves in place (leaving versions), then fails and is
// undone; the next commit reuses its txid and changes them again. The
// snapshot reads its version throughout, and every version is freed once
// it closes.
func TestFailedCommitUnderASnapshot(t *testing.T) {
	madeAny := false
	for _, after := range []int{25, 75, 150} {
		f := newUndoFixture(t, nil)
		db := f.db
		snapModel := map[string]string{}
		for k, v := range f.model {
			snapModel[k] = v
		}
		snap, err := db.NewSnapshot()
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string) {
			t.Helper()
			it, err := snap.NewIter(nil)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for it.First(); it.Valid(); it.Next() {
				if want := snapModel[string(it.Key())]; string(it.Value()) != want {
					t.Fatalf("after %d, %s: snapshot scan %s = %.10q, want %.10q", after, what, it.Key(), it.Value(), want)
				}
				n++
			}
			if err := it.Error(); err != nil {
				t.Fatalf("after %d, %s: %v", after, what, err)
			}
			it.Close()
			if n != len(snapModel) {
				t.Fatalf("after %d, %s: snapshot scan read %d keys, want %d", after, what, n, len(snapModel))
			}
			for i := 0; i < 4000; i += 7 {
				k := fmt.Sprintf("k%05d", i)
				if v, err := snap.Get([]byte(k)); err != nil || string(v) != snapModel[k] {
					t.Fatalf("after %d, %s: snapshot Get(%s) = %.10q %v, want %.10q", after, what, k, v, err, snapModel[k])
				}
			}
		}
		before := db.tree.Versions()
		err = f.failingCommit(func(n int64) bool { return n == int64(after)+1 })
		if err == nil {
			t.Logf("after %d: the commit needed fewer reads", after)
		} else if db.failed != nil {
			t.Fatalf("after %d: undo failed: %v", after, db.failed)
		}
		made := db.tree.Versions() - before
		madeAny = madeAny || (err != nil && made > 0)
		check("the failed commit")
		// The next commit reuses the failed one's txid.
		b := db.NewBatch()
		for i := 0; i < 4000; i += 3 {
			b.Set([]byte(fmt.Sprintf("k%05d", i)), []byte("NEXT"))
		}
		if err := b.Commit(nil); err != nil {
			t.Fatal(err)
		}
		check("the next commit")
		snap.Close()
		if err := db.Set([]byte("k00001"), []byte("last")); err != nil {
			t.Fatal(err)
		}
		if n := db.tree.Versions(); n != 0 {
			t.Fatalf("after %d: %d versions kept with no snapshot open", after, n)
		}
		t.Logf("after %d: the failed commit left %d versions (err %v)", after, made, err)
		db.Close()
	}
	if !madeAny {
		t.Fatal("no failed commit left versions: the test checks too little")
	}
}

package strata

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// TestIteratorClosedWhileCloseWaits: an iterator closed by its owner while
// DB.Close waits for an Update in flight keeps its snapshot registered
// until Close lets go of the leaf it pins: released at once, the Update's
// commit found that leaf unfrozen and waited to change it in place, while
// Close waited for the commit — neither returned (found by a stress
// test).
func TestIteratorClosedWhileCloseWaits(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs)
	opts.DisableDeferredCommits = true
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	for i := 0; i < 2000; i++ {
		b.Set([]byte(fmt.Sprintf("k%05d", i)), []byte("v0"))
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	// The leaf of k01000 is copied once after the checkpoint: from now on
	// a commit changes it in place unless a snapshot froze it.
	if err := db.Set([]byte("k01000"), []byte("v1")); err != nil {
		t.Fatal(err)
	}
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !it.SeekGE([]byte("k01000")) || string(it.Key()) != "k01000" {
		t.Fatalf("seek: %q %v", it.Key(), it.Error())
	}
	// An Update in flight, held in fn.
	inFn, goOn := make(chan struct{}), make(chan struct{})
	updated := make(chan error, 1)
	go func() {
		updated <- db.Update(func(tx *Tx) error {
			close(inFn)
			<-goOn
			return tx.Set([]byte("k01001"), []byte("v2")) // the iterator's leaf
		})
	}()
	<-inFn
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	for !db.closed.Load() {
		time.Sleep(time.Millisecond)
	}
	// The iterator's owner closes it now: allowed while Close runs.
	if err := it.Close(); err != nil {
		t.Fatalf("iterator Close during DB.Close: %v", err)
	}
	close(goOn)
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := <-updated; err != nil {
			t.Fatalf("Update: %v", err)
		}
	case <-time.After(10 * time.Second):
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Fatalf("DB.Close and Update hang (10 s):\n%s", buf[:n])
	}
	db, err = Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.Get([]byte("k01001")); err != nil || string(v) != "v2" {
		t.Fatalf("after reopening: k01001 = %q %v, want the Update's value", v, err)
	}
}

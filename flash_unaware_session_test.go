package strata

import (
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

func readMemFile(t *testing.T, fs vfs.FS, name string) []byte {
	t.Helper()
	f, err := fs.OpenFile(name, os.O_RDONLY, 0, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := f.Size()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return b
}

func writeMemFile(t *testing.T, fs vfs.FS, name string, b []byte) {
	t.Helper()
	f, err := fs.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFlashCacheAfterUnawareSession: a session of a binary that does not
// know the flash cache (one built before it) neither uses nor removes its
// marker. Its changes must not be hidden by the flash cache's images of
// the pages it rewrote: the next session with the cache reads the new
// values. The older binary is simulated by a session without the cache
// whose removal of the marker is undone.
func TestFlashCacheAfterUnawareSession(t *testing.T) {
	fs := vfs.NewMem()
	n, cache, flash := 6000, int64(1<<20), int64(4<<20)
	rng := rand.New(rand.NewPCG(3, 4))
	db, err := Open("/db", flashOpts(fs, cache, flash))
	if err != nil {
		t.Fatal(err)
	}
	loadKeys(t, db, n, 1)
	readKeys(t, db, n, 1, 2*n, rng)
	if st := db.Stats().FlashCache; st.Written == 0 {
		t.Fatalf("nothing cached: %+v", st)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	marker := readMemFile(t, fs, "/db/FLASHCACHE")

	db, err = Open("/db", memOptions(fs)) // the older binary's session
	if err != nil {
		t.Fatal(err)
	}
	// Every value twice, with a checkpoint between: the second time the
	// new pages reuse the ids of the first session's pages.
	loadKeys(t, db, n, 2)
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	loadKeys(t, db, n, 3)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	writeMemFile(t, fs, "/db/FLASHCACHE", marker) // it never removed it

	db, err = Open("/db", flashOpts(fs, cache, flash))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if st := db.Stats().FlashCache; st.OpenState == "warm" {
		t.Errorf("warm after a session that changed every page without the cache")
	}
	readKeys(t, db, n, 3, n, rng)
}

package strata

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/btree"
	"github.com/stratadb/strata/internal/vfs"
)

// TestCorruptFiles flips bytes in, or truncates, any file of a cleanly
// closed database. Open must fail with an error, or the database must read
// back exactly what was written, or reads must fail with an error — never a
// panic, never wrong data. Corruption errors wrap ErrCorrupt.
func TestCorruptFiles(t *testing.T) {
	build := func() (*vfs.MemFS, map[string]string) {
		fs := vfs.NewMem()
		db, err := Open("db", memOptions(fs))
		if err != nil {
			t.Fatal(err)
		}
		model := map[string]string{}
		b := db.NewBatch()
		for i := 0; i < 600; i++ {
			k, v := fmt.Sprintf("key%04d", i), fmt.Sprintf("value-%d-%0100d", i, i)
			b.Set([]byte(k), []byte(v))
			model[k] = v
		}
		if err := b.Commit(Sync); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		return fs, model
	}
	var files []string
	fs0, _ := build()
	for _, dir := range []string{"db", "db/wal"} {
		names, _ := fs0.List(dir)
		for _, n := range names {
			if st, err := fs0.Stat(filepath.Join(dir, n)); err == nil && !st.IsDir() && st.Size() > 0 {
				files = append(files, filepath.Join(dir, n))
			}
		}
	}
	rng := rand.New(rand.NewPCG(11, 11))
	detected := 0
	for trial := 0; trial < 150; trial++ {
		fs, model := build()
		name := files[rng.IntN(len(files))]
		st, _ := fs.Stat(name)
		f, err := fs.OpenFile(name, os.O_RDWR, 0, vfs.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		what := ""
		if trial%5 == 4 {
			n := rng.Int64N(st.Size())
			f.Truncate(n)
			what = fmt.Sprintf("truncate %s to %d", name, n)
		} else {
			off := rng.Int64N(st.Size())
			b := make([]byte, 1)
			f.ReadAt(b, off)
			b[0] ^= byte(1 + rng.IntN(255))
			f.WriteAt(b, off)
			what = fmt.Sprintf("flip %s at %d", name, off)
		}
		f.Close()
		db, err := Open("db", memOptions(fs))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotDatabase) && !errors.Is(err, ErrPageSize) {
				t.Errorf("%s: open error names no corruption: %v", what, err)
			}
			detected++
			continue
		}
		ok := true
		for k, v := range model {
			got, err := db.Get([]byte(k))
			if err != nil {
				if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotFound) {
					t.Errorf("%s: get %s: %v", what, k, err)
				}
				if errors.Is(err, ErrNotFound) {
					t.Fatalf("%s: key %s silently missing", what, k)
				}
				ok = false
				continue
			}
			if string(got) != v {
				t.Fatalf("%s: key %s: wrong value %.20q", what, k, got)
			}
		}
		if !ok {
			detected++
		}
		db.Close()
	}
	t.Logf("%d of 150 corruptions detected at open or read; the rest hit bytes no read depends on", detected)
}

// TestCommitOnCorruptPageIsErrCorrupt: a page whose checksum fails makes
// Get report ErrCorrupt; a commit (Set, Update) that has to read the same
// page reports ErrCorrupt too (it said "strata: ..." without it; found by a
// reviewer).
func TestCommitOnCorruptPageIsErrCorrupt(t *testing.T) {
	build := func() *vfs.MemFS {
		fs := vfs.NewMem()
		db, err := Open("db", memOptions(fs))
		if err != nil {
			t.Fatal(err)
		}
		b := db.NewBatch()
		for i := 0; i < 600; i++ {
			b.Set([]byte(fmt.Sprintf("key%04d", i)), []byte(fmt.Sprintf("value-%d-%0100d", i, i)))
		}
		if err := b.Commit(Sync); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	rng := rand.New(rand.NewPCG(3, 3))
	for trial := 0; trial < 200; trial++ {
		fs := build()
		names, _ := fs.List("db")
		var segs []string
		for _, n := range names {
			if st, err := fs.Stat(filepath.Join("db", n)); err == nil && !st.IsDir() && st.Size() > 0 && n != "CHECKPOINT" && !strings.HasPrefix(n, "MAP") && !strings.HasPrefix(n, "DICT") && n != "LOCK" {
				segs = append(segs, filepath.Join("db", n))
			}
		}
		name := segs[rng.IntN(len(segs))]
		st, _ := fs.Stat(name)
		f, err := fs.OpenFile(name, os.O_RDWR, 0, vfs.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		off := rng.Int64N(st.Size())
		b := make([]byte, 1)
		f.ReadAt(b, off)
		b[0] ^= 0x55
		f.WriteAt(b, off)
		f.Close()
		o := memOptions(fs)
		o.DisableDeferredCommits = true
		db, err := Open("db", o)
		if err != nil {
			continue
		}
		var bad string
		for i := 0; i < 600; i++ {
			k := fmt.Sprintf("key%04d", i)
			if _, err := db.Get([]byte(k)); errors.Is(err, ErrCorrupt) {
				bad = k
				break
			}
		}
		if bad == "" {
			db.Close()
			continue
		}
		errSet := db.Set([]byte(bad), []byte("new"))
		errUpd := db.Update(func(tx *Tx) error { return tx.Set([]byte(bad), []byte("new2")) })
		_, errGet := db.Get([]byte(bad))
		db.Close()
		t.Logf("trial %d (%s at %d): get %v\n set %v\n update %v", trial, name, off, errGet, errSet, errUpd)
		if !errors.Is(errSet, ErrCorrupt) || !errors.Is(errUpd, ErrCorrupt) {
			t.Fatalf("a commit meeting a corrupt page: errors.Is(err, ErrCorrupt) = %v (Set), %v (Update), while Get says %v",
				errors.Is(errSet, ErrCorrupt), errors.Is(errUpd, ErrCorrupt), errors.Is(errGet, ErrCorrupt))
		}
		return
	}
	t.Skip("no corruption reached a leaf")
}

// TestFailedDeferredCommitsSayCorruptOnce: the applier's error on a
// corrupt page is ErrCorrupt already (db.readErr); the database's failure
// says so once, not "corrupt data: strata: corrupt data" (found by a
// reviewer).
func TestFailedDeferredCommitsSayCorruptOnce(t *testing.T) {
	db := &DB{}
	db.dq.init(1 << 20)
	applied := db.readErr(fmt.Errorf("apply deferred commits: %w", fmt.Errorf("page 7: %w", btree.ErrCorruptNode)))
	err := db.failDeferred(applied)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("%v: not ErrCorrupt", err)
	}
	if n := strings.Count(err.Error(), "corrupt data"); n != 1 {
		t.Fatalf("%q says %q %d times", err.Error(), "corrupt data", n)
	}
}

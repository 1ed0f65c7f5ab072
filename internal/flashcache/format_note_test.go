package flashcache

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestFormatNote: while Open formats a flash file it found empty, the
// database's directory names that file (FLASHCACHE.formatting), so a crash
// that left the file created and sized but its first superblock torn or
// unwritten (MemFS CrashStrict) does not make the next Open refuse it as
// another program's data. The note covers that path only, and is gone once
// the format is durable.
func TestFormatNote(t *testing.T) {
	dbfs, ffs := vfs.NewMem(), vfs.NewMem()
	must(t, dbfs.MkdirAll(dbDir, 0o755))
	must(t, ffs.MkdirAll(filepath.Dir(flashPath), 0o755))
	opts := flashOptions(dbfs, ffs, stackOpts{}.withDefaults())
	torn := make([]byte, 2*blockSize) // the size of a superblock at slot 1, its sectors never written
	torn[blockSize+100] = 0x5a

	// Without the note such a file is refused, and left as it was.
	writeMem(t, ffs, flashPath, torn)
	if _, err := Open(opts); !errors.Is(err, ErrNotFlashCache) {
		t.Fatalf("a torn file without the note: %v, want ErrNotFlashCache", err)
	}
	// A note naming another path does not cover it.
	writeMem(t, dbfs, filepath.Join(dbDir, formattingName), []byte("/elsewhere"))
	if _, err := Open(opts); !errors.Is(err, ErrNotFlashCache) {
		t.Fatalf("a torn file with a note for another path: %v, want ErrNotFlashCache", err)
	}
	// A note naming it does: the file is formatted, and the note removed.
	writeMem(t, dbfs, filepath.Join(dbDir, formattingName), []byte(flashPath))
	c, err := Open(opts)
	if err != nil {
		t.Fatalf("a torn file its database was formatting: %v", err)
	}
	if st := c.Stats(); st.DisabledBy != "" {
		t.Fatalf("cache disabled: %s", st.DisabledBy)
	}
	if _, err := dbfs.Stat(filepath.Join(dbDir, formattingName)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the note outlived the format: %v", err)
	}
	must(t, c.Close(true, testDBState))

	// A new file: the note exists while the first superblock is written.
	must(t, ffs.Remove(flashPath))
	var noted bool
	ffs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpSync && path == flashPath && !noted {
			_, err := dbfs.Stat(filepath.Join(dbDir, formattingName))
			noted = err == nil
		}
		return nil
	})
	c, err = Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	ffs.SetInjector(nil)
	if !noted {
		t.Fatal("the first superblock of a new file was synced without the note")
	}
	must(t, c.Close(true, testDBState))
	// Detach removes a leftover note with the marker.
	writeMem(t, dbfs, filepath.Join(dbDir, formattingName), []byte(flashPath))
	must(t, Detach(dbfs, dbDir))
	if _, err := dbfs.Stat(filepath.Join(dbDir, formattingName)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Detach left the note: %v", err)
	}
}

// TestFormatNoteEndsWithTheFormat: a note outlives no format. A crash
// after the new file's superblock was durable but before the note's
// removal was left the note for good (the next Open found its cache and
// removed nothing), and so did a note naming a path the database no longer
// used; a later file at that path, another program's, was then formatted
// over. (Found by a reviewer, thirty-third session.)
func TestFormatNoteEndsWithTheFormat(t *testing.T) {
	setup := func() *vfs.MemFS {
		m := vfs.NewMem()
		must(t, m.MkdirAll(dbDir, 0o755))
		must(t, m.MkdirAll(filepath.Dir(flashPath), 0o755))
		must(t, m.SyncDir("/"))
		return m
	}
	opts := func(m *vfs.MemFS) Options { return flashOptions(m, m, stackOpts{}.withDefaults()) }
	dry := setup()
	base := dry.OpCount()
	c, err := Open(opts(dry))
	must(t, err)
	total := dry.OpCount() - base
	must(t, c.Close(false, DBState{}))
	other := bytes.Repeat([]byte("another program's data "), 1<<10)
	for at := 1; at <= total; at++ {
		for _, mode := range vfs.CrashModes {
			m := setup()
			m.CrashAfterOps(at) // counted from now: Open's first operation is 1
			if c, err := Open(opts(m)); err == nil {
				c.Close(false, DBState{})
			}
			img := m.CrashedClone(mode, rand.New(rand.NewPCG(uint64(at), 1)))
			c, err := Open(opts(img))
			if err != nil {
				t.Fatalf("crash after %d of %d ops (%v): %v", at, total, mode, err)
			}
			must(t, c.Close(true, testDBState))
			if _, err := img.Stat(filepath.Join(dbDir, formattingName)); err == nil {
				t.Errorf("crash after %d of %d ops (%v): the note outlived the next Open", at, total, mode)
			}
			writeMem(t, img, flashPath, other)
			if c, err := Open(opts(img)); !errors.Is(err, ErrNotFlashCache) {
				if err == nil {
					c.Close(false, DBState{})
				}
				t.Fatalf("crash after %d of %d ops (%v), then another program's file at the path: %v, want ErrNotFlashCache", at, total, mode, err)
			}
		}
	}
	// A note for a path the database does not use ends with its Open.
	m := setup()
	writeMem(t, m, filepath.Join(dbDir, formattingName), []byte("/flash/gone"))
	o := opts(m)
	o.Path = "/flash/q"
	c, err = Open(o)
	must(t, err)
	must(t, c.Close(true, testDBState))
	if _, err := m.Stat(filepath.Join(dbDir, formattingName)); err == nil {
		t.Error("a note for another path outlived an Open")
	}
	// A note does not cover a file larger than a format leaves unextended.
	writeMem(t, m, filepath.Join(dbDir, formattingName), []byte(flashPath))
	writeMem(t, m, flashPath, other)
	if c, err := Open(opts(m)); !errors.Is(err, ErrNotFlashCache) {
		if err == nil {
			c.Close(false, DBState{})
		}
		t.Fatalf("a %d-byte file under a note: %v, want ErrNotFlashCache", len(other), err)
	}
}

// TestCrashDuringResumedFormat: an Open that resumes an interrupted format
// (a torn file under the note) and crashes leaves a file the next Open
// takes. It extended the file before writing the superblock, so a crash
// between left a full-size file without the cache's magic, which the note
// no longer covered (only files up to the superblock slots): the database
// did not open. (Found by a reviewer, thirty-third session.)
func TestCrashDuringResumedFormat(t *testing.T) {
	for at := 1; at <= 24; at++ {
		m := vfs.NewMem()
		must(t, m.MkdirAll(dbDir, 0o755))
		must(t, m.MkdirAll(filepath.Dir(flashPath), 0o755))
		writeMem(t, m, flashPath, make([]byte, 2*blockSize)) // the torn format
		writeMem(t, m, filepath.Join(dbDir, formattingName), []byte(flashPath))
		must(t, m.SyncDir("/"))
		must(t, m.SyncDir(dbDir))
		must(t, m.SyncDir(filepath.Dir(flashPath)))
		opts := func(m *vfs.MemFS) Options { return flashOptions(m, m, stackOpts{}.withDefaults()) }
		m.CrashAfterOps(at)
		if c, err := Open(opts(m)); err == nil {
			c.Close(false, DBState{})
		}
		for _, mode := range vfs.CrashModes {
			img := m.CrashedClone(mode, rand.New(rand.NewPCG(uint64(at), 3)))
			c, err := Open(opts(img))
			if err != nil {
				t.Fatalf("crash after %d ops of the resumed format (%v): next Open: %v", at, mode, err)
			}
			must(t, c.Close(true, testDBState))
		}
	}
}

func writeMem(t *testing.T, m *vfs.MemFS, name string, data []byte) {
	t.Helper()
	f, err := m.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, vfs.OpenOptions{})
	must(t, err)
	_, err = f.WriteAt(data, 0)
	must(t, err)
	must(t, f.Sync())
	must(t, f.Close())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

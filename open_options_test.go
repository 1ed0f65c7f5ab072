package strata

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestOpenRefusesBadOptionsWithoutCreating: every invalid option is
// refused before Open touches the directory, so no database is left behind.
func TestOpenRefusesBadOptionsWithoutCreating(t *testing.T) {
	bad := map[string]func(o *Options){
		"share NaN":        func(o *Options) { o.CompressedShare = math.NaN() },
		"share +Inf":       func(o *Options) { o.CompressedShare = math.Inf(1) },
		"share -Inf fixed": func(o *Options) { o.CompressedShare, o.FixedShare = math.Inf(-1), true },
		"share 1.5":        func(o *Options) { o.CompressedShare = 1.5 },
		"partitions 3":     func(o *Options) { o.Partitions = 3 },
		"partitions -2":    func(o *Options) { o.Partitions = -2 },
		"cache too small":  func(o *Options) { o.CacheSize = 4096 },
		"cache negative":   func(o *Options) { o.CacheSize = -1 },
		"fill factor 5":    func(o *Options) { o.FillFactor = 5 },
		"page size 5000":   func(o *Options) { o.PageSize = 5000 },
		"codec":            func(o *Options) { o.Codec = "nope" },
		"sync mode":        func(o *Options) { o.Sync = 7 },
		"replaced 1.5":     func(o *Options) { o.CheckpointReplaced = 1.5 },
		"replaced NaN":     func(o *Options) { o.CheckpointReplaced = math.NaN() },
	}
	for name, mutate := range bad {
		t.Run(name, func(t *testing.T) {
			fs := vfs.NewMem()
			o := memOptions(fs)
			mutate(o)
			if db, err := Open("db", o); err == nil {
				db.Close()
				t.Fatal("Open accepted the options")
			}
			if names, err := fs.List("db"); err == nil && len(names) > 0 {
				t.Fatalf("refused Open left files behind: %v", names)
			}
		})
	}
	// The same on the real file system, with the default page size.
	dir := filepath.Join(t.TempDir(), "db")
	if _, err := Open(dir, &Options{CompressedShare: math.NaN()}); err == nil {
		t.Fatal("Open accepted a NaN share")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(dir)
		t.Fatalf("refused Open created %s (%d entries)", dir, len(entries))
	}
}

// TestOpenAfterCrashedCreation: a process killed while it created the
// database can leave only the lock file, the store's empty map log (or
// the checkpoint's temporary file); Open treats that directory as new
// instead of "not a database". The map log's entry can also survive a
// power loss without the checkpoint's (ext4's journal keeps unsynced
// creations: found by MemFS's CrashNamespace, TestCrashRecovery
// seed3/op5).
func TestOpenAfterCrashedCreation(t *testing.T) {
	for _, leftovers := range [][]string{{"LOCK"}, {"LOCK", "CHECKPOINT.tmp"}, {"LOCK", "MAPLOG"}, {"LOCK", "MAPLOG", "CHECKPOINT.tmp"}} {
		fs := vfs.NewMem()
		if err := fs.MkdirAll("db", 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range leftovers {
			f, err := fs.OpenFile("db/"+n, os.O_RDWR|os.O_CREATE, 0o644, vfs.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		db, err := Open("db", memOptions(fs))
		if err != nil {
			t.Fatalf("Open with %v left by a crashed creation: %v", leftovers, err)
		}
		if err := db.Set([]byte("k"), []byte("v")); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	// A map log with deltas is not a creation's: without its CHECKPOINT
	// the directory is not taken for a new database.
	fs := vfs.NewMem()
	if err := fs.MkdirAll("db", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fs.OpenFile("db/MAPLOG", os.O_RDWR|os.O_CREATE, 0o644, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("delta"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Open("db", memOptions(fs)); !errors.Is(err, ErrNotDatabase) {
		t.Fatalf("Open with a non-empty MAPLOG and no CHECKPOINT: %v, want ErrNotDatabase", err)
	}
}

// TestDefaultPageSize: a new database without a page size gets 4 KiB pages
// (the default since docs/PAGESTORE.md's "Page size" measurements), and a
// database made with the former default, 16 KiB, keeps its pages when it is
// reopened without one: upgrading changes no existing database.
func TestDefaultPageSize(t *testing.T) {
	open := func(fs vfs.FS, dir string, pageSize int) *DB {
		t.Helper()
		o := memOptions(fs)
		o.PageSize = pageSize
		db, err := Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	fs := vfs.NewMem()
	db := open(fs, "new", 0)
	if got := db.Stats().Store.PageSize; got != 4096 {
		t.Errorf("new database: page size %d, want 4096", got)
	}
	if got := db.MaxKeySize(); got != 1008 {
		t.Errorf("new database: MaxKeySize %d, want 1008", got)
	}
	if err := db.Set(bytes.Repeat([]byte("k"), 1009), nil); !errors.Is(err, ErrKeyTooLarge) {
		t.Errorf("key of 1009 bytes: %v, want ErrKeyTooLarge", err)
	}
	db.Close()

	db = open(fs, "old", 16384)
	key := bytes.Repeat([]byte("k"), 4000)
	if err := db.Set(key, []byte("v")); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = open(fs, "old", 0)
	defer db.Close()
	if got := db.Stats().Store.PageSize; got != 16384 {
		t.Errorf("16 KiB database reopened without a page size: %d", got)
	}
	if v, err := db.Get(key); err != nil || string(v) != "v" {
		t.Errorf("Get after reopen: %q, %v", v, err)
	}
}

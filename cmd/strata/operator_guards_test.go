package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/server"
)

// TestToolsLeaveUserDataAlone: the commands that load benchmark data
// refuse a directory that holds something, and stats does not create a
// database at a mistyped path (recovery-time --dir loaded 2,000 rows into
// an existing database; stats created an empty one). (Found by a
// reviewer, thirty-second session.)
func TestToolsLeaveUserDataAlone(t *testing.T) {
	dir := smallDB(t)
	before, _ := os.ReadDir(dir)
	for _, args := range [][]string{
		{"recovery-time", "--rows", "100", "--wal-mib", "1", "--dir", dir},
		{"kv-load", "--rows", "100", "--codec", "zstd", "--fill-factor", "100", "--dir", filepath.Dir(dir), "--page-size", "4096"},
	} {
		if args[0] == "kv-load" {
			// kv-load writes DIR/zstd-100: make that the user's database.
			if err := os.Rename(dir, filepath.Join(filepath.Dir(dir), "zstd-100")); err != nil {
				t.Fatal(err)
			}
			dir = filepath.Join(filepath.Dir(dir), "zstd-100")
		}
		if out, err := runCmd(t, args...); err == nil || !strings.Contains(err.Error(), "not empty") {
			t.Fatalf("%s into an existing database: %v\n%s", args[0], err, out)
		}
		if after, _ := os.ReadDir(dir); len(after) != len(before) {
			t.Fatalf("%s changed the database's directory: %d entries, was %d", args[0], len(after), len(before))
		}
	}
	typo := filepath.Join(t.TempDir(), "typo")
	if _, err := runCmd(t, "stats", typo); err == nil {
		t.Fatal("stats of a missing directory succeeded")
	}
	if _, err := os.Stat(typo); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stats created %s (%v)", typo, err)
	}
}

// TestCheckCannotRunIsNotCorruption: check exits 4, not 1 (corruption),
// when it cannot check (no database there, wrong arguments or flags), and
// takes no lock file a copy
// of a database lacks (it created them).
func TestCheckCannotRunIsNotCorruption(t *testing.T) {
	for _, args := range [][]string{{"check", filepath.Join(t.TempDir(), "missing")}, {"check"}, {"check", "--no-such-flag", "x"}} {
		_, err := runCmd(t, args...)
		var code exitCode
		if !errors.As(err, &code) || code != 4 {
			t.Fatalf("%q: %v, want exit status 4", args, err)
		}
	}
	dir := smallDB(t)
	for _, name := range []string{"LOCK", filepath.Join("wal", "wal.lock")} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := runCmd(t, "check", dir); err != nil {
		t.Fatalf("check of a copy without lock files: %v\n%s", err, out)
	}
	for _, name := range []string{"LOCK", filepath.Join("wal", "wal.lock")} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Fatalf("check created %s", name)
		}
	}
}

// TestToolFlagsValidated: values that panicked or were misread are
// refused or kept exact.
func TestToolFlagsValidated(t *testing.T) {
	if _, err := runCmd(t, "pool-sweep", "--cache", "0", "--out", t.TempDir()); err == nil {
		t.Fatal("pool-sweep --cache 0 accepted")
	}
	if _, err := runCmd(t, "recovery-time", "--rows", "0"); err == nil {
		t.Fatal("recovery-time --rows 0 accepted")
	}
	// serve's default argument limit is the library's, byte for byte (it
	// was printed as "16.0 MiB", which parses back 1 KiB short).
	def := newServeCommand().Flags().Lookup("proto-max-bulk-len").DefValue
	if n, err := parseSize(def); err != nil || n != server.DefaultLimits.MaxBulkLen {
		t.Fatalf("--proto-max-bulk-len default %q = %d (%v), want %d", def, n, err, server.DefaultLimits.MaxBulkLen)
	}
	f := serveFlags{grace: 0, maxBulk: "1KiB", maxCommand: "1MiB", maxOutput: "1MiB"}
	if _, err := f.config(nil); err == nil {
		t.Fatal("--shutdown-grace 0 accepted (it meant 10 s)")
	}
}

// TestAdviseDefaultCache: advise without --cache advises for Open's
// default cache (it reported for a cache of 0 B).
func TestAdviseDefaultCache(t *testing.T) {
	out, err := runCmd(t, "advise", "--reads", "20", "--sample", "10", smallDB(t))
	if err != nil || strings.Contains(out, "at a 0 B cache") || !strings.Contains(out, "at a "+formatSize(64<<20)+" cache") {
		t.Fatalf("advise: %v\n%s", err, out)
	}
}

package flashcache

import (
	"os"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// fill creates n pages at version 1, flushes them, and reads them all
// twice so that most go through the flash cache; it returns their ids.
func (s *stack) fill(n int) []pagestore.PageID {
	s.t.Helper()
	var ids []pagestore.PageID
	for range n {
		ids = append(ids, s.create(1))
	}
	if err := s.pool.FlushAll(); err != nil {
		s.t.Fatal(err)
	}
	for range 2 {
		for i, id := range ids {
			if err := s.check(id, 1); err != nil {
				s.t.Fatal(err)
			}
			if i%8 == 7 {
				// Let the writer take what is queued (64 KiB: 16 pages'
				// copies): reads outrunning it drop admissions, and on a
				// loaded machine left too few pages on flash.
				s.waitQueue()
			}
		}
	}
	s.waitIdle()
	return ids
}

// TestWarmRestart: after a clean close the index is rebuilt from the
// snapshot and the first reads after reopening are flash hits.
func TestWarmRestart(t *testing.T) {
	fs := vfs.NewMem()
	s := openStack(t, fs, fs, stackOpts{})
	ids := s.fill(300)
	entries := s.fc.Stats().Entries
	if entries < 100 {
		t.Fatalf("only %d entries on flash", entries)
	}
	s.close()

	s = openStack(t, fs, fs, stackOpts{})
	defer s.close()
	st := s.fc.Stats()
	if st.OpenState != "warm" || st.Rebuilt != entries || st.DiscardedAtOpen != 0 {
		t.Fatalf("reopened %s with %d of %d entries (%d discarded)", st.OpenState, st.Rebuilt, entries, st.DiscardedAtOpen)
	}
	t.Logf("rebuilt %d entries in %v", st.Rebuilt, st.RebuildTime)
	for _, id := range ids {
		if err := s.check(id, 1); err != nil {
			t.Fatal(err)
		}
	}
	st = s.fc.Stats()
	// The pool holds a quarter of the pages: almost every other first
	// read is a flash hit.
	if st.Hits < int64(len(ids))/2 {
		t.Fatalf("%d hits of %d lookups after a warm restart", st.Hits, st.Lookups)
	}
}

// TestColdRestarts: the cache starts cold, and never serves an old image,
// whenever it cannot know that the pages did not change without it: the
// database was opened without the cache in between (and changed), the
// database directory is an older copy, the flash file belongs to another
// database, or the file is truncated or its metadata corrupted.
func TestColdRestarts(t *testing.T) {
	cases := []struct {
		name    string
		between func(t *testing.T, fs *vfs.MemFS, ids []pagestore.PageID) *vfs.MemFS // returns the file system to reopen
		state   string
	}{
		{"opened without the cache", func(t *testing.T, fs *vfs.MemFS, ids []pagestore.PageID) *vfs.MemFS {
			s := openStack(t, fs, fs, stackOpts{noFlash: true})
			for _, id := range ids {
				s.write(id, 2)
			}
			s.close()
			return fs
		}, "cold: no marker"},
		{"an older copy of the database", func(t *testing.T, fs *vfs.MemFS, ids []pagestore.PageID) *vfs.MemFS {
			// The database directory as it was at the first close, with
			// the flash file of a later session that rewrote every page.
			old := fs.CrashClone(vfs.CrashDropUnsynced, nil)
			s := openStack(t, fs, fs, stackOpts{})
			for _, id := range ids {
				s.write(id, 2)
			}
			for _, id := range ids {
				if err := s.check(id, 2); err != nil {
					t.Fatal(err)
				}
			}
			s.close()
			copyFile(t, fs, old, flashPath)
			return old
		}, "cold: the database was used by another session"},
		{"another database's flash file", func(t *testing.T, fs *vfs.MemFS, ids []pagestore.PageID) *vfs.MemFS {
			other := vfs.NewMem()
			s := openStack(t, other, other, stackOpts{})
			s.fill(100)
			s.close()
			copyFile(t, other, fs, flashPath)
			return fs
		}, "cold: the flash file belongs to another database"},
		{"truncated", func(t *testing.T, fs *vfs.MemFS, ids []pagestore.PageID) *vfs.MemFS {
			f, err := fs.OpenFile(flashPath, os.O_RDWR, 0, vfs.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			size, _ := f.Size()
			f.Truncate(size / 2)
			f.Close()
			return fs
		}, "cold: file truncated"},
		{"corrupt superblocks", func(t *testing.T, fs *vfs.MemFS, ids []pagestore.PageID) *vfs.MemFS {
			corrupt(t, fs, flashPath, 100)
			corrupt(t, fs, flashPath, blockSize+100)
			return fs
		}, "cold: no valid superblock"},
		{"corrupt snapshot", func(t *testing.T, fs *vfs.MemFS, ids []pagestore.PageID) *vfs.MemFS {
			corrupt(t, fs, flashPath, superblockSlots*blockSize+snapshotHeader+40)
			return fs
		}, "cold: flashcache: bad on-flash bytes: snapshot checksum"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			s := openStack(t, fs, fs, stackOpts{})
			ids := s.fill(300)
			s.close()
			fs2 := tc.between(t, fs, ids)
			s = openStack(t, fs2, fs2, stackOpts{})
			defer s.close()
			st := s.fc.Stats()
			if !strings.HasPrefix(st.OpenState, tc.state) {
				t.Fatalf("opened %q, want %q", st.OpenState, tc.state)
			}
			if st.Entries != 0 {
				t.Fatalf("%d entries after a cold start", st.Entries)
			}
			// Every page reads as the store holds it.
			want := make([]byte, testPageSize)
			for _, id := range ids {
				if err := s.store.ReadPage(id, want); err != nil {
					t.Fatal(err)
				}
				_, v := pageVersion(want)
				if err := s.check(id, v); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// copyFile copies name from one MemFS to another, durably.
func copyFile(t *testing.T, from, to vfs.FS, name string) {
	t.Helper()
	src, err := from.OpenFile(name, os.O_RDONLY, 0, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	n, _ := src.Size()
	b := make([]byte, n)
	if _, err := src.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	to.MkdirAll("/flash", 0o755)
	dst, err := to.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dst.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	dst.Sync()
	dst.Close()
	to.SyncDir("/flash")
}

// corrupt flips a byte of name at each of offs (twice at the same offset
// restores it), then syncs the file.
func corrupt(t *testing.T, fs vfs.FS, name string, offs ...int64) {
	t.Helper()
	f, err := fs.OpenFile(name, os.O_RDWR, 0, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	for _, off := range offs {
		if _, err := f.ReadAt(b, off); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 0x5a
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	// One sync for all: on MemFS the first write after a sync copies the
	// whole file, so a sync per byte made TestCorruptEntries copy the 4
	// MiB flash file 1,280 times.
	f.Sync()
}

// TestColdAfterStateChange: a cache closed cleanly in one database state
// starts cold in another (the database changed without the cache and
// without removing its marker: a binary built before the cache) or in an
// unknown one (the zero DBState), however clean the file and the marker.
func TestColdAfterStateChange(t *testing.T) {
	for _, state := range []DBState{{2}, {}} {
		fs := vfs.NewMem()
		s := openStack(t, fs, fs, stackOpts{})
		s.fill(300)
		s.close()
		s = openStack(t, fs, fs, stackOpts{tune: func(o *Options) { o.DBState = state }})
		st := s.fc.Stats()
		s.close()
		if !strings.HasPrefix(st.OpenState, "cold: the database changed") || st.Entries != 0 {
			t.Fatalf("state %x: opened %q with %d entries", state, st.OpenState, st.Entries)
		}
	}
}

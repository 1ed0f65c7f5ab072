package check

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata"
	"github.com/stratadb/strata/internal/btree"
	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/hooks"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
	"github.com/stratadb/strata/internal/wal"
)

// memOptions are the root package's corruption tests' options.
func memOptions(fs vfs.FS) *strata.Options {
	o := &strata.Options{PageSize: 4096, CacheSize: 1 << 20, Partitions: 2, Codec: "lz4"}
	hooks.SetFS(o, fs)
	return o
}

func corrupt(r *Report) []Problem {
	var out []Problem
	for _, p := range r.Problems {
		if !p.Repairable && !p.Leak {
			out = append(out, p)
		}
	}
	return out
}

func mustCheck(t *testing.T, fs vfs.FS, dir string) *Report {
	t.Helper()
	r, err := Check(fs, dir)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	return r
}

// build is TestCorruptFiles's database: 600 keys, closed cleanly.
func build(t *testing.T) (*vfs.MemFS, map[string]string) {
	fs := vfs.NewMem()
	db, err := strata.Open("db", memOptions(fs))
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
	if err := b.Commit(strata.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return fs, model
}

// TestHealthyDatabases: databases closed cleanly, after churn with large
// values, deletes and checkpoints, and after a crash (then reopened) have
// no problem at all; a crashed one, before Open, only repairable ones.
func TestHealthyDatabases(t *testing.T) {
	fs, _ := build(t)
	if r := mustCheck(t, fs, "db"); len(r.Problems) != 0 || r.Keys != 600 || r.Reachable != r.LivePages-1 {
		t.Fatalf("clean database: %+v", r)
	}
	// Empty database.
	efs := vfs.NewMem()
	db, _ := strata.Open("db", memOptions(efs))
	db.Close()
	if r := mustCheck(t, efs, "db"); len(r.Problems) != 0 {
		t.Fatalf("empty database: %v", r.Problems)
	}
	// Churn.
	fs = vfs.NewMem()
	o := memOptions(fs)
	o.CheckpointWAL = 64 << 10
	db, err := strata.Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	model := map[string]int{}
	for i := 0; i < 4000; i++ {
		k := fmt.Sprintf("k%04d", rng.IntN(800))
		switch rng.IntN(10) {
		case 0:
			db.Delete([]byte(k))
			delete(model, k)
		case 1:
			n := 2000 + rng.IntN(20000) // overflow pages
			db.Set([]byte(k), []byte(strings.Repeat("x", n)))
			model[k] = n
		default:
			db.Set([]byte(k), []byte(fmt.Sprint(i)))
			model[k] = 1
		}
		if i == 3000 {
			db.Checkpoint()
		}
	}
	crashed := fs.CrashClone(vfs.CrashTorn, rand.New(rand.NewPCG(5, 5)))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	r := mustCheck(t, fs, "db")
	if len(r.Problems) != 0 || r.Keys != int64(len(model)) || r.OverflowPages == 0 {
		t.Fatalf("churned database: keys %d (want %d), overflow pages %d, problems %v", r.Keys, len(model), r.OverflowPages, r.Problems)
	}
	// The crash.
	if r := mustCheck(t, crashed, "db"); len(corrupt(r)) != 0 {
		t.Fatalf("crashed database: %v", corrupt(r))
	}
	db, err = strata.Open("db", memOptions(crashed))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if r := mustCheck(t, crashed, "db"); len(r.Problems) != 0 {
		t.Fatalf("crashed database after Open and Close: %v", r.Problems)
	}
	// On the real file system (direct I/O where it works).
	dir := t.TempDir()
	db, err = strata.Open(dir, &strata.Options{PageSize: 4096, CacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3000; i++ {
		db.Set([]byte(fmt.Sprintf("k%05d", i)), []byte(strings.Repeat("v", i%3000)))
	}
	db.Close()
	if r := mustCheck(t, vfs.Default, dir); len(r.Problems) != 0 {
		t.Fatalf("database on disk: %v", r.Problems)
	}
}

// TestFindsEveryPlantedCorruption plants the damage of the root package's
// TestCorruptFiles (same seed: a flipped byte, or a truncation, in any
// file) and more trials of it: check reports corruption in every one —
// also the many that Open and every read miss because no read depends on
// the bytes.
func TestFindsEveryPlantedCorruption(t *testing.T) {
	var files []string
	fs0, _ := build(t)
	for _, dir := range []string{"db", "db/wal"} {
		names, _ := fs0.List(dir)
		for _, n := range names {
			if st, err := fs0.Stat(filepath.Join(dir, n)); err == nil && !st.IsDir() && st.Size() > 0 {
				files = append(files, filepath.Join(dir, n))
			}
		}
	}
	rng := rand.New(rand.NewPCG(11, 11))
	missedByOpen := 0
	for trial := 0; trial < 300; trial++ {
		fs, model := build(t)
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
		r := mustCheck(t, fs, "db")
		bad := corrupt(r)
		if len(bad) == 0 {
			t.Fatalf("%s: check found nothing (problems %v)", what, r.Problems)
		}
		if !strings.Contains(bad[0].String(), filepath.Base(name)) && !strings.Contains(bad[0].String(), "page") {
			t.Errorf("%s: the problem names neither the file nor a page: %v", what, bad[0])
		}
		// Would Open and reads have noticed?
		if db, err := strata.Open("db", memOptions(fs)); err == nil {
			noticed := false
			for k := range model {
				if _, err := db.Get([]byte(k)); err != nil {
					noticed = true
					break
				}
			}
			db.Close()
			if !noticed {
				missedByOpen++
			}
		}
	}
	t.Logf("check found all 300 planted corruptions; Open and reads missed %d of them", missedByOpen)
}

// TestTreeInvariants damages the tree in ways no checksum can see: the
// pages are rewritten through the page store, so every record is valid.
func TestTreeInvariants(t *testing.T) {
	// A leaf and a branch of TestCorruptFiles's database, and one value in
	// an overflow chain.
	setup := func(t *testing.T) (*vfs.MemFS, *pagestore.Store, btree.PageID, btree.PageInfo, []byte) {
		fs, _ := build(t)
		db, err := strata.Open("db", memOptions(fs))
		if err != nil {
			t.Fatal(err)
		}
		db.Set([]byte("key0300x"), []byte(strings.Repeat("o", 9000)))
		db.Close()
		s, err := pagestore.Open("db", pagestore.Options{FS: fs, DisableBackground: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		root := rootOf(t, s)
		page := make([]byte, s.PageSize())
		if err := s.ReadPage(pagestore.PageID(root), page); err != nil {
			t.Fatal(err)
		}
		info, err := btree.InspectPage(root, page)
		if err != nil || info.Kind != btree.KindBranch || len(info.Children) < 3 {
			t.Fatalf("root %d: %v %+v", root, err, info)
		}
		return fs, s, root, info, page
	}
	cases := map[string]struct {
		damage func(t *testing.T, s *pagestore.Store, root btree.PageID, info btree.PageInfo, page []byte)
		want   string
	}{
		"key below its separator": {func(t *testing.T, s *pagestore.Store, root btree.PageID, info btree.PageInfo, page []byte) {
			leaf := readPage(t, s, info.Children[1])
			li, _ := btree.InspectPage(info.Children[1], leaf)
			li.Keys[0][0] = 'a' // "key..." → "aey...": still first in the leaf, now below the separator
			writePage(t, s, info.Children[1], leaf)
		}, "below its parent's separator"},
		"child freed": {func(t *testing.T, s *pagestore.Store, root btree.PageID, info btree.PageInfo, page []byte) {
			if err := s.Free(pagestore.PageID(info.Children[2])); err != nil {
				t.Fatal(err)
			}
		}, "is not in the store"},
		"page used twice": {func(t *testing.T, s *pagestore.Store, root btree.PageID, info btree.PageInfo, page []byte) {
			// Child 1 (after key 0) := child 0.
			off := int(binary.LittleEndian.Uint16(page[24:]))
			klen, k := binary.Uvarint(page[off:])
			binary.LittleEndian.PutUint64(page[off+k+int(klen):], uint64(info.Children[0]))
			writePage(t, s, root, page)
		}, "reached twice"},
		"overflow chain too short": {func(t *testing.T, s *pagestore.Store, root btree.PageID, info btree.PageInfo, page []byte) {
			for _, c := range info.Children {
				leaf := readPage(t, s, c)
				li, _ := btree.InspectPage(c, leaf)
				for _, v := range li.Values {
					if v.Overflow {
						ov := readPage(t, s, v.First)
						binary.LittleEndian.PutUint64(ov[8:], 0) // cut the chain after its first page
						writePage(t, s, v.First, ov)
						return
					}
				}
			}
			t.Fatal("no overflow value")
		}, "overflow chain ends"},
		"a node from a later transaction": {func(t *testing.T, s *pagestore.Store, root btree.PageID, info btree.PageInfo, page []byte) {
			binary.LittleEndian.PutUint64(page[16:], 1<<40)
			writePage(t, s, root, page)
		}, "after the meta page's"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fs, s, root, info, page := setup(t)
			tc.damage(t, s, root, info, page)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			r := mustCheck(t, fs, "db")
			found := false
			for _, p := range corrupt(r) {
				found = found || strings.Contains(p.Msg, tc.want)
			}
			if !found {
				t.Fatalf("want a problem saying %q, got %v", tc.want, r.Problems)
			}
		})
	}
}

func rootOf(t *testing.T, s *pagestore.Store) btree.PageID {
	page := make([]byte, s.PageSize())
	if err := s.ReadPage(0, page); err != nil {
		t.Fatal(err)
	}
	m, err := decodeMeta(page)
	if err != nil {
		t.Fatal(err)
	}
	return btree.PageID(m.root)
}

func readPage(t *testing.T, s *pagestore.Store, id btree.PageID) []byte {
	page := make([]byte, s.PageSize())
	if err := s.ReadPage(pagestore.PageID(id), page); err != nil {
		t.Fatal(err)
	}
	return page
}

func writePage(t *testing.T, s *pagestore.Store, id btree.PageID, page []byte) {
	if _, _, err := s.WritePage(pagestore.PageID(id), page); err != nil {
		t.Fatal(err)
	}
}

func TestInUse(t *testing.T) {
	dir := t.TempDir()
	db, err := strata.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := Check(vfs.Default, dir); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("check of an open database: %v", err)
	}
}

func TestNotADatabase(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hi"), 0o644)
	if _, err := Check(vfs.Default, dir); err == nil || !strings.Contains(err.Error(), "not a Strata database") {
		t.Fatalf("check of a foreign directory: %v", err)
	}
}

// TestHealthyAfterDeletes: deletes leave sparse trees (empty nodes are
// removed, nodes are not merged; a branch may keep only its first child).
// None of that is a problem.
func TestHealthyAfterDeletes(t *testing.T) {
	fs := vfs.NewMem()
	db, err := strata.Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	const n = 30000
	b := db.NewBatch()
	for i := 0; i < n; i++ {
		b.Set([]byte(fmt.Sprintf("k%06d", i)), []byte("value"))
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	kept := 0
	b = db.NewBatch()
	for i := 0; i < n; i++ {
		// Keep a few keys, in clusters, so whole subtrees empty out.
		if (i/2000)%3 == 0 && rng.IntN(200) == 0 {
			kept++
			continue
		}
		b.Delete([]byte(fmt.Sprintf("k%06d", i)))
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	r := mustCheck(t, fs, "db")
	if len(r.Problems) != 0 || r.Keys != int64(kept) {
		t.Fatalf("after deletes: %d keys (kept %d), depth %d, %d branches, problems %v", r.Keys, kept, r.Depth, r.Branches, r.Problems)
	}
	t.Logf("%d keys kept, depth %d, %d branches, %d leaves", kept, r.Depth, r.Branches, r.Leaves)
}

// buildStreams is build's kind of database, larger, whose page store was
// then reworked so that it has what a long-running store has: sealed and
// head segments in both streams (the cleaner relocating into the cold one)
// and a map log of deltas over the full checkpoint. Every page is rewritten
// with its own bytes, so the database is the same; the store is closed
// cleanly.
func buildStreams(t *testing.T) (*vfs.MemFS, map[string]string) {
	t.Helper()
	fs := vfs.NewMem()
	db, err := strata.Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	model := map[string]string{}
	b := db.NewBatch()
	for i := 0; i < 20000; i++ {
		k, v := fmt.Sprintf("key%05d", i), fmt.Sprintf("value-%d-%0100d", i, i)
		b.Set([]byte(k), []byte(v))
		model[k] = v
	}
	if err := b.Commit(strata.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	c, _ := codec.Parse("lz4")
	s, err := pagestore.Open("db", pagestore.Options{FS: fs, Codec: c, DisableBackground: true,
		SegmentSize: 64 << 10, WriteBufferSize: 16 << 10, MapLogRatio: 100, CleanerThreshold: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	var ids []pagestore.PageID
	s.ForEachPage(func(id pagestore.PageID) error { ids = append(ids, id); return nil })
	page := make([]byte, s.PageSize())
	for round := 1; round <= 8; round++ {
		for i, id := range ids {
			if i%(round+2) != 0 {
				continue
			}
			if err := s.ReadPage(id, page); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.WritePage(id, page); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Clean(); err != nil {
			t.Fatal(err)
		}
		if err := s.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return fs, model
}

// TestFindsCorruptionInStreamsAndMapLog plants flips and truncations, as
// TestFindsEveryPlantedCorruption does, in buildStreams's page store: its
// segments of both streams, its checkpoint and its map log. Check reports
// corruption for all of it, except damage a crash leaves too, which Open
// repairs or keeps without losing anything: damage to the map log's newest
// record or a truncation of the log (a torn append), a segment cut that
// removes only zeros (its padding's end), or a flip in the padding of an
// older map log record (bytes no reader reads, where a torn append can
// leave garbage). For those, whenever check reports no corruption, Open
// must read back every key exactly.
func TestFindsCorruptionInStreamsAndMapLog(t *testing.T) {
	fs0, model := buildStreams(t)
	in, err := pagestore.Inspect(fs0, "db")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	streams := map[string]int{}
	for _, s := range in.Segments {
		if s.Records > 0 {
			files = append(files, s.Path)
			streams[s.Path] = s.Stream
		}
	}
	in.Close()
	cold := 0
	for _, st := range streams {
		if st == pagestore.StreamCold {
			cold++
		}
	}
	mapLog := filepath.Join("db", "MAPLOG")
	recs := mapLogRecords(t, fs0, mapLog)
	if cold < 2 || len(files)-cold < 2 || len(recs) < 4 {
		t.Fatalf("%d cold and %d hot segments, %d map log records: the database has too little of both", cold, len(files)-cold, len(recs))
	}
	files = append(files, mapLog, mapLog, mapLog, filepath.Join("db", "CHECKPOINT"))
	if r := mustCheck(t, fs0, "db"); len(r.Problems) != 0 || r.Keys != int64(len(model)) {
		t.Fatalf("reworked database: %d keys, problems %v", r.Keys, r.Problems)
	}
	rng := rand.New(rand.NewPCG(14, 14))
	trials := 300
	if raceEnabled {
		trials = 60
	}
	found := map[string]int{}
	crashLike := 0
	for trial := 0; trial < trials; trial++ {
		fs := fs0.CrashClone(vfs.CrashDropUnsynced, nil)
		name := files[rng.IntN(len(files))]
		st, _ := fs.Stat(name)
		f, err := fs.OpenFile(name, os.O_RDWR, 0, vfs.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		what, mustFind := "", true
		if trial%5 == 4 {
			n := rng.Int64N(st.Size())
			rest := make([]byte, st.Size()-n)
			f.ReadAt(rest, n)
			f.Truncate(n)
			what = fmt.Sprintf("truncate %s to %d", name, n)
			mustFind = name != mapLog && !allZero(rest)
		} else {
			off := rng.Int64N(st.Size())
			b := make([]byte, 1)
			f.ReadAt(b, off)
			b[0] ^= byte(1 + rng.IntN(255))
			f.WriteAt(b, off)
			what = fmt.Sprintf("flip %s at %d", name, off)
			if name == mapLog {
				i := recordAt(recs, off)
				mustFind = i < len(recs)-1 && off < recs[i].start+recs[i].length
			}
		}
		f.Close()
		r := mustCheck(t, fs, "db")
		bad := corrupt(r)
		kind := filepath.Base(name)
		if s, ok := streams[name]; ok {
			kind = []string{"hot segment", "cold segment"}[s]
		}
		switch {
		case len(bad) > 0:
			found[kind]++
			if !strings.Contains(bad[0].String(), filepath.Base(name)) && !strings.Contains(bad[0].String(), "page") {
				t.Errorf("%s: the problem names neither the file nor a page: %v", what, bad[0])
			}
		case mustFind:
			t.Fatalf("%s: check found no corruption (problems %v)", what, r.Problems)
		default:
			crashLike++
			db, err := strata.Open("db", memOptions(fs))
			if err != nil {
				t.Fatalf("%s: check found no corruption (problems %v), but Open fails: %v", what, r.Problems, err)
			}
			for k, v := range model {
				if got, err := db.Get([]byte(k)); err != nil || string(got) != v {
					t.Fatalf("%s: check found no corruption (problems %v), but key %s reads %.20q, %v", what, r.Problems, k, got, err)
				}
			}
			db.Close()
		}
	}
	if found["hot segment"] == 0 || found["cold segment"] == 0 || found["MAPLOG"] == 0 || found["CHECKPOINT"] == 0 {
		t.Fatalf("corruption found by kind of file: %v: some kind was never damaged", found)
	}
	t.Logf("corruption found by kind of file: %v; %d crash-like damages, no key lost", found, crashLike)
}

// mapLogRecord is where a record of the map log lies.
type mapLogRecord struct{ start, length int64 }

// mapLogRecords lists the records of the map log (docs/FORMAT.md: each
// starts on a 4 KiB boundary with the magic and its length).
func mapLogRecords(t *testing.T, fs vfs.FS, name string) []mapLogRecord {
	t.Helper()
	f, err := fs.OpenFile(name, os.O_RDONLY, 0, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size, _ := f.Size()
	var out []mapLogRecord
	hdr := make([]byte, 12)
	for off := int64(0); off < size; {
		if _, err := f.ReadAt(hdr, off); err != nil || string(hdr[:8]) != "STRATMDL" {
			t.Fatalf("map log record at %d: %v %q", off, err, hdr)
		}
		n := int64(binary.LittleEndian.Uint32(hdr[8:]))
		out = append(out, mapLogRecord{off, n})
		off += (n + 4095) &^ 4095
	}
	return out
}

// recordAt returns the index of the record whose padded extent holds off.
func recordAt(recs []mapLogRecord, off int64) int {
	i := len(recs) - 1
	for i > 0 && recs[i].start > off {
		i--
	}
	return i
}

// TestWALSkip: a WAL that Open moved forward past the meta page's LSN
// (its files lost, then a crash before the checkpoint that removes the
// old ones) is healthy; one whose skip passes over records the meta page
// has not applied is missing them.
func TestWALSkip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ahead   uint64 // the skip's end, past the meta page's LSN + 1
		missing bool
	}{{"to the meta page's LSN", 0, false}, {"past it", 40, true}} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			db, err := strata.Open("db", memOptions(fs))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 50; i++ {
				if err := db.Set([]byte(fmt.Sprintf("key%d", i)), []byte("v")); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			lsn := mustCheck(t, fs, "db").MetaLSN
			if lsn < 10 {
				t.Fatalf("meta page's LSN %d", lsn)
			}
			names, err := fs.List("db/wal")
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				if err := fs.Remove("db/wal/" + n); err != nil {
					t.Fatal(err)
				}
			}
			l, err := wal.Open("db/wal", wal.Options{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			l.Append([]byte{2, 1, 'k'}) // an older record (a delete), below the meta page's LSN
			l.Close()
			if l, err = wal.Open("db/wal", wal.Options{FS: fs, MinNextLSN: lsn + 1 + tc.ahead}); err != nil {
				t.Fatal(err)
			}
			l.Close()
			bad := corrupt(mustCheck(t, fs, "db"))
			if tc.missing != (len(bad) > 0) {
				t.Fatalf("problems %v, want missing records: %v", bad, tc.missing)
			}
		})
	}
}

// TestOneDamagedRecordReportedOnce: a few bytes damaged inside one record
// of a segment are reported at that record, and the whole records after it
// in the same segment are not: check reported each of them as "no valid
// record starts there" (thousands of lines for one damaged page), although
// they decode. (Found by a reviewer, thirty-second session.)
func TestOneDamagedRecordReportedOnce(t *testing.T) {
	fs := vfs.NewMem()
	db, err := strata.Open("db", memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	for i := 0; i < 5000; i++ {
		b.Set([]byte(fmt.Sprintf("key%06d", i)), []byte(fmt.Sprintf("value-%d-%0100d", i, i)))
	}
	if err := b.Commit(strata.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	name := "db/00000001.seg"
	f, err := fs.OpenFile(name, os.O_RDWR, 0, vfs.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	size, _ := f.Size()
	damage := []byte{0xde, 0xad, 0xbe, 0xef}
	f.WriteAt(damage, size/3)
	f.Close()
	bad := corrupt(mustCheck(t, fs, "db"))
	if len(bad) == 0 || len(bad) > 4 {
		t.Fatalf("%d problems for 4 bytes damaged in one record: %v", len(bad), bad[:min(len(bad), 6)])
	}
}

package pagestore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/testdocs"
	"github.com/stratadb/strata/internal/vfs"
)

// jsonPage returns a 4 KiB page of JSON documents (testdocs.AppendEvent): what a
// dictionary pays for.
func jsonPage(id, ver int) []byte {
	rng := rand.New(rand.NewPCG(uint64(id), uint64(ver)))
	var b, doc []byte
	for n := 0; ; n++ {
		doc = testdocs.AppendEvent(doc[:0], rng, id*100+n)
		if len(b)+len(doc) > testPageSize*8/10 {
			break
		}
		b = append(b, doc...)
	}
	p := make([]byte, testPageSize)
	copy(p, b)
	return p
}

// digitsPage returns a page of random digits, like sysbench's rows: no
// dictionary can help.
func digitsPage(id, ver int) []byte {
	rng := rand.New(rand.NewPCG(uint64(id), uint64(ver)))
	p := make([]byte, testPageSize)
	for i := range testPageSize * 8 / 10 {
		p[i] = '0' + byte(rng.IntN(10))
	}
	return p
}

func dictOptions(fs vfs.FS) Options {
	o := testOptions(fs, nil)
	o.DictionarySample = 64 * testPageSize
	// The tests that need a dictionary kept must not depend on the host's
	// decode timing (TestRejectDict covers the rule).
	o.DictionarySpaceOnly = true
	return o
}

// writePages writes pages [from, to) made by mk and returns the codec IDs
// and stored bytes of those written after the dictionary's verdict.
func writePages(t *testing.T, s *Store, from, to int, mk func(id, ver int) []byte) (ids map[codec.ID]int, stored int) {
	t.Helper()
	ids = map[codec.ID]int{}
	for i := from; i < to; i++ {
		if _, err := s.Allocate(); err != nil {
			t.Fatal(err)
		}
		c, n, err := s.WritePage(PageID(i), mk(i, 1))
		if err != nil {
			t.Fatal(err)
		}
		ids[c]++
		stored += n
	}
	return ids, stored
}

// checkPagesReadBack reads pages [0, n) and checks each is mk(id, 1).
func checkPagesReadBack(t *testing.T, s *Store, n int, mk func(id, ver int) []byte, what string) {
	t.Helper()
	got := make([]byte, testPageSize)
	for i := range n {
		if err := s.ReadPage(PageID(i), got); err != nil {
			t.Fatalf("%s: page %d: %v", what, i, err)
		}
		if !bytes.Equal(got, mk(i, 1)) {
			t.Fatalf("%s: page %d read back wrong", what, i)
		}
	}
}

func dictFiles(t *testing.T, fs vfs.FS) []string {
	t.Helper()
	names, err := fs.List("db")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, dictFilePrefix) {
			out = append(out, n)
		}
	}
	return out
}

// A store of JSON pages trains a dictionary on its first pages, keeps it
// because it pays, compresses later pages with it (smaller than a store
// without one), and reads them back after a reopen, with the dictionary
// disabled too.
func TestDictionaryAdoptedForJSONPages(t *testing.T) {
	fs := vfs.NewMem()
	s, err := Open("db", dictOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	writePages(t, s, 0, 64, jsonPage)
	id, verdict := s.Dictionary()
	if id == 0 || !strings.HasPrefix(verdict, "adopted") {
		t.Fatalf("after the sample: dictionary %08x, verdict %q; want one adopted", id, verdict)
	}
	if got := dictFiles(t, fs); len(got) != 1 || got[0] != dictFileName(1) {
		t.Fatalf("dictionary files %v, want [%s]", got, dictFileName(1))
	}
	ids, withDict := writePages(t, s, 64, 128, jsonPage)
	if ids[codec.ZstdDict] != 64 {
		t.Fatalf("pages written after adoption by codec: %v, want all %s", ids, codec.ZstdDict)
	}

	plainFS := vfs.NewMem()
	o := dictOptions(plainFS)
	o.DisableDictionary = true
	plain, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	writePages(t, plain, 0, 64, jsonPage)
	ids, without := writePages(t, plain, 64, 128, jsonPage)
	if ids[codec.Zstd] != 64 || len(dictFiles(t, plainFS)) != 0 {
		t.Fatalf("disabled: codecs %v, files %v", ids, dictFiles(t, plainFS))
	}
	plain.Close()
	t.Logf("64 JSON pages: %d bytes with the dictionary, %d without (%.2f×)", withDict, without, float64(without)/float64(withDict))
	if float64(without) < 1.1*float64(withDict) {
		t.Errorf("with the dictionary %d bytes, without %d: want at least 1.1× smaller", withDict, without)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for _, disable := range []bool{false, true} {
		o := dictOptions(fs)
		o.DisableDictionary = disable
		s, err := Open("db", o)
		if err != nil {
			t.Fatal(err)
		}
		checkPagesReadBack(t, s, 128, jsonPage, fmt.Sprintf("disabled=%v", disable))
		c, _, err := s.WritePage(PageID(128+map[bool]int{false: 0, true: 1}[disable]), jsonPage(0, 2))
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]codec.ID{false: codec.ZstdDict, true: codec.Zstd}[disable]; c != want {
			t.Fatalf("disabled=%v: a page written after reopening used %s, want %s", disable, c, want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// Random digits gain nothing from a dictionary: it is judged, rejected,
// and never written.
func TestDictionaryRejectedForRandomDigits(t *testing.T) {
	fs := vfs.NewMem()
	s, err := Open("db", dictOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	writePages(t, s, 0, 64, digitsPage)
	id, verdict := s.Dictionary()
	if id != 0 || !strings.HasPrefix(verdict, "rejected") {
		t.Fatalf("dictionary %08x, verdict %q; want none, rejected", id, verdict)
	}
	if ids, _ := writePages(t, s, 64, 80, digitsPage); ids[codec.Zstd] != 16 {
		t.Fatalf("codecs after rejection: %v, want all zstd", ids)
	}
	if f := dictFiles(t, fs); len(f) != 0 {
		t.Fatalf("dictionary files %v after rejection", f)
	}
}

// A store whose dictionary file is damaged does not open (its pages could
// not be read); a dictionary file a crash left half-written is removed.
func TestDictionaryFileDamage(t *testing.T) {
	fs := vfs.NewMem()
	s, err := Open("db", dictOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	writePages(t, s, 0, 80, jsonPage)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	tmp := filepath.Join("db", dictFileName(2)+dictTmpSuffix)
	f, err := fs.OpenFile(tmp, 0o102, 0o644, vfs.OpenOptions{}) // O_RDWR|O_CREATE
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("STRATD"), 0)
	f.Close()
	s, err = Open("db", dictOptions(fs))
	if err != nil {
		t.Fatalf("open with a leftover temporary dictionary: %v", err)
	}
	s.Close()
	if _, err := fs.Stat(tmp); err == nil {
		t.Fatal("the temporary dictionary file was not removed")
	}

	name := filepath.Join("db", dictFileName(1))
	f, err = fs.OpenFile(name, 0o2, 0, vfs.OpenOptions{}) // O_RDWR
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	f.ReadAt(b, 100)
	b[0] ^= 0x40
	f.WriteAt(b, 100)
	f.Close()
	if _, err := Open("db", dictOptions(fs)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open with a damaged dictionary: err = %v, want ErrCorrupt", err)
	}

	// Without its DICT file a page compressed with the dictionary is
	// corrupt, although the dictionary is still registered in this
	// process.
	if err := fs.Remove(name); err != nil {
		t.Fatal(err)
	}
	o := dictOptions(fs)
	o.DisableDictionary = true
	s, err = Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.ReadPage(79, make([]byte, testPageSize)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("page 79 without its dictionary's file: err = %v, want ErrCorrupt", err)
	}
}

// A crash at any point of a run that trains and adopts a dictionary
// leaves a store that opens and returns every page synced before the
// crash intact.
func TestDictionaryCrashAtEveryOp(t *testing.T) {
	run := func(fs *vfs.MemFS) (synced int) {
		s, err := Open("db", dictOptions(fs))
		if err != nil {
			return 0
		}
		for i := 0; i < 96; i++ {
			if _, err := s.Allocate(); err != nil {
				return synced
			}
			if _, _, err := s.WritePage(PageID(i), jsonPage(i, 1)); err != nil {
				return synced
			}
			if i%16 == 15 {
				if err := s.Sync(); err != nil {
					return synced
				}
				synced = i + 1
			}
		}
		s.Close()
		return synced
	}
	counter := vfs.NewMem()
	run(counter)
	ops := counter.OpCount()
	// Every operation: the dictionary's install is five of them.
	for n := 0; n < ops; n++ {
		fs := vfs.NewMem()
		fs.CrashAfterOps(n)
		synced := run(fs)
		after := fs.CrashedClone(vfs.CrashMode(0), rand.New(rand.NewPCG(uint64(n), 1)))
		s, err := Open("db", dictOptions(after))
		if err != nil {
			t.Fatalf("crash after op %d: reopen: %v", n, err)
		}
		got := make([]byte, testPageSize)
		for i := 0; i < synced; i++ {
			if err := s.ReadPage(PageID(i), got); err != nil {
				t.Fatalf("crash after op %d: page %d (synced): %v", n, i, err)
			}
			if !bytes.Equal(got, jsonPage(i, 1)) {
				t.Fatalf("crash after op %d: page %d read back wrong", n, i)
			}
		}
		s.Close()
	}
}

// The verdict weighs the space a dictionary saves against the decoding
// time it adds.
func TestRejectDict(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		trial codec.DictTrial
		want  string
	}{
		{codec.DictTrial{PlainBytes: 1000, DictBytes: 640, PlainDecode: 10 * ms, DictDecode: 12 * ms}, ""},                                         // 4 KiB events
		{codec.DictTrial{PlainBytes: 1000, DictBytes: 810, PlainDecode: 10 * ms, DictDecode: 16 * ms}, "decoding costs more than the space saves"}, // 16 KiB events
		{codec.DictTrial{PlainBytes: 1000, DictBytes: 980, PlainDecode: 10 * ms, DictDecode: 9 * ms}, "too little gain"},                           // random digits
	} {
		if got := rejectDict(c.trial, DefaultDictionaryGain); got != c.want {
			t.Errorf("%+v: %q, want %q", c.trial, got, c.want)
		}
	}
}

// FuzzDictFile: decodeDictFile never panics, and what it accepts encodes
// back to the same file.
func FuzzDictFile(f *testing.F) {
	f.Add(encodeDictFile([]byte("0123456789abcdef")))
	f.Add([]byte("STRATDCT"))
	f.Fuzz(func(t *testing.T, b []byte) {
		raw, err := decodeDictFile(b)
		if err != nil {
			return
		}
		if !bytes.Equal(encodeDictFile(raw), b) {
			t.Fatal("accepted a file that does not re-encode to itself")
		}
	})
}

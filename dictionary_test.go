package strata

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/testdocs"
)

// dictLoad loads n JSON-event rows (dictDoc) into a new database in dir
// and returns its stats after a checkpoint.
func dictLoad(t *testing.T, dir string, n int, opts *Options) Stats {
	t.Helper()
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	var v []byte
	for first := 0; first < n; first += 1000 {
		b := db.NewBatch()
		for i := first; i < min(first+1000, n); i++ {
			v = testdocs.AppendEvent(v[:0], rng, i)
			if err := b.Set(fmt.Appendf(nil, "event%08d", i), v); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	st := db.Stats()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return st
}

// A database of JSON documents with 4 KiB pages trains a dictionary on its
// first pages and stores its data in fewer bytes than the same database
// with dictionaries disabled; every row reads back after a reopen.
func TestDictionaryShrinksJSONDatabase(t *testing.T) {
	const rows = 16000 // ~7 MB logical
	opts := func(disable bool) *Options {
		// Kept by the space it saves alone: the decode timing is the
		// host's, and the race detector's (pagestore's TestRejectDict
		// covers the rule).
		return &Options{PageSize: 4 << 10, CacheSize: 2 << 20, Partitions: 2, Sync: SyncNever, DisableDictionary: disable, dictSpaceOnly: true}
	}
	withDir, withoutDir := t.TempDir(), t.TempDir()
	with := dictLoad(t, withDir, rows, opts(false))
	without := dictLoad(t, withoutDir, rows, opts(true))
	t.Logf("with a dictionary: %d bytes stored (r = %.2f; %s); without: %d (r = %.2f)",
		with.Store.StoredBytes, with.Store.CompressionRatio, with.Store.Dictionary,
		without.Store.StoredBytes, without.Store.CompressionRatio)
	if with.Store.DictionaryID == 0 || !strings.HasPrefix(with.Store.Dictionary, "adopted") {
		t.Fatalf("no dictionary adopted: %q", with.Store.Dictionary)
	}
	if without.Store.DictionaryID != 0 || without.Store.Dictionary != "disabled" {
		t.Fatalf("disabled: dictionary %08x, %q", without.Store.DictionaryID, without.Store.Dictionary)
	}
	if float64(without.Store.StoredBytes) < 1.15*float64(with.Store.StoredBytes) {
		t.Errorf("stored bytes with a dictionary %d, without %d: want 1.15× fewer", with.Store.StoredBytes, without.Store.StoredBytes)
	}

	db, err := Open(withDir, opts(false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := db.Stats()
	if id := st.Store.DictionaryID; id != with.Store.DictionaryID {
		t.Fatalf("after reopening: dictionary %08x, want %08x", id, with.Store.DictionaryID)
	}
	// The dictionary's codec state is charged to the cache.
	if c := opts(false).CacheSize; st.DictionaryMemory <= 0 || st.Pool.CacheSize != c-st.DictionaryMemory {
		t.Fatalf("after reopening: dictionary memory %d, pool cache %d of %d", st.DictionaryMemory, st.Pool.CacheSize, c)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	var v []byte
	for i := range rows {
		v = testdocs.AppendEvent(v[:0], rng, i)
		got, err := db.Get(fmt.Appendf(nil, "event%08d", i))
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		if !bytes.Equal(got, v) {
			t.Fatalf("row %d read back wrong", i)
		}
	}
}

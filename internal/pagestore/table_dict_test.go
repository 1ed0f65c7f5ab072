package pagestore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/vfs"
)

// Random digits gain no space from a dictionary's history, but a table
// dictionary (the store's literal table alone) decodes them faster: when
// the judge keeps it (here forced: the real judge times decoding on this
// host), it is written, later pages are compressed with it, and they read
// back after a reopen, with dictionaries disabled too.
func TestTableDictionaryAdoptedForRandomDigits(t *testing.T) {
	fs := vfs.NewMem()
	o := dictOptions(fs)
	// Judged by space alone a table dictionary is not tried; random
	// digits reject the history dictionary on space whatever the timing.
	o.DictionarySpaceOnly = false
	s, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	s.tableDictJudge = func(codec.DictTrial) string { return "" }
	writePages(t, s, 0, 64, digitsPage)
	id, verdict := s.Dictionary()
	if id == 0 || !strings.HasPrefix(verdict, "adopted: table dictionary") || !strings.Contains(verdict, "rejected (too little gain)") {
		t.Fatalf("dictionary %08x, verdict %q; want the table dictionary adopted, the history rejected", id, verdict)
	}
	if got := dictFiles(t, fs); len(got) != 1 {
		t.Fatalf("dictionary files %v, want one", got)
	}
	if ids, _ := writePages(t, s, 64, 128, digitsPage); ids[codec.ZstdDict] != 64 {
		t.Fatalf("pages written after adoption by codec: %v, want all %s", ids, codec.ZstdDict)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, disable := range []bool{false, true} {
		o.DisableDictionary = disable
		s, err := Open("db", o)
		if err != nil {
			t.Fatal(err)
		}
		checkPagesReadBack(t, s, 128, digitsPage, fmt.Sprintf("disabled=%v", disable))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A table dictionary is kept if it decodes at least a tenth faster and
// leaves the pages at most 2% larger.
func TestRejectTableDict(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		trial codec.DictTrial
		want  string
	}{
		{codec.DictTrial{PlainBytes: 1000, DictBytes: 999, PlainDecode: 10 * ms, DictDecode: 7 * ms}, ""},                            // sysbench rows
		{codec.DictTrial{PlainBytes: 1000, DictBytes: 975, PlainDecode: 10 * ms, DictDecode: 8 * ms}, ""},                            // JSON events
		{codec.DictTrial{PlainBytes: 1000, DictBytes: 1000, PlainDecode: 10 * ms, DictDecode: 10 * ms}, "decodes too little faster"}, // timing ignored
		{codec.DictTrial{PlainBytes: 1000, DictBytes: 1030, PlainDecode: 10 * ms, DictDecode: 7 * ms}, "pages too much larger"},      // a poor fit
		{codec.DictTrial{PlainBytes: 1000, DictBytes: 1000, PlainDecode: 10 * ms, DictDecode: 9*ms + 100*time.Microsecond}, "decodes too little faster"},
	} {
		if got := rejectTableDict(c.trial); got != c.want {
			t.Errorf("%+v: %q, want %q", c.trial, got, c.want)
		}
	}
}

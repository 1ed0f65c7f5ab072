package pagestore

import (
	"context"
	"testing"

	"golang.org/x/time/rate"

	"github.com/stratadb/strata/internal/vfs"
)

// TestCleanerSpansWithSmallBurst: the span reader under the
// background cleaner's smallest limiter burst (2 records), with direct
// I/O, a mix of raw (page-sized) and compressed records, and the
// segment's last record live: every record relocates intact.
func TestCleanerSpansWithSmallBurst(t *testing.T) {
	fs := &readCountingFS{FS: vfs.NewMem()}
	opts := testOptions(fs, mustCodec(t, "zstd"))
	opts.SegmentSize = 256 << 10
	s, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := model{}
	for id := PageID(0); id < 400; id++ {
		ver := int(id%5) + 5 // every kind, raw ones included
		if _, _, err := s.WritePage(id, pageContent(id, ver, testPageSize)); err != nil {
			t.Fatal(err)
		}
		m[id] = ver
	}
	for id := PageID(0); id < 400; id += 7 {
		if _, _, err := s.WritePage(id, pageContent(id, 12, testPageSize)); err != nil {
			t.Fatal(err)
		}
		m[id] = 12
	}
	if err := s.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	s.mu.RLock()
	victim := s.segs[1]
	s.mu.RUnlock()
	if !victim.f.Direct() {
		t.Fatal("segment not opened with direct I/O")
	}
	recs := liveRecords(s, victim)
	last := int64(0)
	for _, r := range recs {
		last = max(last, int64(r.loc.off)+int64(r.loc.len))
	}
	t.Logf("segment 1: %d live records, the last ends at %d of %d bytes", len(recs), last, victim.size)
	limiter := rate.NewLimiter(rate.Inf, 2*(testPageSize+recordHeaderSize))
	limiter.SetLimit(1 << 40)
	victim.pin()
	before := fs.reads.Load()
	moved, _, err := s.relocate(context.Background(), victim, recs, limiter)
	reads := fs.reads.Load() - before
	victim.unpin()
	if err != nil || moved != len(recs) {
		t.Fatalf("relocated %d of %d records: %v", moved, len(recs), err)
	}
	t.Logf("%d reads", reads)
	if err := s.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	checkModel(t, s, m, 400)
}

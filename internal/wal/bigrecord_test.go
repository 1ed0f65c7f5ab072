package wal

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestBigRecordsNotCopied: records larger than the queue are written from
// the caller's buffer, so Append returns only once they are written (the
// caller may reuse the buffer at once), and they keep their place in LSN
// order among small records appended concurrently.
func TestBigRecordsNotCopied(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, testDir, Options{FS: fs, QueueSize: 8 << 10, SyncMode: SyncNever})
	want := map[uint64][]byte{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 40<<10)
			for i := 0; i < 30; i++ {
				n := 10
				if g == 0 {
					n = 9<<10 + i*1000 // over the queue
				}
				p := buf[:n]
				for j := range p {
					p[j] = byte(g*31 + i + j)
				}
				lsn, err := l.Append(p)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				want[lsn] = bytes.Clone(p)
				mu.Unlock()
				clear(p) // the log must not read it any more
			}
		}()
	}
	wg.Wait()
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = mustOpen(t, testDir, Options{FS: fs})
	defer l.Close()
	recs := replayAll(t, l, 1)
	if len(recs) != 90 {
		t.Fatalf("replayed %d records, want 90", len(recs))
	}
	for i, r := range recs {
		if r.lsn != uint64(i+1) || !bytes.Equal(r.payload, want[r.lsn]) {
			t.Fatalf("record %d: lsn %d, %d bytes: %s", i, r.lsn, len(r.payload), fmt.Sprint(bytes.Equal(r.payload, want[r.lsn])))
		}
	}
	if st := l.Stats(); st.Files == 0 {
		t.Fatal("no files")
	}
}

// TestAppendChunks: a record given in chunks, small (copied into the
// queue) or large (written from the chunks), is replayed as their
// concatenation.
func TestAppendChunks(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, testDir, Options{FS: fs, QueueSize: 4 << 10})
	small := [][]byte{[]byte("ab"), {}, []byte("cde")}
	large := [][]byte{bytes.Repeat([]byte("x"), 3000), bytes.Repeat([]byte("y"), 5000), []byte("z")}
	for _, chunks := range [][][]byte{small, large, small} {
		if _, err := l.AppendChunks(chunks); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = mustOpen(t, testDir, Options{FS: fs})
	defer l.Close()
	recs := replayAll(t, l, 1)
	want := [][]byte{bytes.Join(small, nil), bytes.Join(large, nil), bytes.Join(small, nil)}
	if len(recs) != len(want) {
		t.Fatalf("%d records", len(recs))
	}
	for i, r := range recs {
		if !bytes.Equal(r.payload, want[i]) {
			t.Fatalf("record %d: %d bytes, want %d", i+1, len(r.payload), len(want[i]))
		}
	}
}

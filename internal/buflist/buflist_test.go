package buflist

import (
	"runtime"
	"testing"
)

// TestListKeepsBuffersAcrossCollections: buffers put back are given out
// again after garbage collections (sync.Pool's are dropped), up to the
// list's capacity; a full list drops the rest.
func TestListKeepsBuffersAcrossCollections(t *testing.T) {
	made := 0
	l := &List{free: make(chan *[]byte, 2), newBuf: func() *[]byte { made++; b := make([]byte, 64); return &b }}
	a, b, c := l.Get(), l.Get(), l.Get()
	if made != 3 {
		t.Fatalf("made %d buffers for three Gets on an empty list", made)
	}
	l.Put(a)
	l.Put(b)
	l.Put(c) // full: dropped
	runtime.GC()
	runtime.GC()
	got := map[*[]byte]bool{l.Get(): true, l.Get(): true}
	if made != 3 || !got[a] || !got[b] {
		t.Fatalf("after two collections: made %d buffers, got back a %v, b %v; want the kept two", made, got[a], got[b])
	}
	if l.Get(); made != 4 {
		t.Fatalf("a Get on an emptied list made %d buffers in all, want 4", made)
	}
}

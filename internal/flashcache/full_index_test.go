package flashcache

import (
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestFullIndexRestartsWarm: an index filled to its capacity (images
// small beside the flash, as a quarter page or less) keeps to that
// capacity, drops what is beyond it (DroppedFull), and a clean Close
// leaves a snapshot the next Open takes: the restart is warm. The shards'
// bounds alone, with their slack, let the index pass its capacity (64
// entries here could become 576), and the snapshot of a full index was
// then refused at Open: every restart was cold.
func TestFullIndexRestartsWarm(t *testing.T) {
	fs := vfs.NewMem()
	const capacity = 64
	o := stackOpts{tune: func(o *Options) { o.MaxEntries = capacity }}
	s := openStack(t, fs, fs, o)
	s.fill(600)
	st := s.fc.Stats()
	if st.Entries != capacity || st.Capacity != capacity {
		t.Fatalf("%d entries on flash, capacity %d: want the index full at %d", st.Entries, st.Capacity, capacity)
	}
	if st.DroppedFull == 0 {
		t.Fatal("nothing dropped for a full index")
	}
	s.close()

	s = openStack(t, fs, fs, o)
	defer s.close()
	if st := s.fc.Stats(); st.OpenState != "warm" || st.Rebuilt != capacity {
		t.Fatalf("reopened %q with %d entries, want warm with %d", st.OpenState, st.Rebuilt, capacity)
	}
}

package bufferpool

import (
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestFlushStatsSeparateCleanerAndFlushAll: pages FlushAll writes are not
// counted as the page cleaners' background writes, and the reverse.
func TestFlushStatsSeparateCleanerAndFlushAll(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	p, err := New(s, Options{CacheSize: 4 << 20, Partitions: 1, DirtyLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	populate(t, p, 40) // dirty, well under the dirty limit: no cleaning
	if err := p.FlushAll(); err != nil {
		t.Fatal(err)
	}
	st := p.Stats()
	if st.FlushAllWrites != 40 || st.Flushes != 0 {
		t.Fatalf("after FlushAll of 40 dirty pages: FlushAllWrites %d, Flushes %d", st.FlushAllWrites, st.Flushes)
	}
}

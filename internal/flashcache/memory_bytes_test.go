package flashcache

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestMemoryBytesCoversOpen measures what Open allocates (the index, the
// regions' lists, the queue, the filter, the write buffer) against
// Options.MemoryBytes, which the database charges to its budget: it must
// not be more, and MemoryBytes must not be far above it (the readers'
// buffers, the writer's pending entries and its copy of the queue's
// records come later, under load). TestIndexMemory holds the formula to
// the documented 32 bytes an entry; this holds the formula to the heap.
func TestMemoryBytesCoversOpen(t *testing.T) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll(dbDir, 0o755); err != nil {
		t.Fatal(err)
	}
	o := Options{
		Path: filepath.Join(t.TempDir(), "flash"), Size: 256 << 20, FS: vfs.OS(), PageSize: testPageSize,
		DBFS: mem, DBDir: dbDir, DBState: testDBState,
	}
	want := o.MemoryBytes()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	runtime.KeepAlive(c)
	if err := c.Close(false, DBState{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("Open allocated %d bytes; MemoryBytes %d", grown, want)
	if grown > want {
		t.Errorf("Open allocated %d bytes, more than MemoryBytes %d charges", grown, want)
	}
	if grown < want/2 {
		t.Errorf("Open allocated %d bytes, under half of MemoryBytes %d", grown, want)
	}
}

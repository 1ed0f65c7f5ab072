package bufferpool

import (
	"errors"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestNoFrameWhenDirtyPagesCannotBeWritten: every frame holds a dirty
// page and the store's writes fail. A page that needs a frame gets an
// error at once that says why (ErrNoFrame wrapping the write error),
// (the store buffers writes: the first failure comes when a segment is
// written, and the store refuses writes from then on) instead of waiting ten seconds for a cleaner that cannot succeed and
// returning a bare ErrNoFrame (seen after crashes in the root package's
// crash tests: the commit's error did not say it had crashed).
func TestNoFrameWhenDirtyPagesCannotBeWritten(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs, "lz4")
	defer s.Close()
	p, last := dirtyUntilWritesFail(t, fs, s)
	defer p.Close()
	if !errors.Is(last, ErrNoFrame) || !errors.Is(last, vfs.ErrInjected) {
		t.Fatalf("got %v, want ErrNoFrame wrapping the injected write error", last)
	}
	t.Log(last)
}

// dirtyUntilWritesFail opens a 128 KiB pool on store s (on fs), makes fs
// refuse every write, and creates dirty pages until one cannot get a
// frame: it returns the pool, every frame dirty, and that error.
func dirtyUntilWritesFail(t *testing.T, fs *vfs.MemFS, s Store) (*Pool, error) {
	t.Helper()
	p, err := New(s, Options{CacheSize: 128 << 10, Partitions: 1, FixedShare: true})
	if err != nil {
		t.Fatal(err)
	}
	fs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpWrite {
			return vfs.InjectedError(op, path)
		}
		return nil
	})
	for range 4096 {
		pg, err := p.NewPage()
		if err != nil {
			return p, err
		}
		fillPage(pg.Data(), pg.ID(), 1)
		pg.MarkDirty()
		pg.Release()
	}
	p.Close()
	t.Fatal("4096 new pages in a 128 KiB pool with failing writes: no error")
	return nil, nil
}

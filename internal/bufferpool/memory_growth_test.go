package bufferpool

import (
	"encoding/binary"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestTableGrowthPaidUnderMutex: while mu is released, resident() +
// metaBytes() exceeds the budget by at most one chunk of descriptors
// (memory.go), also when the chunk doubles the page table (16 bytes per
// descriptor at once: 64 KiB at 4,096 descriptors). Measured from inside
// compressing demotions (the codec hook runs with mu released), every
// demotion compressing, while new pages grow the descriptors past several
// powers of two.
func TestTableGrowthPaidUnderMutex(t *testing.T) {
	s := openStore(t, vfs.NewMem(), "lz4")
	defer s.Close()
	hs := newHookStore(s)
	keepImages = false // every demotion compresses (releases mu)
	defer func() { keepImages = true }()
	p, err := New(hs, Options{CacheSize: 2 << 20, Partitions: 1, FixedShare: true, CompressedShare: 0.5, Codec: &hs.c})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pt := p.parts[0]
	chunk := descChunkMeta
	var worst, worstTable, worstChunks int
	hook := func(dst, src []byte) ([]byte, error) {
		pt.mu.Lock() // the demoting goroutine released it
		if over := pt.resident() + pt.metaBytes() - pt.budget; over > worst {
			worst, worstTable, worstChunks = over, pt.table.bytes(), pt.nDescChunks
		}
		pt.mu.Unlock()
		return hs.c.Codec.Compress(dst, src)
	}
	hs.c.hook.Store(&hook)
	const n = 6000
	for i := 0; i < n; i++ {
		pg, err := p.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		d := pg.Data()
		clear(d)
		binary.LittleEndian.PutUint64(d, uint64(pg.ID()))
		pg.Release()
		if i%64 == 63 {
			hs.c.hook.Store(nil) // write-backs: not measured
			if err := p.FlushAll(); err != nil {
				t.Fatal(err)
			}
			hs.c.hook.Store(&hook)
		}
	}
	hs.c.hook.Store(nil)
	t.Logf("descriptor chunks %d, table %d bytes; worst overshoot with mu released %d bytes (at %d chunks, table %d bytes); a chunk is %d bytes",
		pt.nDescChunks, pt.table.bytes(), worst, worstChunks, worstTable, chunk)
	if worst > chunk {
		t.Fatalf("resident+metadata exceeded the budget by %d bytes while mu was released (a compressing demotion); memory.go allows one descriptor chunk, %d bytes", worst, chunk)
	}
}

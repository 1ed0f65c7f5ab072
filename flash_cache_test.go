package strata

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

func TestFlashCacheSmoke(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs)
	opts.CacheSize = 4 << 20
	opts.FlashCache = FlashCache{Path: "/flash", Size: 16 << 20}
	db, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	const n = 40000
	val := func(i int) []byte {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		b := make([]byte, 200)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		return b
	}
	b := db.NewBatch()
	for i := 0; i < n; i++ {
		b.Set(fmt.Appendf(nil, "key-%08d", i), val(i))
		if b.Len() > 500 {
			if err := b.Commit(nil); err != nil {
				t.Fatal(err)
			}
			b = db.NewBatch()
		}
	}
	b.Commit(nil)
	rng := rand.New(rand.NewPCG(1, 2))
	for k := 0; k < 3*n; k++ {
		i := rng.IntN(n)
		v, err := db.Get(fmt.Appendf(nil, "key-%08d", i))
		if err != nil || string(v) != string(val(i)) {
			t.Fatalf("get %d: %q %v", i, v, err)
		}
	}
	st := db.Stats().FlashCache
	t.Logf("%+v", st)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < n; k++ {
		i := rng.IntN(n)
		v, err := db.Get(fmt.Appendf(nil, "key-%08d", i))
		if err != nil || string(v) != string(val(i)) {
			t.Fatalf("get %d: %q %v", i, v, err)
		}
	}
	st = db.Stats().FlashCache
	t.Logf("%+v", st)
	db.Close()
}

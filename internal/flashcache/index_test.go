package flashcache

import (
	"math/rand/v2"
	"testing"
)

// TestIndexModel checks the index (open addressing with backward-shift
// deletion, pending and written slots) against a map, near full so that
// probe runs are long and wrap around the ends of the shards' tables.
func TestIndexModel(t *testing.T) {
	ix := newIndex(2000)
	model := map[uint32]slot{}
	rng := rand.New(rand.NewPCG(4, 4))
	for op := range 200000 {
		id := uint32(rng.IntN(4000))
		e, inModel := model[id]
		switch r := rng.IntN(10); {
		case r < 3:
			ver := uint32(op)
			ok, full := ix.reserve(id, ver, 100)
			if inModel && ok {
				t.Fatalf("op %d: reserved %d twice", op, id)
			}
			if ok {
				model[id] = slot{id: id, version: ver, loc: locPending, size: 100}
			} else if !inModel && !full {
				t.Fatalf("op %d: reserve %d refused", op, id)
			}
		case r < 5:
			if !inModel {
				continue
			}
			ok := ix.install(id, e.version, uint32(op), 50)
			if ok != (e.loc == locPending) {
				t.Fatalf("op %d: install %d = %v, slot %+v", op, id, ok, e)
			}
			if ok {
				model[id] = slot{id: id, version: e.version, loc: uint32(op), size: 50}
			}
		case r < 7:
			if ix.invalidate(id) != inModel {
				t.Fatalf("op %d: invalidate %d", op, id)
			}
			delete(model, id)
		case r < 8:
			lo, hi := uint32(op/2), uint32(op)
			want := inModel && e.loc != locPending && e.loc >= lo && e.loc < hi
			if ix.removeIn(id, lo, hi) != want {
				t.Fatalf("op %d: removeIn %d", op, id)
			}
			if want {
				delete(model, id)
			}
		default:
			got, ok := ix.lookup(id)
			if ok != inModel || (ok && got != e) {
				t.Fatalf("op %d: lookup %d = %+v %v, want %+v %v", op, id, got, ok, e, inModel)
			}
		}
	}
	var written int64
	for id, e := range model {
		if got, ok := ix.lookup(id); !ok || got != e {
			t.Fatalf("lookup %d = %+v %v, want %+v", id, got, ok, e)
		}
		if e.loc != locPending {
			written++
		}
	}
	if ix.count() != int64(len(model)) || ix.written() != written {
		t.Fatalf("count %d written %d, model %d written %d", ix.count(), ix.written(), len(model), written)
	}
}

// TestIndexMemory holds the RAM the index takes per entry of its capacity
// (table, regions' id lists, admission filter) to what the documentation
// states, about 32 bytes, and the rest of Options.MemoryBytes (the
// buffers: the 2 MiB queue and its records, the 1 MiB write buffer and
// its pending entries, the readers' buffers) to about 4.5 MiB.
func TestIndexMemory(t *testing.T) {
	for _, size := range []int64{1 << 30, 64 << 30} {
		o := Options{Path: "x", Size: size, PageSize: 4096}.withDefaults()
		l := o.layout()
		perEntry := float64(indexBytes(o.MaxEntries)+
			int64(l.regions)*(int64(regionListCap(o.MaxEntries, l.regions))*4+64)+
			filterBytes(o.MaxEntries)) / float64(o.MaxEntries)
		if perEntry < 30 || perEntry > 33 {
			t.Errorf("flash of %d bytes: %.2f bytes per index entry, the documentation says about 32", size, perEntry)
		}
		fixed := o.MemoryBytes() - int64(perEntry*float64(o.MaxEntries))
		if fixed > 4608<<10 {
			t.Errorf("flash of %d bytes: %d bytes of buffers, over about 4.5 MiB", size, fixed)
		}
	}
}

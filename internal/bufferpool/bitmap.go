package bufferpool

import "math/bits"

// freeBitmap tracks free slots (frames or image chunks) and hands out the
// lowest free one, so that the slots in use stay packed at the start of
// their arena and the memory above them can be given back to the kernel.
type freeBitmap struct {
	words []uint64 // bit set = slot free
	hint  int      // no free slot in words[:hint]
	n     int
	free  int
}

func newFreeBitmap(n int) freeBitmap {
	b := freeBitmap{words: make([]uint64, (n+63)/64), n: n, free: n}
	for i := range b.words {
		b.words[i] = ^uint64(0)
	}
	if r := n % 64; r != 0 {
		b.words[len(b.words)-1] = 1<<r - 1
	}
	return b
}

// alloc returns the lowest free slot, or -1.
func (b *freeBitmap) alloc() int {
	for i := b.hint; i < len(b.words); i++ {
		if w := b.words[i]; w != 0 {
			bit := bits.TrailingZeros64(w)
			b.words[i] = w &^ (1 << bit)
			b.hint = i
			b.free--
			return i*64 + bit
		}
	}
	b.hint = len(b.words)
	return -1
}

func (b *freeBitmap) release(slot int) {
	w := slot / 64
	b.words[w] |= 1 << (slot % 64)
	b.hint = min(b.hint, w)
	b.free++
}

func (b *freeBitmap) isFree(slot int) bool { return b.words[slot/64]&(1<<(slot%64)) != 0 }

func (b *freeBitmap) bytes() int { return len(b.words) * 8 }

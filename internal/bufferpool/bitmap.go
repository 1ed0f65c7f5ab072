package bufferpool

import "math/bits"

// This file holds the pool's bit sets. They are plain data: the partition
// that owns one guards it with its mutex.

// freeBitmap tracks free slots (frames) and hands out the
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

// take marks free slot as used.
func (b *freeBitmap) take(slot int) {
	b.words[slot/64] &^= 1 << (slot % 64)
	b.free--
}

func (b *freeBitmap) release(slot int) {
	w := slot / 64
	b.words[w] |= 1 << (slot % 64)
	b.hint = min(b.hint, w)
	b.free++
}

func (b *freeBitmap) isFree(slot int) bool { return b.words[slot/64]&(1<<(slot%64)) != 0 }

func (b *freeBitmap) bytes() int { return len(b.words) * 8 }

// bitset is a set of small integers with lowest and highest member
// queries: the image arena's sets of pages (partly used, untouched) and
// the frames that are free but still backed by memory.
type bitset struct {
	words []uint64
	n     int // members
}

func newBitset(size int) bitset { return bitset{words: make([]uint64, (size+63)/64)} }

func (s *bitset) has(i int) bool { return s.words[i/64]&(1<<(i%64)) != 0 }

func (s *bitset) add(i int) {
	if !s.has(i) {
		s.words[i/64] |= 1 << (i % 64)
		s.n++
	}
}

func (s *bitset) remove(i int) {
	if s.has(i) {
		s.words[i/64] &^= 1 << (i % 64)
		s.n--
	}
}

// first returns the lowest member, or -1.
func (s *bitset) first() int {
	if s.n == 0 {
		return -1
	}
	for i, w := range s.words {
		if w != 0 {
			return i*64 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

// nextAfter returns the lowest member above i, or -1.
func (s *bitset) nextAfter(i int) int {
	i++
	if i >= len(s.words)*64 {
		return -1
	}
	w := s.words[i/64] &^ (1<<(i%64) - 1) // bits i%64..63
	for wi := i / 64; ; {
		if w != 0 {
			return wi*64 + bits.TrailingZeros64(w)
		}
		if wi++; wi == len(s.words) {
			return -1
		}
		w = s.words[wi]
	}
}

// last returns the highest member, or -1.
func (s *bitset) last() int {
	if s.n == 0 {
		return -1
	}
	for i := len(s.words) - 1; i >= 0; i-- {
		if w := s.words[i]; w != 0 {
			return i*64 + 63 - bits.LeadingZeros64(w)
		}
	}
	return -1
}

// lastBelow returns the highest member below i, or -1.
func (s *bitset) lastBelow(i int) int {
	if i <= 0 || s.n == 0 {
		return -1
	}
	i--
	w := s.words[i/64] & (^uint64(0) >> (63 - i%64)) // bits 0..i%64
	for wi := i / 64; ; {
		if w != 0 {
			return wi*64 + 63 - bits.LeadingZeros64(w)
		}
		if wi--; wi < 0 {
			return -1
		}
		w = s.words[wi]
	}
}

func (s *bitset) bytes() int { return len(s.words) * 8 }

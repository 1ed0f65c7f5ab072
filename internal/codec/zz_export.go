package codec

import "encoding/binary"

// LiteralsOnlyZZ (prototype)
func LiteralsOnlyZZ(c Codec, dst, src []byte) ([]byte, bool) {
	dc, ok := c.(*dictCodec)
	if !ok || dc.dict.lit == nil {
		return dst, false
	}
	return dc.dict.lit.literalsOnly(dst, src, dc.dict.id)
}

func (t *litTable) literalsOnly(dst, src []byte, dictID uint32) ([]byte, bool) {
	if t == nil || len(src) < minCodedLiterals || len(src) > maxRewritePage {
		return dst, false
	}
	s := t.pool.Get().(*litScratch)
	defer t.pool.Put(s)
	streams := 4
	if len(src) < 1024 {
		streams = 1
	}
	lits, ok := s.codeWith(s.enc, 3, streams, src, nil)
	if !ok || len(lits)+1 >= len(src) {
		return dst, false
	}
	out := binary.LittleEndian.AppendUint32(dst[:0], zstdFrameMagic)
	n := len(src)
	switch {
	case n < 65536+256:
		out = append(out, 1<<6|0x20|3)
		out = binary.LittleEndian.AppendUint32(out, dictID)
		out = binary.LittleEndian.AppendUint16(out, uint16(n-256))
	default:
		out = append(out, 2<<6|0x20|3)
		out = binary.LittleEndian.AppendUint32(out, dictID)
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
	}
	blockLen := len(lits) + 1
	bh := uint32(1) | 2<<1 | uint32(blockLen)<<3
	out = append(out, byte(bh), byte(bh>>8), byte(bh>>16))
	out = append(out, lits...)
	return append(out, 0), true
}

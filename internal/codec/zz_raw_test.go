package codec

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/klauspost/compress/huff0"
	"github.com/klauspost/compress/zstd"
)

func zzLoad2(t testing.TB, path string, n int) [][]byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skip(err)
	}
	var pages [][]byte
	for len(b) > 8 {
		pl := int(binary.LittleEndian.Uint32(b))
		pages = append(pages, b[8:8+pl])
		b = b[8+pl:]
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(pages), func(i, j int) { pages[i], pages[j] = pages[j], pages[i] })
	return pages[:min(n, len(pages))]
}

// raw literal section: returns lits, header len
func zzRawLits(img []byte, p int) ([]byte, int, bool) {
	if img[p]&3 != 0 {
		return nil, 0, false
	}
	switch (img[p] >> 2) & 3 {
	case 0, 2:
		n := int(img[p] >> 3)
		return img[p+1 : p+1+n], 1, true
	case 1:
		n := int(img[p]>>4) | int(img[p+1])<<4
		return img[p+2 : p+2+n], 2, true
	default:
		n := int(img[p]>>4) | int(img[p+1])<<4 | int(img[p+2])<<12
		return img[p+3 : p+3+n], 3, true
	}
}

func zzEntropy(lits []byte) float64 {
	var h [256]int
	for _, c := range lits {
		h[c]++
	}
	n := float64(len(lits))
	e := 0.0
	for _, c := range h {
		if c > 0 {
			e += float64(c) * math.Log2(n/float64(c))
		}
	}
	return e / 8
}

func TestZZRaw(t *testing.T) {
	for _, ds := range []string{"sb", "ev"} {
		pages := zzLoad2(t, "/tmp/s27/data/"+ds+".pages", 4000)
		train, test := pages[:2000], pages[2000:]
		raw, err := TrainTableDict(train, 0, uint64(ds[0])+5000)
		if err != nil {
			t.Fatal(err)
		}
		lt, err := newLitTable(raw)
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := zstd.NewWriter(nil, encoderOptions(zstd.SpeedFastest, 1, nil)...)
		ropts := append(encoderOptions(zstd.SpeedFastest, 1, nil), zstd.WithNoEntropyCompression(true))
		renc, _ := zstd.NewWriter(nil, ropts...)
		s := lt.pool.Get().(*litScratch)
		own := &huff0.Scratch{}
		var plainSz, newSz, rawBlocks, treeless, ownCnt, other int
		var tPlain, tNew time.Duration
		for _, p := range test {
			st := time.Now()
			pi := plain.EncodeAll(p, nil)
			tPlain += time.Since(st)
			plainSz += len(pi)
			st = time.Now()
			img := renc.EncodeAll(p, nil)
			hl, _, _ := frameHeaderLen(img)
			bh := uint32(img[hl]) | uint32(img[hl+1])<<8 | uint32(img[hl+2])<<16
			size := len(img)
			if (bh>>1)&3 != 2 {
				rawBlocks++
			} else if lits, lh, ok := zzRawLits(img, hl+3); ok && len(lits) > 32 {
				coded, _, err := huff0.Compress4X(lits, s.enc)
				H := zzEntropy(lits)
				if err == nil && float64(len(coded)) <= H*(1+1.0/32)+16 {
					size = size - lh - len(lits) + 4 + len(coded)
					treeless++
				} else {
					out, _, err := huff0.Compress4X(lits, own)
					if err == nil {
						size = size - lh - len(lits) + 5 + len(out)
					}
					ownCnt++
				}
			} else {
				other++
			}
			tNew += time.Since(st)
			newSz += size
		}
		t.Logf("%s: plain %d bytes %.1f us/page; raw+recode %d bytes (%.4f) %.1f us/page; raw blocks %d treeless %d own %d other %d",
			ds, plainSz, float64(tPlain.Microseconds())/float64(len(test)), newSz, float64(newSz)/float64(plainSz),
			float64(tNew.Microseconds())/float64(len(test)), rawBlocks, treeless, ownCnt, other)
	}
}

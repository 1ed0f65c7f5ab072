package codec

import "testing"

func BenchmarkDictDecompress(b *testing.B) {
	for _, size := range []int{4 << 10, 16 << 10} {
		var train [][]byte
		for i := range 32 {
			train = append(train, eventsPage(size, uint64(i)))
		}
		d := mustDict(b, train, uint64(size))
		c, err := WithDict(mustParse(b, "zstd-1"), d)
		if err != nil {
			b.Fatal(err)
		}
		page := eventsPage(size, 77)
		img, _ := c.Compress(nil, page)
		dst := make([]byte, size)
		b.Run(map[int]string{4096: "4KiB", 16384: "16KiB"}[size], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := Decompress(ZstdDict, dst, img); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

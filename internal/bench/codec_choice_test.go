package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stratadb/strata"
	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/hooks"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// leafPages loads rows of data set name into a Strata database (pages of
// pageSize bytes, 0 for the default, stored raw, on an in-memory file
// system) and returns every page of its tree: what the buffer pool
// compresses when it demotes a frame or writes one back.
func leafPages(tb testing.TB, name string, rows, pageSize int) [][]byte {
	tb.Helper()
	fs := vfs.NewMem()
	opts := &strata.Options{Codec: "none", CacheSize: 64 << 20, Sync: strata.SyncNever, PageSize: pageSize}
	hooks.SetFS(opts, fs)
	db, err := strata.Open("db", opts)
	if err != nil {
		tb.Fatal(err)
	}
	ds, err := NewDataset(name, 1, int64(rows))
	if err != nil {
		tb.Fatal(err)
	}
	var k, v []byte
	for id := 0; id < rows; {
		b := db.NewBatch()
		for end := min(rows, id+1000); id < end; id++ {
			k, v = ds.AppendKey(k[:0], uint64(id)), ds.AppendValue(v[:0], uint64(id), 0)
			if err := b.Set(k, v); err != nil {
				tb.Fatal(err)
			}
		}
		if err := b.Commit(strata.NoSync); err != nil {
			tb.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	s, err := pagestore.Open("db", pagestore.Options{FS: fs, DisableBackground: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	var pages [][]byte
	err = s.ForEachPage(func(id pagestore.PageID) error {
		if id == 0 { // the meta page
			return nil
		}
		p := make([]byte, s.PageSize())
		if err := s.ReadPage(id, p); err != nil {
			return err
		}
		pages = append(pages, p)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return pages
}

// BenchmarkCodecOnLeaves measures the codecs the buffer pool could use for
// its own compressions (demotions and write-back) on the pages of real
// trees: sysbench rows and JSON events, loaded in key order (fill factor
// 100). It reports the compression ratio, and ns/op is one page compressed
// (or decompressed). docs/BUFFERPOOL.md explains the choice it led to.
//
//	go test -run '^$' -bench CodecOnLeaves -benchtime 2000x ./internal/bench/
func BenchmarkCodecOnLeaves(b *testing.B) {
	for _, ds := range []struct {
		name string
		rows int
	}{{"sysbench", 40000}, {"events", 8000}} {
		pages := leafPages(b, ds.name, ds.rows, 16<<10) // as docs/BUFFERPOOL.md measured it
		for _, name := range []string{"lz4", "snappy", "zstd-1", "zstd-2", "zstd-3", "deflate-1", "deflate-6"} {
			c, err := codec.Parse(name)
			if err != nil {
				b.Fatal(err)
			}
			imgs := make([][]byte, len(pages))
			var raw, stored int
			for i, p := range pages {
				out, _, err := codec.EncodePage(c, nil, p)
				if err != nil {
					b.Fatal(err)
				}
				imgs[i] = out
				raw, stored = raw+len(p), stored+len(out)
			}
			b.Run(fmt.Sprintf("%s/%s/compress", ds.name, name), func(b *testing.B) {
				buf := make([]byte, 0, 2*len(pages[0]))
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				for i := 0; i < b.N; i++ {
					out, _, err := codec.EncodePage(c, buf, pages[i%len(pages)])
					if err != nil {
						b.Fatal(err)
					}
					buf = out[:0]
				}
				b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/page")
				b.ReportMetric(float64(raw)/float64(stored), "ratio")
			})
			b.Run(fmt.Sprintf("%s/%s/decompress", ds.name, name), func(b *testing.B) {
				dst := make([]byte, len(pages[0]))
				ids := make([]codec.ID, len(imgs))
				for i := range imgs {
					ids[i] = c.ID()
					if len(imgs[i]) == len(dst) {
						ids[i] = codec.None
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				for i := 0; i < b.N; i++ {
					k := i % len(imgs)
					if err := codec.Decompress(ids[k], dst, imgs[k]); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/page")
			})
		}
	}
}

// BenchmarkZstdDictOnLeaves measures what a Zstandard dictionary trained on
// a tree's own pages would give the write-back and demotion compressions
// (zstd-1): the ratio, and the time to compress and decompress one page,
// without a dictionary and with dictionaries of 16 and 64 KiB (history
// sampled from half of the pages, tables built from that half; measured
// on the other half), at 4 and 16 KiB pages. docs/BENCHMARKS.md, "A zstd
// dictionary for small pages", reports it; Strata does not use one.
//
//	go test -run '^$' -bench ZstdDictOnLeaves -benchtime 2000x ./internal/bench/
func BenchmarkZstdDictOnLeaves(b *testing.B) {
	for _, ds := range []struct {
		name string
		rows int
	}{{"sysbench", 40000}, {"events", 8000}} {
		for _, ps := range []int{4 << 10, 16 << 10} {
			train, test := splitPages(leafPages(b, ds.name, ds.rows, ps))
			for _, hist := range []int{0, 16 << 10, 64 << 10} {
				enc, dec := dictCodec(b, train, hist)
				imgs := make([][]byte, len(test))
				var raw, stored int
				for i, p := range test {
					imgs[i] = enc.EncodeAll(p, nil)
					raw, stored = raw+len(p), stored+len(imgs[i])
				}
				name := fmt.Sprintf("%s/%dKiB/dict=%dKiB", ds.name, ps>>10, hist>>10)
				b.Run(name+"/compress", func(b *testing.B) {
					buf := make([]byte, 0, 2*ps)
					for i := 0; i < b.N; i++ {
						buf = enc.EncodeAll(test[i%len(test)], buf[:0])
					}
					b.ReportMetric(float64(raw)/float64(stored), "ratio")
				})
				b.Run(name+"/decompress", func(b *testing.B) {
					dst := make([]byte, 0, ps)
					for i := 0; i < b.N; i++ {
						var err error
						if dst, err = dec.DecodeAll(imgs[i%len(imgs)], dst[:0]); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// splitPages splits pages into those a dictionary is trained on (even
// positions) and those it is measured on (odd).
func splitPages(pages [][]byte) (train, test [][]byte) {
	for i, p := range pages {
		if i%2 == 0 {
			train = append(train, p)
		} else {
			test = append(test, p)
		}
	}
	return train, test
}

// dictCodec returns a zstd-1 encoder and a decoder, with a dictionary of
// hist bytes of history sampled from pages (none if hist is 0).
func dictCodec(tb testing.TB, pages [][]byte, hist int) (*zstd.Encoder, *zstd.Decoder) {
	eo := []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1)}
	do := []zstd.DOption{zstd.WithDecoderConcurrency(1)}
	if hist > 0 {
		rng := rand.New(rand.NewPCG(3, 4))
		var h []byte
		for len(h) < hist {
			p := pages[rng.IntN(len(pages))]
			off := rng.IntN(len(p) - 512)
			h = append(h, p[off:off+512]...)
		}
		d, err := zstd.BuildDict(zstd.BuildDictOptions{ID: 1, Contents: pages, History: h, Level: zstd.SpeedFastest})
		if err != nil {
			tb.Fatal(err)
		}
		eo, do = append(eo, zstd.WithEncoderDict(d)), append(do, zstd.WithDecoderDicts(d))
	}
	enc, err := zstd.NewWriter(nil, eo...)
	if err != nil {
		tb.Fatal(err)
	}
	dec, err := zstd.NewReader(nil, do...)
	if err != nil {
		tb.Fatal(err)
	}
	return enc, dec
}

// BenchmarkLiteralTableOnLeaves compares, on the tree's own 4 KiB leaves,
// Strata's zstd-1 codec without a dictionary, with a table dictionary (the
// store-wide literal table alone: codec/literals.go) and with a 64 KiB
// dictionary (its literals rewritten with its table too): the ratio, and
// the time to compress and to decode a page, through the codec package as
// the store and the buffer pool call it.
//
//	go test -run '^$' -bench LiteralTableOnLeaves -benchtime 4000x ./internal/bench/
func BenchmarkLiteralTableOnLeaves(b *testing.B) {
	for _, ds := range []struct {
		name string
		rows int
		seed uint64
	}{{"sysbench", 40000, 11}, {"events", 8000, 13}} {
		train, test := splitPages(leafPages(b, ds.name, ds.rows, 4<<10))
		plain, err := codec.New(codec.Zstd, 1)
		if err != nil {
			b.Fatal(err)
		}
		table, err := codec.TrainTableDict(train, 0, ds.seed)
		if err != nil {
			b.Fatal(err)
		}
		hist, err := codec.TrainDict(train, 0, 0, ds.seed+1)
		if err != nil {
			b.Fatal(err)
		}
		codecs := map[string]codec.Codec{"plain": plain}
		for name, raw := range map[string][]byte{"table": table, "dict64KiB": hist} {
			d, err := codec.RegisterDict(raw)
			if err != nil {
				b.Fatal(err)
			}
			if codecs[name], err = codec.WithDict(plain, d); err != nil {
				b.Fatal(err)
			}
		}
		for _, name := range []string{"plain", "table", "dict64KiB"} {
			c := codecs[name]
			imgs := make([][]byte, len(test))
			var raw, stored int
			for i, p := range test {
				if imgs[i], err = c.Compress(nil, p); err != nil {
					b.Fatal(err)
				}
				raw, stored = raw+len(p), stored+len(imgs[i])
			}
			b.Run(ds.name+"/"+name+"/compress", func(b *testing.B) {
				buf := make([]byte, 0, 8<<10)
				for i := 0; i < b.N; i++ {
					if buf, err = c.Compress(buf[:0], test[i%len(test)]); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(raw)/float64(stored), "ratio")
			})
			b.Run(ds.name+"/"+name+"/decompress", func(b *testing.B) {
				dst := make([]byte, 4<<10)
				for i := 0; i < b.N; i++ {
					j := i % len(imgs)
					if err := codec.Decompress(c.ID(), dst[:len(test[j])], imgs[j]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

package pagestore

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/vfs"
)

// TestWritePageImageReturnsStoredImage: the image WritePageImage returns is
// byte for byte what ReadImage reads back (from the write buffer and, after
// a reopen, from the file), in the codec the caller chose, and a store of
// one codec reads pages written with another.
func TestWritePageImageReturnsStoredImage(t *testing.T) {
	fs := vfs.NewMem()
	s, err := Open("db", testOptions(fs, mustCodec(t, "zstd")))
	if err != nil {
		t.Fatal(err)
	}
	want := map[PageID]Image{}
	for i, cname := range []string{"", "lz4", "zstd-1", "deflate", "none"} {
		var c codec.Codec
		if cname != "" {
			c = mustCodec(t, cname)
		}
		for v := 0; v < 5; v++ {
			id := PageID(i*5 + v)
			page := pageContent(id, v, testPageSize)
			img, err := s.WritePageImage(id, page, c, make([]byte, 0, 16))
			if err != nil {
				t.Fatal(err)
			}
			wantID := codec.Zstd
			if c != nil {
				wantID = c.ID()
			}
			if img.Codec != wantID && img.Codec != codec.None {
				t.Fatalf("page %d with %q: image codec %v", id, cname, img.Codec)
			}
			got, err := s.ReadImage(id, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Codec != img.Codec || !bytes.Equal(got.Data, img.Data) {
				t.Fatalf("page %d: ReadImage differs from the image WritePageImage returned", id)
			}
			want[id] = Image{Codec: img.Codec, Data: bytes.Clone(img.Data)}
			dec := make([]byte, testPageSize)
			if err := codec.Decompress(img.Codec, dec, img.Data); err != nil || !bytes.Equal(dec, page) {
				t.Fatalf("page %d: image does not decompress to the page (%v)", id, err)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open("db", testOptions(fs, mustCodec(t, "snappy")))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for id, w := range want {
		got, err := s.ReadImage(id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Codec != w.Codec || !bytes.Equal(got.Data, w.Data) {
			t.Fatalf("reopened: page %d image differs", id)
		}
	}
	if _, err := s.WritePageImage(1, make([]byte, 100), nil, nil); !errors.Is(err, ErrPageSize) {
		t.Fatalf("short page: %v", err)
	}
}

package pagestore

import (
	"testing"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/vfs"
)

// TestCodecStatsCountWhatIsStored: a page the codec could not shrink is
// stored raw and counted as such; the codec's in/out bytes (its ratio) come
// only from the pages it stores compressed.
func TestCodecStatsCountWhatIsStored(t *testing.T) {
	s, err := Open("db", testOptions(vfs.NewMem(), mustCodec(t, "lz4")))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for id := PageID(1); id <= 10; id++ {
		ver := 0 // incompressible
		if id > 6 {
			ver = 2 // compressible digits
		}
		if _, err := s.Allocate(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.WritePage(id, pageContent(id, ver, testPageSize)); err != nil {
			t.Fatal(err)
		}
	}
	var lz CodecStats
	for _, cs := range s.Stats().Codecs {
		if cs.Codec == codec.LZ4 {
			lz = cs
		}
	}
	if lz.Compressions != 10 || lz.StoredRaw != 6 {
		t.Fatalf("lz4: %d compressions, %d stored raw; want 10 and 6", lz.Compressions, lz.StoredRaw)
	}
	if lz.CompressedIn != 4*testPageSize || lz.CompressedOut <= 0 || lz.CompressedOut >= lz.CompressedIn {
		t.Fatalf("lz4 in/out: %d/%d, want the 4 compressed pages only", lz.CompressedIn, lz.CompressedOut)
	}
}

package server

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/tidwall/redcon"
)

// FuzzRequestReader checks the request reader, the one decoder of network
// bytes this package has: it never panics; the commands and the verdict
// are the same whether the bytes come at once or in chunks of any size,
// as an authenticated client and (with the tighter limits) as one that is
// not; its buffer stays within twice what came plus its first size; and a
// command it made, encoded again as a multibulk frame, parses into itself.
// (TestReaderMatchesRedcon compares it with redcon's reader.)
func FuzzRequestReader(f *testing.F) {
	f.Add([]byte("*1\r\n$4\r\nPING\r\n"), uint8(3))
	f.Add([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), uint8(1))
	f.Add([]byte("PING\r\nGET a\r\n"), uint8(2))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$99999999999999\r\n"), uint8(7))
	f.Add([]byte("*-1\r\n*0\r\n"), uint8(0))
	f.Add([]byte("*1\r\n$0\r\n\r\n"), uint8(5))
	f.Add([]byte("SET \"a\\x41\" 'b\\'c'\r\n\r\n  \n"), uint8(4))
	limits := Limits{MaxBulkLen: 1 << 10, MaxMultibulkLen: 16, MaxCommandBytes: 4 << 10, MaxInlineLen: 256}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		step := int(chunk)%17 + 1
		for _, unauth := range []bool{false, true} {
			whole := newRequestReader(bytes.NewReader(data), limits, func() bool { return unauth })
			cmdsWhole, errWhole := readAll(whole, nil)
			chunked := newRequestReader(&chunkReader{data: data, next: func() int { return step }}, limits, func() bool { return unauth })
			cmdsChunked, errChunked := readAll(chunked, nil)
			if fmt.Sprintf("%q %v", cmdsWhole, errWhole) != fmt.Sprintf("%q %v", cmdsChunked, errChunked) {
				t.Fatalf("whole: %q %v\nin chunks of %d: %q %v", cmdsWhole, errWhole, step, cmdsChunked, errChunked)
			}
			if errWhole != nil && !errors.As(errWhole, new(*protocolError)) {
				t.Fatalf("an error that is no protocol violation: %v", errWhole)
			}
			if c := cap(chunked.buf); c > 2*len(data)+initialReadBuffer {
				t.Fatalf("a buffer of %d bytes for %d bytes of input", c, len(data))
			}
			// Each command, sent again as one multibulk frame, parses into
			// itself.
			for _, c := range cmdsWhole {
				frame := redcon.AppendArray(nil, len(c))
				for _, a := range c {
					frame = redcon.AppendBulk(frame, a)
				}
				again, err := readAll(newRequestReader(bytes.NewReader(frame), Limits{}, func() bool { return false }), nil)
				if err != nil || fmt.Sprintf("%q", again) != fmt.Sprintf("%q", [][][]byte{c}) {
					t.Fatalf("%q sent again parsed into %q, %v", c, again, err)
				}
			}
		}
	})
}

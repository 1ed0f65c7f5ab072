package server

import (
	"bytes"
	"io"
	"testing"

	"github.com/tidwall/redcon"
)

// FuzzFrameLimiter checks the framing limiter, the one decoder of network
// bytes this package has: it never panics; whole and chunked scans agree;
// after a violation it accepts nothing more; and the bytes it accepts,
// when they end on a frame boundary and hold only multibulk frames, are
// parsed by redcon into exactly the frames it counted, with no error.
func FuzzFrameLimiter(f *testing.F) {
	f.Add([]byte("*1\r\n$4\r\nPING\r\n"), uint8(3))
	f.Add([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), uint8(1))
	f.Add([]byte("PING\r\nGET a\r\n"), uint8(2))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$99999999999999\r\n"), uint8(7))
	f.Add([]byte("*-1\r\n"), uint8(0))
	f.Add([]byte("*1\r\n$0\r\n\r\n"), uint8(5))
	limits := Limits{MaxBulkLen: 1 << 10, MaxMultibulkLen: 16, MaxCommandBytes: 4 << 10, MaxInlineLen: 256}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		whole := newFrameLimiter(limits, func() bool { return false })
		okWhole, errWhole := whole.scan(data)
		if okWhole < 0 || okWhole > len(data) {
			t.Fatalf("accepted %d of %d bytes", okWhole, len(data))
		}
		// Chunked, one frame boundary at a time, counting frames.
		step := int(chunk)%17 + 1
		f2 := newFrameLimiter(limits, func() bool { return false })
		accepted, frames, inline := 0, 0, 0
		var errChunked *protocolError
		for off := 0; off < len(data) && errChunked == nil; off += step {
			p := data[off:min(off+step, len(data))]
			for i := range p {
				before := f2.state
				ok, err := f2.scan(p[i : i+1])
				if err != nil {
					if ok != 0 {
						t.Fatalf("a one-byte scan accepted %d bytes and failed", ok)
					}
					errChunked = err
					break
				}
				accepted++
				if before == stStart && f2.state == stInline || before == stStart && data[accepted-1] != '*' {
					inline++
				}
				if f2.state == stStart && before != stStart {
					frames++
				}
			}
		}
		if (errWhole == nil) != (errChunked == nil) || (errWhole != nil && errWhole.msg != errChunked.msg) {
			t.Fatalf("whole scan: %v, chunked: %v", errWhole, errChunked)
		}
		if errWhole != nil {
			if ok, err := whole.scan([]byte("*1\r\n$4\r\nPING\r\n")); ok != 0 || err == nil {
				t.Fatal("the limiter accepted bytes after a violation")
			}
		}
		// Before AUTH the limiter stops after each frame that makes a
		// command: scanning on from each stop never stalls (a stop hands
		// on at least one byte), and ends where a scan byte by byte does,
		// with the same verdict.
		unauth := func() bool { return true }
		u1, off := newFrameLimiter(limits, unauth), 0
		var errStops *protocolError
		for off < len(data) {
			ok, err := u1.scan(data[off:])
			off += ok
			if err != nil {
				errStops = err
				break
			}
			if ok <= 0 {
				t.Fatalf("a scan before AUTH handed on %d bytes at %d of %d", ok, off, len(data))
			}
		}
		u2 := newFrameLimiter(limits, unauth)
		var errBytes *protocolError
		for i := range data {
			if _, err := u2.scan(data[i : i+1]); err != nil {
				errBytes = err
				break
			}
		}
		if (errStops == nil) != (errBytes == nil) || (errStops != nil && errStops.msg != errBytes.msg) {
			t.Fatalf("before AUTH, scans from each stop: %v, byte by byte: %v", errStops, errBytes)
		}
		// The accepted prefix up to the last frame boundary, as redcon reads it.
		end := accepted
		if f2.state != stStart {
			return // ends inside a frame: redcon would wait for more
		}
		if inline > 0 || end == 0 {
			return // inline parsing (quotes) is redcon's alone
		}
		rd := redcon.NewReader(bytes.NewReader(data[:end]))
		n := 0
		for {
			_, err := rd.ReadCommand()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("redcon failed on bytes the limiter accepted (%d frames): %v\n%q", frames, err, data[:end])
			}
			n++
		}
		if n != frames {
			t.Fatalf("redcon read %d commands, the limiter counted %d frames\n%q", n, frames, data[:end])
		}
	})
}

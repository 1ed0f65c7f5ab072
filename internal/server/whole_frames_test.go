package server

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
)

// dripConn is a client connection whose every read returns one byte.
type dripConn struct {
	net.Conn
	data []byte
}

func (d *dripConn) Read(p []byte) (int, error) {
	if len(d.data) == 0 {
		return 0, io.EOF
	}
	p[0] = d.data[0]
	d.data = d.data[1:]
	return 1, nil
}

// TestReadReturnsWholeFrames: from a client whose bytes come one at a time
// (a drip), netConn.Read hands redcon whole frames, each read at least one
// that makes a command, blank lines only with one: redcon's reader reads
// again one stack frame deeper whenever a read brings no whole command,
// so a drip grew the goroutine's stack by a frame a byte. Before AUTH a
// read holds one command; after, as many as have come. A frame larger than
// the buffer is handed on in parts, and nothing is lost or reordered.
func TestReadReturnsWholeFrames(t *testing.T) {
	frames := []string{
		"PING\r\n", "\r\n", "\n", "AUTH pw\r\n", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n",
		"GET k\r\n", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "SET big " + strings.Repeat("v", 300) + "\r\n", "PING\r\n",
	}
	in := strings.Join(frames, "")
	authed := false
	c := &netConn{Conn: &dripConn{data: []byte(in)}}
	c.lim = newFrameLimiter(Limits{}, func() bool { return !authed })
	var out []byte
	p := make([]byte, 64)
	for {
		n, err := c.Read(p)
		got := string(p[:n])
		out = append(out, got...)
		if err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
		if n == 0 {
			t.Fatal("a read returned nothing and no error")
		}
		if strings.Contains(got, "AUTH pw") {
			authed = true
		}
		// Whole frames unless the buffer is full (the 300-byte SET).
		if n < len(p) && !endsFrame(out) {
			t.Fatalf("a read of %d bytes ends inside a frame: %q", n, got)
		}
	}
	if !bytes.Equal(out, []byte(in)) {
		t.Fatalf("read %q, sent %q", out, in)
	}
}

// endsFrame reports whether b, a stream of frames from the start, ends on
// a frame boundary (b ends with LF and a fresh limiter ends at a boundary).
func endsFrame(b []byte) bool {
	f := newFrameLimiter(Limits{}, func() bool { return false })
	ok, err := f.scan(b)
	return err == nil && ok == len(b) && f.atBoundary()
}

package server

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestSlowReaderOfLargeReplyServed: a client that reads a reply larger
// than the socket buffers at a steady 4 MiB/s gets all of it, although
// the whole write takes more than twice OutputTimeout: the timeout drops a
// client that takes nothing for that long, not one that is slow. (One
// deadline over the whole 15 MiB write dropped it.) The kernel wakes a
// writer blocked on a full socket once a third of its send buffer is free
// (about 1.3 MiB here, a third of a second of reading).
func TestSlowReaderOfLargeReplyServed(t *testing.T) {
	const timeout = 1500 * time.Millisecond
	ts := startServer(t, Config{OutputTimeout: timeout})
	value := strings.Repeat("v", 15<<20)
	if err := ts.client().Set(bg, "big", value, 0).Err(); err != nil {
		t.Fatal(err)
	}
	r := ts.raw()
	// A receive buffer of its own (the kernel's would grow to hold the
	// whole reply): with the server's send buffer (4 MiB at most) about
	// 10.5 MiB of the reply must wait for the reads.
	if tc, ok := r.c.(interface{ SetReadBuffer(int) error }); ok {
		tc.SetReadBuffer(256 << 10)
	}
	r.send("GET big\r\n")
	r.expect("$15728640")
	buf := make([]byte, 64<<10)
	got := 0
	for got < len(value)+2 {
		time.Sleep(15 * time.Millisecond) // 64 KiB each: about 4 MiB/s
		r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := io.ReadFull(r.br, buf[:min(len(buf), len(value)+2-got)])
		got += n
		if err != nil {
			t.Fatalf("after %d of %d bytes: %v", got, len(value)+2, err)
		}
	}
	r.send("PING\r\n")
	r.expect("+PONG")
}

package server

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestMaxClients(t *testing.T) {
	ts := startServer(t, Config{MaxClients: 2})
	a, b := ts.raw(), ts.raw()
	for _, r := range []*raw{a, b} {
		r.send("PING\r\n")
		r.expect("+PONG")
	}
	c := ts.raw()
	c.expect("-ERR max number of clients reached")
	if !c.closed(2 * time.Second) {
		t.Fatal("refused connection left open")
	}
	a.c.Close()
	deadline := time.Now().Add(2 * time.Second)
	for ts.srv.Clients() > 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	d := ts.raw()
	d.send("PING\r\n")
	d.expect("+PONG")
	if got := ts.srv.rejectedConns.Load(); got != 1 {
		t.Fatalf("rejected connections = %d", got)
	}
}

func TestIdleTimeout(t *testing.T) {
	ts := startServer(t, Config{IdleTimeout: 300 * time.Millisecond})
	idle, busy := ts.raw(), ts.raw()
	idle.send("PING\r\n")
	idle.expect("+PONG")
	start := time.Now()
	for time.Since(start) < 900*time.Millisecond {
		busy.send("PING\r\n")
		busy.expect("+PONG")
		time.Sleep(50 * time.Millisecond)
	}
	if !idle.closed(time.Second) {
		t.Fatal("idle connection still open")
	}
	busy.send("PING\r\n")
	busy.expect("+PONG")
}

// TestProtocolLimits: each violation gets Redis's error text and closes
// the connection; commands before it in the same write run first.
func TestProtocolLimits(t *testing.T) {
	ts := startServer(t, Config{Limits: Limits{MaxBulkLen: 1000, MaxMultibulkLen: 10, MaxCommandBytes: 8000, MaxInlineLen: 1000}})
	cases := []struct {
		name, send, want string
	}{
		{"bulk over the limit", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1001\r\n", "-ERR Protocol error: invalid bulk length"},
		{"huge bulk length", "*2\r\n$3\r\nGET\r\n$99999999999999999999\r\n", "-ERR Protocol error: invalid bulk length"},
		{"negative bulk length", "*2\r\n$3\r\nGET\r\n$-5\r\n", "-ERR Protocol error: invalid bulk length"},
		{"bulk not a number", "*2\r\n$3\r\nGET\r\n$abc\r\n", "-ERR Protocol error: invalid bulk length"},
		{"bulk without CRLF after data", "*1\r\n$4\r\nPINGxx", "-ERR Protocol error: invalid bulk length"},
		{"multibulk over the limit", "*11\r\n", "-ERR Protocol error: invalid multibulk length"},
		{"huge multibulk", "*9223372036854775807\r\n", "-ERR Protocol error: invalid multibulk length"},
		{"multibulk without CR", "*1\n", "-ERR Protocol error: invalid multibulk length"},
		{"endless length line", "*" + strings.Repeat("1", 40), "-ERR Protocol error: invalid multibulk length"},
		{"not a bulk", "*1\r\n:5\r\n", "-ERR Protocol error: expected '$', got ':'"},
		{"command over the limit", "*9\r\n$4\r\nMSET\r\n" + strings.Repeat("$1000\r\n"+strings.Repeat("x", 1000)+"\r\n", 8), "-ERR Protocol error: command exceeds the query buffer limit"},
		{"inline line over the limit", strings.Repeat("x", 1500), "-ERR Protocol error: too big inline request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.raw()
			r.send("PING\r\n" + tc.send)
			r.expect("+PONG")
			r.expect(tc.want)
			if !r.closed(2 * time.Second) {
				t.Fatal("connection left open")
			}
		})
	}
	// Within the limits all is well; an empty multibulk is no command, as
	// in Redis.
	r := ts.raw()
	r.send("*0\r\n*-1\r\nPING\r\n")
	r.expect("+PONG")
	r.send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1000\r\n" + strings.Repeat("v", 1000) + "\r\n")
	r.expect("+OK")
}

func TestUnauthenticatedLimits(t *testing.T) {
	ts := startServer(t, Config{Password: "pw"})
	r := ts.raw()
	r.send("*11\r\n")
	r.expect("-ERR Protocol error: unauthenticated multibulk length")
	r = ts.raw()
	r.send("*2\r\n$4\r\nAUTH\r\n$20000\r\n")
	r.expect("-ERR Protocol error: unauthenticated bulk length")
	// After AUTH the normal limits apply.
	r = ts.raw()
	r.send("*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n")
	r.expect("+OK")
	r.send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$20000\r\n" + strings.Repeat("v", 20000) + "\r\n")
	r.expect("+OK")
}

// TestSlowReader: a client that pipelines GETs of a large value and never
// reads the replies holds at most about MaxOutputBuffer plus one value of
// server memory, is disconnected after OutputTimeout, and does not slow
// other clients down.
func TestSlowReader(t *testing.T) {
	ts := startServer(t, Config{MaxOutputBuffer: 64 << 10, OutputTimeout: 3 * time.Second})
	c := ts.client()
	value := strings.Repeat("v", 1<<20)
	if err := c.Set(bg, "big", value, 0).Err(); err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	slow := ts.raw()
	// Shrink the slow client's receive buffer so the kernel holds little.
	if tc, ok := slow.c.(interface{ SetReadBuffer(int) error }); ok {
		tc.SetReadBuffer(4096)
	}
	slow.send(strings.Repeat("*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n", 300)) // 300 MiB of replies
	time.Sleep(time.Second)
	// Others are served meanwhile.
	for i := 0; i < 20; i++ {
		if v := c.Get(bg, "big").Val(); len(v) != len(value) {
			t.Fatal("other client's GET failed")
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if grown := int64(ms.HeapAlloc) - int64(before); grown > 32<<20 {
		t.Fatalf("heap grew by %d MiB for a client that does not read", grown>>20)
	}
	if !slow.closedWithoutReading(6 * time.Second) {
		t.Fatal("the slow reader was not disconnected")
	}
}

// closedWithoutReading waits (without reading, so the client stays slow)
// until the server has closed the connection: a write then fails.
func (r *raw) closedWithoutReading(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		r.c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := r.c.Write([]byte("PING\r\n")); err != nil && !strings.Contains(err.Error(), "timeout") {
			return true
		}
	}
	return false
}

var _ = fmt.Sprint

// TestPipelinedAuth: AUTH pipelined with commands over the
// unauthenticated limits, in one write, authenticates before they are
// judged: they run under the normal limits, as in Redis, which judges each
// command once the one before it ran. A wrong password pipelined so still
// meets the unauthenticated limits.
func TestPipelinedAuth(t *testing.T) {
	ts := startServer(t, Config{Password: "pw"})
	mset := "*13\r\n$4\r\nMSET\r\n" + strings.Repeat("$1\r\nk\r\n$1\r\nv\r\n", 6)
	big := "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$20000\r\n" + strings.Repeat("v", 20000) + "\r\n"
	r := ts.raw()
	r.send("AUTH pw\r\n" + mset + big + "STRLEN big\r\n")
	r.expect("+OK")
	r.expect("+OK")
	r.expect("+OK")
	r.expect(":20000")

	r = ts.raw()
	r.send("AUTH wrong\r\n" + mset)
	r.expect("-WRONGPASS invalid username-password pair or user is disabled.")
	r.expect("-ERR Protocol error: unauthenticated multibulk length")
	if !r.closed(2 * time.Second) {
		t.Fatal("connection left open")
	}
}

// TestBlankLinesBeforeAuth: blank lines before AUTH are no command; 8 MiB
// of them are skipped in a loop. (With redcon's reader, which read again
// one stack frame deeper whenever a read made no command, 8 MiB of them
// each in a read of its own exhausted the goroutine's stack and ended the
// process.)
func TestBlankLinesBeforeAuth(t *testing.T) {
	ts := startServer(t, Config{Password: "pw"})
	r := ts.raw()
	r.c.SetWriteDeadline(time.Now().Add(time.Minute)) // 8 MiB, under the race detector
	if _, err := r.c.Write([]byte(strings.Repeat("\n", 8<<20) + strings.Repeat(" \r\n", 1000) + "AUTH pw\r\nPING\r\n")); err != nil {
		t.Fatal(err)
	}
	r.expect("+OK")
	r.expect("+PONG")
}

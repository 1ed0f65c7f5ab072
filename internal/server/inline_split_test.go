package server

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/redcon"
)

// TestInlineSplitCountsRedconsAllocation: inlineSplit's count of what
// redcon allocates to split an inline line is that allocation, within the
// allocator's rounding, on lines whose splitting allocates much (many spaces, quoted
// arguments with spaces and escapes inside): the bound the limiter keeps
// is the one that matters.
func TestInlineSplitCountsRedconsAllocation(t *testing.T) {
	lines := []string{
		strings.Repeat(" ", 3000),
		strings.Repeat("a ", 1500),
		"SET k \"" + strings.Repeat("x y ", 1000) + "\"" + strings.Repeat(" z", 500),
		strings.Repeat("'a\\' b' ", 400),
	}
	for _, line := range lines {
		var s inlineSplit
		s.add([]byte(line + "\r"))
		want := s.allocated()
		got := redconSplitBytes(t, line)
		// Besides: the allocator's size classes (up to an eighth more),
		// the reader's own buffers and the argument slices.
		if float64(got) < 0.9*float64(want) || float64(got) > 1.25*float64(want)+64<<10 {
			t.Errorf("line %.30q… (%d bytes): counted %d bytes, redcon allocated %d", line, len(line), want, got)
		}
	}
}

// redconSplitBytes is what redcon allocates to read line as an inline
// command.
func redconSplitBytes(t *testing.T, line string) int64 {
	t.Helper()
	in := []byte(line + "\r\n")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rd := redcon.NewReader(bytes.NewReader(in))
	if _, err := rd.ReadCommands(); err != nil && err != io.EOF { // EOF: a blank line makes no command
		t.Fatalf("redcon: %v", err)
	}
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc)
}

// TestInlineLineOfSpacesRefused: a line redcon would take gigabytes to
// split (64 KiB of spaces: about 2 GiB) is refused with a protocol error
// once what it would allocate passes maxInlineSplitBytes, before AUTH,
// and the connection is closed; the commands before it ran. An inline
// line with many arguments that costs less is served.
func TestInlineLineOfSpacesRefused(t *testing.T) {
	ts := startServer(t, Config{Password: "pw"})
	r := ts.raw()
	r.send("PING\r\n" + strings.Repeat(" ", 60000) + "\r\n")
	r.expect("-NOAUTH Authentication required.")
	r.expect("-ERR Protocol error: too many arguments in inline request")
	if !r.closed(2 * time.Second) {
		t.Fatal("connection left open")
	}
	r = ts.raw()
	r.send("AUTH pw\r\nDEL" + strings.Repeat(" a", 1000) + "\r\nPING\r\n")
	r.expect("+OK")
	r.expect(":0")
	r.expect("+PONG")
}

package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/redcon"
)

// chunkReader hands out data in reads of the sizes next gives.
type chunkReader struct {
	data []byte
	next func() int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), max(1, c.next()))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// readAll parses every command from rd's source until it ends; it returns
// the commands (copied), and the error that ended them (nil at EOF).
func readAll(rd *requestReader, each func([][]byte)) ([][][]byte, error) {
	var cmds [][][]byte
	for {
		for {
			args, err := rd.next()
			if err != nil {
				return cmds, err
			}
			if args == nil {
				break
			}
			cp := make([][]byte, len(args))
			for i, a := range args {
				cp[i] = bytes.Clone(a)
			}
			cmds = append(cmds, cp)
			if each != nil {
				each(args)
			}
		}
		if err := rd.fill(); err != nil {
			if err == io.EOF {
				return cmds, nil
			}
			return cmds, err
		}
	}
}

// TestDripParsesEveryCommand: bytes that come one at a time (a client
// dripping them) are parsed into the same commands, in order, as when they
// come at once; before AUTH each command is judged after the one before it
// ran (the SET after AUTH is over the unauthenticated limits); blank lines
// are no command. The parser loops where redcon's reader recursed once a
// read (a drip grew the goroutine's stack to Go's 1 GB limit).
func TestDripParsesEveryCommand(t *testing.T) {
	frames := []string{
		"PING\r\n", "\r\n", "\n", "AUTH pw\r\n", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n",
		"GET k\r\n", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "SET big " + strings.Repeat("v", 300) + "\r\n",
		"*12\r\n$4\r\nMSET\r\n" + strings.Repeat("$1\r\na\r\n", 11), "PING\r\n",
	}
	in := []byte(strings.Join(frames, ""))
	want := [][]string{{"PING"}, {"AUTH", "pw"}, {"SET", "k", "value"}, {"GET", "k"}, {"GET", "k"},
		{"SET", "big", strings.Repeat("v", 300)}, append([]string{"MSET"}, strings.Split(strings.Repeat("a", 11), "")...), {"PING"}}
	authed := false
	rd := newRequestReader(&chunkReader{data: in, next: func() int { return 1 }}, Limits{}, func() bool { return !authed })
	cmds, err := readAll(rd, func(args [][]byte) {
		if string(args[0]) == "AUTH" {
			authed = true
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%q", cmds); got != fmt.Sprintf("%q", want) {
		t.Fatalf("parsed %s\nwant   %q", got, want)
	}
	if cap(rd.buf) > initialReadBuffer {
		t.Fatalf("read buffer grew to %d bytes for commands of at most 400", cap(rd.buf))
	}
}

// TestReaderMatchesRedcon: valid pipelines (multibulk frames and inline
// lines without quotes) in random chunks parse into the commands redcon's
// reader makes of them whole.
func TestReaderMatchesRedcon(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		var in []byte
		for n := 1 + rng.IntN(10); n > 0; n-- {
			if rng.IntN(4) == 0 {
				in = fmt.Appendf(in, "PING %d\r\n", rng.IntN(100))
				continue
			}
			args := 1 + rng.IntN(4)
			in = fmt.Appendf(in, "*%d\r\n", args)
			for a := 0; a < args; a++ {
				arg := bytes.Repeat([]byte{byte('a' + a)}, rng.IntN(300))
				in = fmt.Appendf(in, "$%d\r\n%s\r\n", len(arg), arg)
			}
		}
		rd := newRequestReader(&chunkReader{data: in, next: func() int { return 1 + rng.IntN(64) }}, Limits{}, func() bool { return false })
		got, err := readAll(rd, nil)
		if err != nil {
			t.Fatalf("valid input refused: %v\n%q", err, in)
		}
		var want [][][]byte
		rr := redcon.NewReader(bytes.NewReader(in))
		for {
			c, err := rr.ReadCommand()
			if err != nil {
				break
			}
			want = append(want, c.Args)
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Fatalf("parsed %q\nredcon %q", got, want)
		}
	}
}

// TestStreamingClientBufferBounded: a client that streams commands without
// a pause, each read ending inside a frame, keeps the read buffer at its
// first size: the bytes of the commands run are dropped before each read.
// redcon's reader doubled its buffer whenever it was full with a partial
// command and never moved the rest to the front, so such a stream grew it
// without bound (after 64 MiB of 1 KiB SETs, 268 MiB of heap was in use).
func TestStreamingClientBufferBounded(t *testing.T) {
	frame := []byte("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$1000\r\n" + strings.Repeat("v", 1000) + "\r\n")
	const total = 64 << 20
	src := &endlessReader{frame: frame, left: total}
	rd := newRequestReader(src, Limits{}, func() bool { return false })
	n := 0
	maxCap := 0
	for {
		for {
			args, err := rd.next()
			if err != nil {
				t.Fatal(err)
			}
			if args == nil {
				break
			}
			n++
		}
		maxCap = max(maxCap, cap(rd.buf))
		if err := rd.fill(); err != nil {
			break
		}
	}
	if want := total / len(frame); n != want {
		t.Fatalf("parsed %d commands, sent %d", n, want)
	}
	if maxCap > initialReadBuffer {
		t.Fatalf("read buffer reached %d bytes streaming commands of %d", maxCap, len(frame))
	}
}

// endlessReader serves copies of frame, left bytes in all, each read
// filling p and so (p being no multiple of the frame) ending mid-frame.
type endlessReader struct {
	frame []byte
	off   int
	left  int
}

func (e *endlessReader) Read(p []byte) (int, error) {
	if e.left == 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && e.left > 0 {
		c := copy(p[n:min(len(p), n+e.left)], e.frame[e.off:])
		n += c
		e.left -= c
		e.off = (e.off + c) % len(e.frame)
	}
	return n, nil
}

// TestLargeCommandBufferGivenBack: the buffer grown for an 8 MiB SET (to
// about twice what had come of it, never to what the length declared) is
// given back once the command ran and nothing is buffered.
func TestLargeCommandBufferGivenBack(t *testing.T) {
	value := strings.Repeat("v", 8<<20)
	in := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + strconv.Itoa(len(value)) + "\r\n" + value + "\r\nPING\r\n"
	rd := newRequestReader(&chunkReader{data: []byte(in), next: func() int { return 64 << 10 }}, Limits{}, func() bool { return false })
	var grown int
	cmds, err := readAll(rd, func(args [][]byte) {
		if string(args[0]) == "SET" {
			grown = cap(rd.buf)
		}
	})
	if err != nil || len(cmds) != 2 || len(cmds[0][2]) != len(value) {
		t.Fatalf("%d commands, %v", len(cmds), err)
	}
	if grown < len(value) || grown > 2*len(in) {
		t.Fatalf("buffer of %d bytes for a command of %d", grown, len(in))
	}
	if cap(rd.buf) > initialReadBuffer {
		t.Fatalf("a %d-byte buffer kept after the command ran", cap(rd.buf))
	}
	// A declared length alone grows nothing.
	rd = newRequestReader(strings.NewReader("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$16000000\r\nabc"), Limits{}, func() bool { return false })
	if _, err := readAll(rd, nil); err != nil {
		t.Fatal(err)
	}
	if cap(rd.buf) > initialReadBuffer {
		t.Fatalf("a declared length grew the buffer to %d", cap(rd.buf))
	}
}

// TestInlineSplitLikeRedis: inline lines split as Redis's sdssplitargs
// splits them (quotes, escapes, blanks), and unbalanced quotes are a
// protocol error.
func TestInlineSplitLikeRedis(t *testing.T) {
	cases := []struct {
		line string
		want []string // nil: unbalanced quotes
	}{
		{"SET k v", []string{"SET", "k", "v"}},
		{"  SET\tk  v \r", []string{"SET", "k", "v"}},
		{`SET "a b" 'c d'`, []string{"SET", "a b", "c d"}},
		{`SET k "\x41\n\t\\\"x"`, []string{"SET", "k", "A\n\t\\\"x"}},
		{`SET k "\xZZ"`, []string{"SET", "k", "xZZ"}},
		{`SET k 'it\'s'`, []string{"SET", "k", "it's"}},
		{`SET k 'a\b'`, []string{"SET", "k", `a\b`}},
		{`SET k ""`, []string{"SET", "k", ""}},
		{`SET ab"c d"e`, nil},
		{`SET ab"c d"`, []string{"SET", "abc d"}},
		{`SET "k`, nil},
		{`SET 'k`, nil},
		{`SET "k\"`, nil},
		{`SET "k"v`, nil},
		{"   ", []string{}},
		{"SET a\vb c", []string{"SET", "a\vb", "c"}},
		{"\v\fGET k", []string{"GET", "k"}},
		{"GET k\x00junk", []string{"GET", "k"}},
		{"SET \"a\x00b\"", nil},
		{"SET \"a\"\vb", []string{"SET", "a", "b"}},
	}
	for _, tc := range cases {
		rd := newRequestReader(nil, Limits{}, func() bool { return false })
		args, ok := rd.splitInline([]byte(tc.line))
		if tc.want == nil {
			if ok {
				t.Errorf("%q: split into %q, want unbalanced quotes", tc.line, args)
			}
			continue
		}
		got := make([]string, len(args))
		for i, a := range args {
			got[i] = string(a)
		}
		if !ok || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
			t.Errorf("%q: split into %q (%v), want %q", tc.line, got, ok, tc.want)
		}
	}
}

// TestInlineSplitAllocatesOnce: splitting a 64 KiB inline line costs one
// buffer the line's size, however many arguments it has (redcon's
// splitter allocated the rest of the line at every space: about 2 GiB for
// 64 KiB of spaces, which the server had to refuse).
func TestInlineSplitAllocatesOnce(t *testing.T) {
	for _, line := range []string{strings.Repeat(" ", 64<<10-2), strings.Repeat("a ", 32<<10-1), strings.Repeat(`"" `, 20000)} {
		rd := newRequestReader(nil, Limits{}, func() bool { return false })
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		args, ok := rd.splitInline([]byte(line))
		runtime.ReadMemStats(&after)
		if !ok {
			t.Fatalf("%.20q…: unbalanced", line)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
			t.Errorf("%.20q… (%d bytes, %d arguments): allocated %d bytes", line, len(line), len(args), got)
		}
	}
}

// TestBrokenFramesRefused: each grammar or limit violation is reported by
// next, with Redis's text, after the commands before it; next then keeps
// returning it.
func TestBrokenFramesRefused(t *testing.T) {
	limits := Limits{MaxBulkLen: 1000, MaxMultibulkLen: 10, MaxCommandBytes: 8000, MaxInlineLen: 1000}
	cases := []struct{ in, want string }{
		{"*1\r\n$4\r\nPINGxx", "invalid bulk length"},
		{"*1\r\n:5\r\n", "expected '$', got ':'"},
		{"*1\n", "invalid multibulk length"},
		{"*" + strings.Repeat("1", 40), "invalid multibulk length"},
		{"*1\r\n$" + strings.Repeat("1", 40), "invalid bulk length"},
		{"*2\r\n$3\r\nGET\r\n$1001\r\n", "invalid bulk length"},
		{"*11\r\n", "invalid multibulk length"},
		{strings.Repeat("x", 1001), "too big inline request"},
		{"SET \"a\r\n", "unbalanced quotes in request"},
		{"*9\r\n$4\r\nMSET\r\n" + strings.Repeat("$1000\r\n"+strings.Repeat("x", 1000)+"\r\n", 8), "command exceeds the query buffer limit"},
	}
	for _, tc := range cases {
		rd := newRequestReader(&chunkReader{data: []byte("PING\r\n" + tc.in), next: func() int { return 7 }}, limits, func() bool { return false })
		cmds, err := readAll(rd, nil)
		var pe *protocolError
		if len(cmds) != 1 || !errors.As(err, &pe) {
			t.Fatalf("%.30q: %d commands, error %v", tc.in, len(cmds), err)
		}
		if pe.msg != tc.want {
			t.Errorf("%.30q: %q, want %q", tc.in, pe.msg, tc.want)
		}
		if _, again := rd.next(); again != err {
			t.Errorf("%.30q: next after the violation returned %v", tc.in, again)
		}
	}
}

// TestIdleReaderKeepsNothingLarge: once the commands read have run and the
// reader waits for more, it holds no slice into a grown buffer (its
// argument slices pointed into the buffer of an 8 MiB command and kept it
// alive after the buffer itself was given back), no argument slices of a
// command of many, and no large inline scratch buffer: an idle
// connection, authenticated or not, costs its first read buffer.
func TestIdleReaderKeepsNothingLarge(t *testing.T) {
	big := strings.Repeat("v", 8<<20)
	for name, in := range map[string]string{
		"large argument":      "*2\r\n$4\r\nECHO\r\n$" + strconv.Itoa(len(big)) + "\r\n" + big + "\r\n",
		"many arguments":      "*5000\r\n$3\r\nDEL\r\n" + strings.Repeat("$1\r\nk\r\n", 4999),
		"long inline line":    "x" + strings.Repeat(" a", 32<<10-2) + "\r\n",
		"unauthenticated mix": "*10\r\n" + strings.Repeat("$16384\r\n"+strings.Repeat("x", 16384)+"\r\n", 10) + "y" + strings.Repeat(" b", 30000) + "\r\n",
	} {
		unauth := strings.HasPrefix(name, "unauth")
		rd := newRequestReader(&chunkReader{data: []byte(in), next: func() int { return 64 << 10 }}, Limits{}, func() bool { return unauth })
		if _, err := readAll(rd, nil); err != nil { // ends in fill, as an idle connection waits
			t.Fatalf("%s: %v", name, err)
		}
		for i, a := range rd.args[:cap(rd.args)] {
			if a != nil {
				t.Fatalf("%s: argument slice %d kept (%d bytes of capacity)", name, i, cap(a))
			}
		}
		if cap(rd.buf) > initialReadBuffer || cap(rd.args) > maxKeptArgs || cap(rd.marks) > 2*maxKeptArgs || cap(rd.inline) > maxKeptInline {
			t.Fatalf("%s: idle with a read buffer of %d, %d argument slices, %d marks, an inline buffer of %d",
				name, cap(rd.buf), cap(rd.args), cap(rd.marks), cap(rd.inline))
		}
	}
}

// readCounter counts the reads of its source.
type readCounter struct {
	chunkReader
	reads int
}

func (c *readCounter) Read(p []byte) (int, error) { c.reads++; return c.chunkReader.Read(p) }

// TestInlineLineWithinCommandLimit: an inline line is bounded by
// MaxCommandBytes as well as MaxInlineLen (a server configured with a
// query buffer limit under 64 KiB accepted 60 KiB lines, and its buffer
// then grew a byte a read: 44,000 reads and a gigabyte copied for one
// line).
func TestInlineLineWithinCommandLimit(t *testing.T) {
	src := &readCounter{chunkReader: chunkReader{data: []byte("GET " + strings.Repeat("a", 60<<10) + "\r\n"), next: func() int { return 1 << 30 }}}
	rd := newRequestReader(src, Limits{MaxCommandBytes: 1024}, func() bool { return false })
	_, err := readAll(rd, nil)
	var pe *protocolError
	if !errors.As(err, &pe) || pe.msg != "command exceeds the query buffer limit" || src.reads > 2 {
		t.Fatalf("%v after %d reads", err, src.reads)
	}
}

package server

// Reading requests: a connection's read buffer and its RESP2 request
// parser, which enforces the protocol limits (limit.go) as it goes.
//
// The grammar is Redis's:
//
//	multibulk: '*' count CRLF, then count × ('$' length CRLF, length bytes, CRLF)
//	inline:    any other first byte, up to LF (redis-cli's and telnet's form)
//
// A multibulk count of zero or less is an empty request, skipped; a blank
// inline line likewise. An inline line is split as Redis's sdssplitargs
// does (splitInline).
//
// The parser keeps its place in a frame across reads, so a frame that
// comes in many pieces is scanned once, and it parses one command at a
// time: the connection runs each before the next is parsed, so a command
// is judged with the authentication state the ones before it left (AUTH
// pipelined with a large command works) and a stream of blank lines or a
// byte-at-a-time drip costs a loop, not a deeper stack.
//
// Memory: the buffer holds the frame being parsed and the bytes read after
// it. It grows by doubling only while one frame does not fit, so it is at
// most twice what the client has sent of that frame (a frame is at most
// MaxCommandBytes), never what a length declares; the bytes of commands
// run are dropped before each read; and a buffer grown beyond its first
// size is given back when it is empty, or shrunk when what it holds is
// small (as are the slices of a command with many arguments). The
// arguments next returns are slices of the buffer (a multibulk frame's) or
// of a scratch buffer (an inline line's): valid until the next call of
// next or fill; a handler copies what it keeps.
//
// A requestReader belongs to one connection and is used only by the
// connection's goroutine; it needs no lock. The authentication flag it
// reads is set by that goroutine (AUTH runs on it).

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
)

const (
	// initialReadBuffer is a connection's read buffer when it reads (as
	// Redis's reads); one grown larger for a large command is given back
	// once it is empty, or shrunk once what it holds is small.
	initialReadBuffer = 16 << 10
	// maxKeptArgs bounds the argument slices a connection keeps from one
	// command to the next (a command of a million arguments has a 24 MB
	// slice of them), maxKeptInline the scratch buffer of inline lines.
	maxKeptArgs   = 1024
	maxKeptInline = 4 << 10
)

// Parser states.
const (
	stStart    = iota // before a frame
	stInline          // inside an inline command line
	stCount           // in the multibulk count line, after '*'
	stBulkHead        // expecting '$' of the next argument
	stBulkLen         // in a bulk length line, after '$'
	stBulkData        // in an argument's bytes (and its CRLF)
)

// maxLengthLine bounds a count or length line ("*" or "$" excluded): a
// 64-bit number with a sign, and CR.
const maxLengthLine = 21

// requestReader reads one connection's requests.
type requestReader struct {
	src    io.Reader
	limits Limits
	// unauth reports whether the client still has to authenticate: then
	// the tighter unauthenticated limits apply.
	unauth func() bool

	buf     []byte // buf[start:end]: bytes read and not yet consumed
	start   int    // where the frame being parsed begins
	end     int
	readErr error // the error of a read that also brought bytes, returned next

	// The frame being parsed; offsets are from start, so that moving the
	// bytes (fill) leaves them right.
	state     int
	scanned   int   // bytes of the frame parsed so far
	lineStart int   // where the count or length line's digits begin
	argsLeft  int64 // arguments of the multibulk still to come
	dataLeft  int64 // bytes of the current argument still to come, CRLF included
	marks     []int // each argument's start and end
	args      [][]byte
	inline    []byte // an inline line's arguments, split
	err       *protocolError
}

func newRequestReader(src io.Reader, l Limits, unauth func() bool) *requestReader {
	return &requestReader{src: src, limits: l.withDefaults(), unauth: unauth}
}

// next parses the next command in the buffer. It returns its arguments,
// none (nil, nil) if no whole command is buffered (fill reads more), or
// the violation that ends the connection; after a violation it returns
// that violation again.
func (r *requestReader) next() ([][]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		p := r.buf[r.start+r.scanned : r.end]
		if len(p) == 0 {
			return nil, nil
		}
		switch r.state {
		case stStart:
			if p[0] != '*' {
				r.state = stInline
				continue
			}
			r.state, r.scanned, r.lineStart = stCount, 1, 1
			r.marks = r.marks[:0]
		case stInline:
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				r.scanned += len(p)
			} else {
				r.scanned += i + 1
			}
			switch {
			case int64(r.scanned) > r.limits.MaxInlineLen:
				return nil, r.fail("too big inline request")
			case int64(r.scanned) > r.limits.MaxCommandBytes:
				return nil, r.fail("command exceeds the query buffer limit")
			case i < 0:
				return nil, nil
			}
			line := r.buf[r.start : r.start+r.scanned-1]
			line = bytes.TrimSuffix(line, []byte{'\r'})
			args, ok := r.splitInline(line)
			r.endFrame()
			if !ok {
				return nil, r.fail("unbalanced quotes in request")
			}
			if len(args) > 0 {
				return args, nil
			}
			// A blank line: no command.
		case stCount, stBulkLen:
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				r.scanned += len(p)
				if r.scanned-r.lineStart > maxLengthLine {
					return nil, r.fail(r.lengthError())
				}
				return nil, nil
			}
			line := r.buf[r.start+r.lineStart : r.start+r.scanned+i]
			r.scanned += i + 1
			n, valid := parseLength(line)
			if r.state == stCount {
				switch {
				case !valid || n > r.limits.MaxMultibulkLen:
					return nil, r.fail("invalid multibulk length")
				case n <= 0:
					r.endFrame() // an empty request, as Redis skips it
					continue
				case n > unauthMaxMultibulk && r.unauth():
					return nil, r.fail("unauthenticated multibulk length")
				}
				r.argsLeft, r.state = n, stBulkHead
				break
			}
			switch {
			case !valid || n < 0 || n > r.limits.MaxBulkLen:
				return nil, r.fail("invalid bulk length")
			case n > unauthMaxBulk && r.unauth():
				return nil, r.fail("unauthenticated bulk length")
			}
			r.marks = append(r.marks, r.scanned, r.scanned+int(n))
			r.dataLeft, r.state = n+2, stBulkData
		case stBulkHead:
			if p[0] != '$' {
				return nil, r.fail("expected '$', got '" + printable(p[0]) + "'")
			}
			r.scanned++
			r.lineStart, r.state = r.scanned, stBulkLen
		case stBulkData:
			if r.dataLeft > 2 {
				// The argument's bytes, as many as are here.
				step := int(min(int64(len(p)), r.dataLeft-2))
				r.scanned += step
				r.dataLeft -= int64(step)
				break
			}
			// Its CRLF.
			if want := "\r\n"[2-r.dataLeft]; p[0] != want {
				return nil, r.fail("invalid bulk length")
			}
			r.scanned++
			if r.dataLeft--; r.dataLeft > 0 {
				break
			}
			if r.argsLeft--; r.argsLeft > 0 {
				r.state = stBulkHead
				break
			}
			args := r.args[:0]
			for i := 0; i < len(r.marks); i += 2 {
				s, e := r.start+r.marks[i], r.start+r.marks[i+1]
				args = append(args, r.buf[s:e:e]) // capped: an append copies
			}
			r.args = args
			r.endFrame()
			return args, nil
		}
		if int64(r.scanned) > r.limits.MaxCommandBytes {
			return nil, r.fail("command exceeds the query buffer limit")
		}
	}
}

// endFrame consumes the frame parsed.
func (r *requestReader) endFrame() {
	r.start += r.scanned
	r.scanned, r.state = 0, stStart
}

// fill reads from the client once, as much as the buffer has room for
// after the consumed bytes are dropped (and the buffer grown if the frame
// being parsed fills it). A read that brings bytes and an error returns
// nil, the error at the next fill: the bytes are parsed first.
func (r *requestReader) fill() error {
	if r.readErr != nil {
		err := r.readErr
		r.readErr = nil
		return err
	}
	r.release()
	n := r.end - r.start
	switch {
	case n == 0 && cap(r.buf) > initialReadBuffer:
		r.buf = nil // grown for a large command: given back
	case r.start > 0 && cap(r.buf) > initialReadBuffer && 4*n <= cap(r.buf):
		nb := make([]byte, max(initialReadBuffer, 2*n))
		copy(nb, r.buf[r.start:r.end])
		r.buf = nb
	case r.start > 0:
		copy(r.buf, r.buf[r.start:r.end])
	}
	r.start, r.end = 0, n
	if r.buf == nil {
		r.buf = make([]byte, initialReadBuffer)
	}
	if r.end == len(r.buf) {
		// The frame being parsed fills the buffer (it is no larger than
		// MaxCommandBytes: next refused it otherwise).
		size := min(2*len(r.buf), int(r.limits.MaxCommandBytes)+initialReadBuffer)
		nb := make([]byte, max(size, len(r.buf)+initialReadBuffer))
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	m, err := r.src.Read(r.buf[r.end:])
	r.end += m
	if m > 0 && err != nil {
		r.readErr = err
		return nil
	}
	return err
}

// release drops what the commands run left (fill calls it before it
// reads, when no command's arguments are in use): the argument slices,
// which point into the read buffer and would keep a grown one alive, all
// of them if there are many; a large inline scratch buffer; and the
// argument marks of a command with many, unless a frame's are in use.
func (r *requestReader) release() {
	if cap(r.args) > maxKeptArgs {
		r.args = nil
	} else {
		clear(r.args[:cap(r.args)])
	}
	if cap(r.inline) > maxKeptInline {
		r.inline = nil
	}
	if cap(r.marks) > 2*maxKeptArgs && (r.state == stStart || r.state == stInline) {
		r.marks = nil
	}
}

// splitInline splits an inline line into arguments as Redis's
// sdssplitargs does: the line ends at its first NUL (a C string); blanks
// (isspace) between arguments; an unquoted argument ends at a space, tab,
// CR or LF; "..." with the escapes \n \r \t \b \a \xHH and \<any byte>;
// '...' with \' only; a closing quote must be followed by a blank or the
// line's end. ok is false for unbalanced quotes. The arguments are slices of r.inline, which has
// room for the whole line so that none moves while the line is split: one
// allocation at most per line, however many arguments it has.
func (r *requestReader) splitInline(line []byte) (args [][]byte, ok bool) {
	if cap(r.inline) < len(line) {
		r.inline = make([]byte, 0, max(len(line), 256))
	}
	if z := bytes.IndexByte(line, 0); z >= 0 {
		line = line[:z]
	}
	out := r.inline[:0]
	args = r.args[:0]
	i := 0
	for {
		for i < len(line) && isBlank(line[i]) {
			i++
		}
		if i == len(line) {
			r.args = args
			return args, true
		}
		argStart := len(out)
		var quote byte
	arg:
		for ; i < len(line); i++ {
			c := line[i]
			switch {
			case quote == '"' && c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
				out = append(out, unhex(line[i+2])<<4|unhex(line[i+3]))
				i += 3
			case quote == '"' && c == '\\' && i+1 < len(line):
				i++
				out = append(out, unescape(line[i]))
			case quote == '\'' && c == '\\' && i+1 < len(line) && line[i+1] == '\'':
				i++
				out = append(out, '\'')
			case quote != 0 && c == quote:
				if i+1 < len(line) && !isBlank(line[i+1]) {
					return nil, false
				}
				i++
				quote = 0
				break arg
			case quote != 0:
				out = append(out, c)
			case c == ' ' || c == '\t' || c == '\r' || c == '\n':
				break arg
			case c == '"' || c == '\'':
				quote = c
			default:
				out = append(out, c)
			}
		}
		if quote != 0 {
			return nil, false // the line ended inside quotes
		}
		args = append(args, out[argStart:len(out):len(out)])
	}
}

// isBlank is C's isspace, which sdssplitargs skips between arguments
// and wants after a closing quote.
func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

// parseLength parses a count or length line, which must end in CR: the
// digits (and sign) before it.
func parseLength(line []byte) (int64, bool) {
	if len(line) == 0 || line[len(line)-1] != '\r' || len(line) > maxLengthLine {
		return 0, false
	}
	n, err := strconv.ParseInt(string(line[:len(line)-1]), 10, 64)
	return n, err == nil
}

func (r *requestReader) lengthError() string {
	if r.state == stCount {
		return "invalid multibulk length"
	}
	return "invalid bulk length"
}

func (r *requestReader) fail(msg string) *protocolError {
	r.err = &protocolError{msg}
	return r.err
}

// printable renders one byte of a protocol error as Redis does (the byte
// itself; a control byte would garble the reply line, so it is escaped).
func printable(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("\\x%02x", c)
	}
	return string(c)
}

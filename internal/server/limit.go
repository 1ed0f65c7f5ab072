package server

// The framing limiter reads a connection's bytes before redcon's parser
// does and enforces the protocol limits that redcon does not have: redcon
// trusts a declared bulk or multibulk length and grows its buffer until the
// data arrives, so one client could make the server allocate without bound.
//
// It tracks RESP2 request framing byte by byte, the same grammar redcon
// parses:
//
//	multibulk: '*' count CRLF, then count × ('$' length CRLF, length bytes, CRLF)
//	inline:    any other first byte, up to LF (redis-cli's and telnet's form)
//
// and stops at the first frame that breaks a limit or the grammar. The
// bytes before that frame are handed on (their commands run, as in Redis);
// the connection then gets Redis's protocol error text and is closed.
//
// An inline line is bounded twice: by its length (MaxInlineLen, as Redis)
// and by what redcon allocates to split it (maxInlineSplitBytes). redcon's
// splitter starts a new buffer the size of the rest of the line at every
// space or quote outside quotes, so a 64 KiB line of spaces made it
// allocate about 2 GiB (N²/2 bytes), before AUTH. The limiter follows the
// splitter's quoting (inlineSplit) and counts those bytes as the line
// grows.
//
// A frameLimiter belongs to one connection and is used only by the
// goroutine reading it; it needs no lock. The authenticated flag it reads
// is set by that same goroutine (AUTH runs on it), so it needs none either.

import (
	"fmt"
	"strconv"
)

// Limits are the protocol limits of a connection. Zero fields mean the
// defaults of DefaultLimits.
type Limits struct {
	// MaxBulkLen is the longest argument in bytes (Redis's
	// proto-max-bulk-len). Strata stores values up to 16 MiB.
	MaxBulkLen int64
	// MaxMultibulkLen is the most arguments in one command.
	MaxMultibulkLen int64
	// MaxCommandBytes is the most bytes one command may take on the wire
	// (Redis's client-query-buffer-limit, applied per command).
	MaxCommandBytes int64
	// MaxInlineLen is the longest inline (non-RESP) command line.
	MaxInlineLen int64
}

// DefaultLimits are Redis's limits scaled to what Strata can store: a value
// is at most 16 MiB, a batch (MSET) at most 64 MiB of writes.
var DefaultLimits = Limits{
	MaxBulkLen:      16<<20 + 1024,
	MaxMultibulkLen: 1 << 20,
	MaxCommandBytes: 96 << 20,
	MaxInlineLen:    64 << 10,
}

// Before AUTH on a server with a password, Redis allows only tiny
// commands: an unauthenticated client cannot make the server buffer much.
const (
	unauthMaxMultibulk = 10
	unauthMaxBulk      = 16 << 10
)

func (l Limits) withDefaults() Limits {
	if l.MaxBulkLen <= 0 {
		l.MaxBulkLen = DefaultLimits.MaxBulkLen
	}
	if l.MaxMultibulkLen <= 0 {
		l.MaxMultibulkLen = DefaultLimits.MaxMultibulkLen
	}
	if l.MaxCommandBytes <= 0 {
		l.MaxCommandBytes = DefaultLimits.MaxCommandBytes
	}
	if l.MaxInlineLen <= 0 {
		l.MaxInlineLen = DefaultLimits.MaxInlineLen
	}
	return l
}

// protocolError is a broken limit or grammar; its text is Redis's.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return "Protocol error: " + e.msg }

// Framing states.
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

// maxInlineSplitBytes bounds what redcon allocates to split one inline
// line into arguments (inlineSplit). A line of 100 arguments in 10 KiB
// costs about 0.5 MiB; a 64 KiB line of spaces would cost 2 GiB.
const maxInlineSplitBytes = 4 << 20

// inlineSplit follows redcon's splitting of an inline line (its
// arguments separated by spaces, an argument quoted with " or ' from its
// first byte to the same quote, with backslash escapes inside) to count
// what the splitter allocates: at the line's start and at every space or
// quote that ends an argument outside quotes, a buffer the size of the
// rest of the line. restarts counts those places after the line's start
// and ends sums their offsets + 1, so that for a line of n bytes the
// splitter allocates n + restarts·n − ends bytes.
type inlineSplit struct {
	n            int64 // bytes of the line so far, LF excluded
	restarts     int64
	ends         int64
	quote        byte // the open quote, 0 outside quotes
	escape       bool // the byte before was a backslash inside quotes
	argumentByte bool // outside quotes, the current argument has bytes
	// content: the line has a byte other than space and CR, so redcon
	// makes a command of it (a blank line is none).
	content bool
}

// add advances over the line's bytes b (none of them LF).
func (s *inlineSplit) add(b []byte) {
	for _, c := range b {
		if c != ' ' && c != '\r' {
			s.content = true
		}
		switch {
		case s.quote != 0 && s.escape:
			s.escape = false
		case s.quote != 0 && c == '\\':
			s.escape = true
		case s.quote != 0 && c == s.quote:
			s.quote = 0
			s.restart()
		case s.quote != 0:
		case c == ' ':
			s.argumentByte = false
			s.restart()
		case (c == '"' || c == '\'') && !s.argumentByte:
			s.quote = c
			s.restart()
		default:
			s.argumentByte = true
		}
		s.n++
	}
}

func (s *inlineSplit) restart() {
	s.restarts++
	s.ends += s.n + 1
}

// allocated is what the splitter allocates for the line so far; it only
// grows with the line.
func (s *inlineSplit) allocated() int64 { return s.n + s.restarts*s.n - s.ends }

// frameLimiter is the framing state of one connection's request stream.
type frameLimiter struct {
	limits Limits
	// unauth reports whether the client still has to authenticate: then
	// the tighter unauthenticated limits apply.
	unauth func() bool

	state    int
	line     [maxLengthLine]byte // the count or length line so far
	lineLen  int
	argsLeft int64 // arguments of the current multibulk still to come
	dataLeft int64 // bytes of the current argument still to come, CRLF included
	frameLen int64 // bytes of the current frame so far
	inline   inlineSplit
	// commands counts the frames ended that make a command (all but
	// blank inline lines).
	commands int64
	err      *protocolError
}

// atBoundary reports whether the bytes scanned so far end a frame.
func (f *frameLimiter) atBoundary() bool { return f.state == stStart }

func newFrameLimiter(l Limits, unauth func() bool) *frameLimiter {
	return &frameLimiter{limits: l.withDefaults(), unauth: unauth}
}

// scan advances over p. It returns the number of bytes that end on a frame
// boundary before any violation (all of p if there is none, or if p ends
// inside a valid frame) and the violation, if any. While the client has
// to authenticate it stops after the first frame that ends before p does
// (no violation, fewer bytes than p): the caller scans the rest after
// that command ran, as Redis judges each command after the one before.
// After a violation every later call returns (0, the same error).
func (f *frameLimiter) scan(p []byte) (ok int, err *protocolError) {
	if f.err != nil {
		return 0, f.err
	}
	lastBoundary := 0
	for i := 0; i < len(p); {
		c := p[i]
		step := 1      // bytes consumed by this iteration
		ended := false // a frame ended with them
		switch f.state {
		case stStart:
			f.frameLen = 0
			if c != '*' {
				f.state, f.inline = stInline, inlineSplit{}
				continue // the byte is the first of an inline line
			}
			f.state, f.lineLen = stCount, 0
		case stInline:
			// To the end of the line in one step.
			j := i
			for j < len(p) && p[j] != '\n' {
				j++
			}
			step = j - i
			if j < len(p) {
				step++
				ended = true
			}
			if f.frameLen+int64(step) > f.limits.MaxInlineLen {
				return lastBoundary, f.fail("too big inline request")
			}
			// The line's CR counts as one of its bytes (a byte more per
			// argument than redcon allocates), so that a scan in pieces
			// counts as one of the whole.
			if f.inline.add(p[i:j]); f.inline.allocated() > maxInlineSplitBytes {
				return lastBoundary, f.fail("too many arguments in inline request")
			}
		case stCount, stBulkLen:
			if c != '\n' {
				if f.lineLen == len(f.line) {
					return lastBoundary, f.fail(f.lengthError())
				}
				f.line[f.lineLen] = c
				f.lineLen++
				break
			}
			n, valid := f.parseLine()
			if f.state == stCount {
				if !valid || n <= 0 || n > f.limits.MaxMultibulkLen {
					return lastBoundary, f.fail("invalid multibulk length")
				}
				if f.unauth() && n > unauthMaxMultibulk {
					return lastBoundary, f.fail("unauthenticated multibulk length")
				}
				f.argsLeft, f.state = n, stBulkHead
				break
			}
			if !valid || n < 0 || n > f.limits.MaxBulkLen {
				return lastBoundary, f.fail("invalid bulk length")
			}
			if f.unauth() && n > unauthMaxBulk {
				return lastBoundary, f.fail("unauthenticated bulk length")
			}
			f.dataLeft, f.state = n+2, stBulkData
		case stBulkHead:
			if c != '$' {
				return lastBoundary, f.fail("expected '$', got '" + printable(c) + "'")
			}
			f.state, f.lineLen = stBulkLen, 0
		case stBulkData:
			if f.dataLeft > 2 {
				// The argument's bytes, in one step.
				step = int(min(int64(len(p)-i), f.dataLeft-2))
				f.dataLeft -= int64(step)
				break
			}
			// Its CRLF.
			if want := "\r\n"[2-f.dataLeft]; c != want {
				return lastBoundary, f.fail("invalid bulk length")
			}
			if f.dataLeft--; f.dataLeft == 0 {
				if f.argsLeft--; f.argsLeft == 0 {
					ended = true
				} else {
					f.state = stBulkHead
				}
			}
		}
		f.frameLen += int64(step)
		if f.frameLen > f.limits.MaxCommandBytes {
			return lastBoundary, f.fail("command exceeds the query buffer limit")
		}
		i += step
		if ended {
			blank := f.state == stInline && !f.inline.content
			if !blank {
				f.commands++
			}
			f.state = stStart
			lastBoundary = i
			if i < len(p) && f.unauth() && !blank {
				// Before AUTH each command is judged once the one before it
				// ran (it may be the AUTH): the bytes after this frame wait
				// for the next scan. Not after a blank line, of which redcon
				// makes no command: it would read again at once, one stack
				// frame deeper each time (its readCommands recurses).
				return lastBoundary, nil
			}
		}
	}
	return len(p), nil
}

// parseLine parses the count or length line, which must end in CR, as
// redcon does (strconv.Atoi of the bytes before CR).
func (f *frameLimiter) parseLine() (int64, bool) {
	if f.lineLen == 0 || f.line[f.lineLen-1] != '\r' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(f.line[:f.lineLen-1]), 10, 64)
	return n, err == nil
}

func (f *frameLimiter) lengthError() string {
	if f.state == stCount {
		return "invalid multibulk length"
	}
	return "invalid bulk length"
}

func (f *frameLimiter) fail(msg string) *protocolError {
	f.err = &protocolError{msg}
	return f.err
}

// printable renders one byte of a protocol error as Redis does (the byte
// itself; a control byte would garble the reply line, so it is escaped).
func printable(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("\\x%02x", c)
	}
	return string(c)
}

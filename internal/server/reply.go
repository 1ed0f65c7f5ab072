package server

// Replies and the output bound.
//
// Handlers write replies through a reply, which counts the bytes it adds
// to redcon's writer. redcon flushes once per pipeline; a pipeline of many
// large GETs (or one MGET of many large values) would otherwise collect
// all of its replies in memory first. Once MaxOutputBuffer bytes are
// pending, the reply flushes them to the socket itself. The write blocks
// while the client does not read (TCP back-pressure) for at most
// OutputTimeout, after which the connection is dropped, so a slow reader
// costs at most MaxOutputBuffer plus one reply element of memory.
//
// A reply is used only by its connection's goroutine.

import (
	"strconv"

	"github.com/tidwall/redcon"
)

type reply struct {
	conn   redcon.Conn
	cl     *client
	failed bool // an error reply was written (metrics)
}

// respOverhead is the framing bytes of one reply element, roughly.
const respOverhead = 16

func (r *reply) add(n int) {
	r.cl.pending += n + respOverhead
	if r.cl.pending >= r.cl.srv.cfg.MaxOutputBuffer {
		r.flush()
	}
}

// flush writes the pending replies now.
func (r *reply) flush() {
	if w := redcon.BaseWriter(r.conn); w != nil {
		if w.Flush() != nil {
			// The error sticks in the writer and redcon closes the
			// connection after this pipeline; its other commands must not
			// run meanwhile, their replies lost.
			r.cl.nc.abandoned.Store(true)
		}
	}
	r.cl.pending = 0
}

// closeConn flushes the replies written and closes the connection; the
// commands after this one in its pipeline do not run (handle).
func (r *reply) closeConn() {
	r.cl.nc.abandoned.Store(true)
	r.conn.Close()
}

func (r *reply) ok()                 { r.conn.WriteString("OK"); r.add(2) }
func (r *reply) simple(s string)     { r.conn.WriteString(s); r.add(len(s)) }
func (r *reply) int(n int64)         { r.conn.WriteInt64(n); r.add(8) }
func (r *reply) bulk(b []byte)       { r.conn.WriteBulk(b); r.add(len(b)) }
func (r *reply) bulkString(s string) { r.conn.WriteBulkString(s); r.add(len(s)) }
func (r *reply) null()               { r.conn.WriteNull(); r.add(0) }
func (r *reply) array(n int)         { r.conn.WriteArray(n); r.add(0) }
func (r *reply) bulkInt(n int64)     { r.bulkString(strconv.FormatInt(n, 10)) }
func (r *reply) emptyArray()         { r.array(0) }
func (r *reply) nullOr(v []byte, ok bool) {
	if ok {
		r.bulk(v)
	} else {
		r.null()
	}
}

// err writes an error reply. msg starts with the error code ("ERR ...",
// "WRONGPASS ...").
func (r *reply) err(msg string) {
	r.failed = true
	r.conn.WriteError(msg)
	r.add(len(msg))
}

// Redis's standard error texts.
const (
	errSyntax     = "ERR syntax error"
	errNotInteger = "ERR value is not an integer or out of range"
	errOverflow   = "ERR increment or decrement would overflow"
	errNoAuth     = "NOAUTH Authentication required."
	errWrongPass  = "WRONGPASS invalid username-password pair or user is disabled."
	errTooBig     = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
)

func errArity(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

// errUnknown is Redis 7's text for an unknown command: the name and the
// first arguments, each quoted and cut to 128 bytes.
func errUnknown(args [][]byte) string {
	b := []byte("ERR unknown command '")
	b = appendCut(b, args[0])
	b = append(b, "', with args beginning with: "...)
	for _, a := range args[1:] {
		if len(b) > 512 {
			break
		}
		b = append(b, '\'')
		b = appendCut(b, a)
		b = append(b, "' "...)
	}
	return string(b)
}

func errUnknownSub(cmd string, args [][]byte) string {
	b := []byte("ERR unknown subcommand '")
	b = appendCut(b, args[1])
	b = append(b, "'. Try "...)
	b = append(b, cmd...)
	b = append(b, " HELP."...)
	return string(b)
}

// appendCut appends at most 128 bytes of a, with CR and LF (which would
// end the error line) replaced by spaces.
func appendCut(b, a []byte) []byte {
	if len(a) > 128 {
		a = a[:128]
	}
	for _, c := range a {
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return b
}

package server

// Replies and the output bound.
//
// Handlers write replies through a reply, which appends them, RESP-encoded,
// to the connection's output buffer (client.out). The connection writes the
// buffer once per pipeline (conn.go); a pipeline of many large GETs (or one
// MGET of many large values) would otherwise collect all of its replies in
// memory first. Once MaxOutputBuffer bytes are pending, the reply writes
// them to the socket itself. The write blocks while the client does not
// read (TCP back-pressure) for at most OutputTimeout, after which the
// connection is dropped, so a slow reader costs at most MaxOutputBuffer
// plus one reply element of memory. After a failed write, replies are
// dropped as they are added.
//
// A reply is used only by its connection's goroutine.

import (
	"strconv"

	"github.com/tidwall/redcon"
)

type reply struct {
	cl     *client
	failed bool // an error reply was written (metrics)
}

// added is called after each element is appended.
func (r *reply) added() {
	cl := r.cl
	switch {
	case cl.writeErr != nil:
		cl.out = cl.out[:0]
	case len(cl.out) >= cl.srv.cfg.MaxOutputBuffer:
		cl.flush()
	}
}

// closeConn ends the connection after the replies written so far are
// sent; the commands after this one in its pipeline do not run.
func (r *reply) closeConn() { r.cl.nc.abandoned.Store(true) }

func (r *reply) ok()                 { r.cl.out = redcon.AppendOK(r.cl.out); r.added() }
func (r *reply) simple(s string)     { r.cl.out = redcon.AppendString(r.cl.out, s); r.added() }
func (r *reply) int(n int64)         { r.cl.out = redcon.AppendInt(r.cl.out, n); r.added() }
func (r *reply) bulk(b []byte)       { r.cl.out = redcon.AppendBulk(r.cl.out, b); r.added() }
func (r *reply) bulkString(s string) { r.cl.out = redcon.AppendBulkString(r.cl.out, s); r.added() }
func (r *reply) null()               { r.cl.out = redcon.AppendNull(r.cl.out); r.added() }
func (r *reply) array(n int)         { r.cl.out = redcon.AppendArray(r.cl.out, n); r.added() }
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
	r.cl.out = redcon.AppendError(r.cl.out, msg)
	r.added()
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

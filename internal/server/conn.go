package server

// One client connection: its goroutine's loop, its socket wrapper and its
// state.
//
// The loop reads from the socket (requestReader.fill), runs every command
// whole in the buffer one at a time, in order (each parsed after the one
// before it ran), then writes the replies they left (one write per
// pipeline, or earlier when MaxOutputBuffer bytes are pending: reply.go),
// and reads again. It ends when the client hangs up or breaks the
// protocol (after the commands before the violation ran and Redis's error
// text was sent), when a command closes the connection (QUIT, a reply
// that could not be completed), when a write fails or times out, or when
// Shutdown stops it (its reads fail; the commands already read run first).
//
// Lock rules: a connection's client, reader and output buffer are used
// only by its goroutine. netConn.mu guards the read deadline against the
// race between the loop setting its idle deadline and Shutdown pinning it;
// abandoned is atomic (Shutdown sets it from its own goroutine). No lock
// is held while calling the database.

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// serveConn serves one connection listener.Accept registered; it returns
// when the connection has ended and is closed.
func (s *Server) serveConn(nc *netConn) {
	defer s.handlers.Done() // counted by listener.Accept
	defer s.ln.forget(nc)
	defer nc.Close()
	if s.clients.Add(1) > int64(s.cfg.MaxClients) {
		s.clients.Add(-1)
		s.rejectedConns.Add(1)
		if m := s.cfg.Metrics; m != nil {
			m.rejected.Inc()
		}
		nc.writeDirect("-ERR max number of clients reached\r\n")
		return
	}
	defer s.clients.Add(-1)
	s.totalConns.Add(1)
	if m := s.cfg.Metrics; m != nil {
		m.connections.Inc()
	}
	cl := &client{id: s.nextClientID.Add(1), nc: nc, srv: s, authed: s.cfg.Password == ""}
	cl.rd = newRequestReader(nc, s.cfg.Limits, func() bool { return !cl.authed })
	err := s.runConn(cl)
	// Protocol violations are worth a line; network errors and hang-ups
	// are a client's business.
	if pe := (*protocolError)(nil); errors.As(err, &pe) {
		s.cfg.Logger.Info("server: client disconnected", "addr", nc.RemoteAddr(), "err", err)
	}
}

// runConn is the connection's loop.
func (s *Server) runConn(cl *client) error {
	for {
		for !cl.nc.abandoned.Load() {
			args, err := cl.rd.next()
			if err != nil {
				// The replies of the commands before the violation, then
				// Redis's error text.
				r := reply{cl: cl}
				r.err("ERR " + err.Error())
				cl.flush()
				return err
			}
			if args == nil {
				break
			}
			s.dispatch(&reply{cl: cl}, args)
		}
		if err := cl.flush(); err != nil {
			return err
		}
		if cl.nc.abandoned.Load() {
			return nil
		}
		if s.cfg.IdleTimeout > 0 {
			cl.nc.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
		}
		if err := cl.rd.fill(); err != nil {
			return err
		}
	}
}

// netConn is one client connection's socket.
type netConn struct {
	net.Conn
	outputTimeout time.Duration

	mu       sync.Mutex // guards draining against SetReadDeadline
	draining bool

	// abandoned: the connection is to end without running another
	// command (QUIT, a reply that could not be completed or written,
	// Shutdown's grace over).
	abandoned atomic.Bool
}

// writeChunk is how much of a reply Write hands the socket under one
// output deadline.
const writeChunk = 256 << 10

// Write writes replies, each writeChunk under a deadline of its own: the
// output timeout drops a client that reads nothing for that long, not one
// that reads a large reply (a GET of 16 MiB is one Write) slowly.
func (c *netConn) Write(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		end := min(len(p), written+writeChunk)
		c.Conn.SetWriteDeadline(time.Now().Add(c.outputTimeout))
		n, err := c.Conn.Write(p[written:end])
		written += n
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// writeDirect writes a short reply outside the connection's output buffer
// (a refused connection).
func (c *netConn) writeDirect(s string) {
	c.Conn.SetWriteDeadline(time.Now().Add(time.Second))
	c.Conn.Write([]byte(s))
}

// SetReadDeadline is the idle timeout; once draining it is ignored.
func (c *netConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.draining {
		return nil
	}
	return c.Conn.SetReadDeadline(t)
}

// stopReading makes the connection's next read fail (Shutdown).
func (c *netConn) stopReading() {
	c.mu.Lock()
	c.draining = true
	c.Conn.SetReadDeadline(time.Unix(1, 0))
	c.mu.Unlock()
}

// client is the per-connection state, used only by the connection's
// goroutine.
type client struct {
	id     int64
	srv    *Server
	nc     *netConn
	rd     *requestReader
	authed bool
	name   string
	// out holds the replies not yet written (reply.go); writeErr is the
	// error of the write that failed, after which nothing is written.
	out      []byte
	writeErr error
	// scratch holds the lower-cased command name.
	scratch [32]byte
	// getBuf is GET's value buffer (DB.AppendValue), reused from one GET
	// to the next while it is at most maxGetBuf: a GET allocates nothing
	// for values that fit, and a connection keeps no large buffer.
	getBuf []byte
}

// maxGetBuf bounds the value buffer a connection keeps between GETs.
const maxGetBuf = 64 << 10

// maxIdleOutput bounds the output buffer a connection keeps between
// pipelines: a larger one, grown for a large reply, is given back.
const maxIdleOutput = 16 << 10

// flush writes the pending replies. A failed write abandons the
// connection: later replies are dropped (reply.add) and no other command
// runs; flush returns the write's error from then on.
func (cl *client) flush() error {
	if cl.writeErr != nil || len(cl.out) == 0 {
		return cl.writeErr
	}
	_, cl.writeErr = cl.nc.Write(cl.out)
	if cap(cl.out) > maxIdleOutput {
		cl.out = nil
	} else {
		cl.out = cl.out[:0]
	}
	if cl.writeErr != nil {
		cl.nc.abandoned.Store(true)
	}
	return cl.writeErr
}

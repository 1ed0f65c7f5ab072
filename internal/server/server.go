package server

// Connections and shutdown.
//
// redcon runs one goroutine per connection: it reads a pipeline, calls the
// handler for each command in order, then flushes the replies. This file
// wraps the listener and every connection so that:
//
//   - reads pass through the connection's frameLimiter (limit.go);
//   - writes carry a deadline (Config.OutputTimeout): a client that stops
//     reading its replies is disconnected instead of holding a goroutine
//     and its buffers forever;
//   - Shutdown can let in-flight commands finish: it stops accepting, pins
//     every connection's read deadline in the past (so each connection's
//     goroutine ends at its next read, after it has run and answered the
//     commands it already read), waits for them, and only then lets
//     redcon's serve loop return (which closes what is left).
//
// Lock rules: listener.mu guards the connection registry and the draining
// flag, and a connection is counted in Server.handlers when it is
// registered, under it: so a connection Accept hands redcon before
// Shutdown's drain is counted before Shutdown waits for the count, and
// none is counted after (a WaitGroup must not go up from zero while it is
// waited on). netConn.mu guards the read deadline against the race between
// redcon setting its idle deadline and Shutdown pinning it. Neither is held
// while calling into redcon or the database; listener.mu may be taken under
// redcon's own lock (its closed callback), never the reverse.

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata"
	"github.com/tidwall/redcon"
)

// Config configures a Server. Zero fields mean the stated defaults.
type Config struct {
	// Password is requirepass: when set, a client must AUTH before any
	// other command.
	Password string
	// MaxClients bounds concurrent connections (default 10000, Redis's).
	MaxClients int
	// IdleTimeout closes a connection idle for this long (0: never).
	IdleTimeout time.Duration
	// Limits are the protocol limits (default DefaultLimits).
	Limits Limits
	// MaxOutputBuffer is the reply bytes a client may have pending before
	// the server stops running its commands and waits for it to read them
	// (default 4 MiB). With OutputTimeout it bounds a slow reader's memory.
	MaxOutputBuffer int
	// OutputTimeout disconnects a client that takes none of its pending
	// replies for this long (default 30 s): each 256 KiB of a reply is
	// written under a deadline of its own, so a client reading a large
	// reply slowly is served.
	OutputTimeout time.Duration
	// EnableFlushDB allows FLUSHDB and FLUSHALL (off by default: they
	// delete everything).
	EnableFlushDB bool
	// AppendFsync is the durability mode the database was opened with, in
	// Redis's words ("always", "everysec", "no"), for INFO and CONFIG GET.
	AppendFsync string
	// Metrics, if set, receives per-command counts and latencies.
	Metrics *Metrics
	// ShutdownGrace is how long Shutdown waits for connections to finish
	// their in-flight commands before closing them (default 10 s).
	ShutdownGrace time.Duration
	// Logger receives connection errors and rare events (default: discard).
	Logger *slog.Logger
	// Port is reported in INFO (informational).
	Port int
}

func (c Config) withDefaults() Config {
	if c.MaxClients <= 0 {
		c.MaxClients = 10000
	}
	c.Limits = c.Limits.withDefaults()
	if c.MaxOutputBuffer <= 0 {
		c.MaxOutputBuffer = 4 << 20
	}
	if c.OutputTimeout <= 0 {
		c.OutputTimeout = 30 * time.Second
	}
	if c.ShutdownGrace <= 0 {
		c.ShutdownGrace = 10 * time.Second
	}
	if c.AppendFsync == "" {
		c.AppendFsync = "everysec"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Server serves one database over RESP2.
type Server struct {
	db       *strata.DB
	cfg      Config
	commands map[string]*command
	cursors  *cursorTable
	started  time.Time

	// mu guards ln and stopped: Serve and Shutdown run on different
	// goroutines.
	mu      sync.Mutex
	ln      *listener
	stopped bool
	rs      *redcon.Server

	// handlers counts the connections listener.Accept registered whose
	// handler has not ended (or that accept has not yet refused).
	handlers sync.WaitGroup

	clients        atomic.Int64
	totalConns     atomic.Int64
	rejectedConns  atomic.Int64
	commandsRun    atomic.Int64
	keyspaceHits   atomic.Int64
	keyspaceMisses atomic.Int64
	nextClientID   atomic.Int64

	shutdownOnce sync.Once
	shutdownReq  chan struct{} // closed by the SHUTDOWN command
}

// New returns a server for db. The caller owns db: it opens it before and
// closes it after the server (see cmd/strata serve).
func New(db *strata.DB, cfg Config) *Server {
	s := &Server{db: db, cfg: cfg.withDefaults(), started: time.Now(), shutdownReq: make(chan struct{})}
	s.cursors = newCursorTable(cursorTableEntries, cursorTableBytes)
	s.commands = commandTable(s.cfg.Metrics)
	return s
}

// ShutdownRequested is closed when a client sends SHUTDOWN.
func (s *Server) ShutdownRequested() <-chan struct{} { return s.shutdownReq }

func (s *Server) requestShutdown() { s.shutdownOnce.Do(func() { close(s.shutdownReq) }) }

// Serve serves connections from ln until Shutdown; it then returns nil.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	switch {
	case s.stopped:
		s.mu.Unlock()
		ln.Close()
		return nil
	case s.ln != nil:
		s.mu.Unlock()
		return errors.New("server: Serve called twice")
	}
	wl := &listener{Listener: ln, srv: s, conns: make(map[*netConn]struct{}), released: make(chan struct{})}
	rs := redcon.NewServerNetwork(ln.Addr().Network(), ln.Addr().String(), s.handle, s.accept, s.closed)
	rs.AcceptError = func(err error) { s.cfg.Logger.Warn("server: accept", "err", err) }
	if s.cfg.IdleTimeout > 0 {
		rs.SetIdleClose(s.cfg.IdleTimeout)
	}
	s.ln, s.rs = wl, rs
	s.mu.Unlock()
	return rs.Serve(wl)
}

// listening returns the listener once Serve has started (nil before).
func (s *Server) listening() *listener {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ln
}

// Clients is the number of connected clients.
func (s *Server) Clients() int64 { return s.clients.Load() }

// Addr is the address the server listens on (after Serve has started).
func (s *Server) Addr() net.Addr {
	if ln := s.listening(); ln != nil {
		return ln.Addr()
	}
	return nil
}

// Shutdown stops accepting connections, lets every connection finish the
// commands it has read (answering them), and returns when all connections
// have ended. Past ctx's deadline, or ShutdownGrace if ctx has none, it
// closes the connections that remain and waits for their goroutines
// (each of which finishes its current database call first). The database
// stays open.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopped = true
	ln := s.ln
	s.mu.Unlock()
	if ln == nil {
		return nil // Serve has not started; it will return at once
	}
	conns := ln.drain()
	for _, c := range conns {
		c.stopReading()
	}
	done := make(chan struct{})
	go func() { s.handlers.Wait(); close(done) }()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.ShutdownGrace)
		defer cancel()
	}
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("server: %d connections still busy after the grace period; closed", s.clients.Load())
		for _, c := range ln.snapshot() {
			c.abandoned.Store(true)
			c.Conn.Close()
		}
		<-done
	}
	ln.releaseOnce.Do(func() { close(ln.released) })
	return err
}

// accept is redcon's accept callback: it admits the connection or refuses
// it (max clients) and sets up its state.
func (s *Server) accept(conn redcon.Conn) bool {
	nc, ok := conn.NetConn().(*netConn)
	if !ok {
		// Every connection comes from listener.Accept, which counted it
		// for Shutdown: one that is not ours could be neither found nor
		// uncounted, and Shutdown would wait for it forever.
		panic(fmt.Sprintf("server: connection of type %T not from the server's listener", conn.NetConn()))
	}
	if s.clients.Add(1) > int64(s.cfg.MaxClients) {
		s.clients.Add(-1)
		s.rejectedConns.Add(1)
		if m := s.cfg.Metrics; m != nil {
			m.rejected.Inc()
		}
		nc.writeDirect("-ERR max number of clients reached\r\n")
		s.ln.forget(nc)
		s.handlers.Done() // counted by listener.Accept; no handler runs
		return false
	}
	s.totalConns.Add(1)
	cl := &client{id: s.nextClientID.Add(1), nc: nc, srv: s, authed: s.cfg.Password == ""}
	nc.lim = newFrameLimiter(s.cfg.Limits, func() bool { return !cl.authed })
	conn.SetContext(cl)
	if m := s.cfg.Metrics; m != nil {
		m.connections.Inc()
	}
	return true
}

// closed is redcon's callback when a connection's goroutine ends.
func (s *Server) closed(conn redcon.Conn, err error) {
	if cl, ok := conn.Context().(*client); ok && cl != nil {
		s.ln.forget(cl.nc)
		s.clients.Add(-1)
		// Protocol violations are worth a line; network errors and
		// hang-ups are a client's business.
		if pe := (*protocolError)(nil); errors.As(err, &pe) {
			s.cfg.Logger.Info("server: client disconnected", "addr", conn.RemoteAddr(), "err", err)
		}
		s.handlers.Done()
	}
}

// listener hands redcon wrapped connections and, once draining, holds its
// accept loop until Shutdown has let the connections finish.
type listener struct {
	net.Listener
	srv *Server

	mu          sync.Mutex
	conns       map[*netConn]struct{}
	draining    bool
	released    chan struct{} // closed when redcon's serve loop may return
	releaseOnce sync.Once
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		l.mu.Lock()
		draining := l.draining
		if err == nil && !draining {
			nc := &netConn{Conn: c, outputTimeout: l.srv.cfg.OutputTimeout}
			l.conns[nc] = struct{}{}
			// Counted until redcon's closed callback (or accept's
			// refusal) says its handler is done.
			l.srv.handlers.Add(1)
			l.mu.Unlock()
			return nc, nil
		}
		l.mu.Unlock()
		if draining {
			if c != nil {
				c.Close()
			}
			<-l.released
			return nil, net.ErrClosed
		}
		return nil, err
	}
}

// drain stops accepting and returns the connections open now.
func (l *listener) drain() []*netConn {
	l.mu.Lock()
	l.draining = true
	l.mu.Unlock()
	l.Listener.Close()
	return l.snapshot()
}

func (l *listener) snapshot() []*netConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*netConn, 0, len(l.conns))
	for c := range l.conns {
		out = append(out, c)
	}
	return out
}

func (l *listener) forget(c *netConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// Close is called by redcon when its serve loop ends.
func (l *listener) Close() error { return l.Listener.Close() }

// netConn is one client connection as redcon sees it.
type netConn struct {
	net.Conn
	lim           *frameLimiter  // set in accept, before the first Read
	violation     *protocolError // found by the limiter, reported at the next Read
	outputTimeout time.Duration
	// rest holds bytes read from the client that the limiter has not
	// scanned yet (it stops after each frame before AUTH), and restErr the
	// error of the read that brought them, returned by the Read after the
	// last of them was handed on (redcon drops bytes that come with an
	// error). Used only by the connection's goroutine.
	rest    []byte
	restErr error
	// pending holds the start of a frame that Read scanned but did not
	// hand on (it returns whole frames, see Read).
	pending []byte

	mu       sync.Mutex // guards draining against SetReadDeadline
	draining bool

	// abandoned: the server closed the connection (QUIT, a reply that
	// could not be completed or written, Shutdown's grace over). redcon
	// still calls the handler for every command it had read, in the same
	// pipeline; those run no more (handle), as Redis stops at QUIT.
	abandoned atomic.Bool
}

// Read reads from the client through the framing limiter. Bytes of frames
// before a violation are returned first, so their commands run; the next
// Read answers the violation with Redis's error text and fails.
//
// It returns whole frames, at least one that makes a command, unless one
// frame does not fit p: a frame's start that came with them waits in
// pending, and a read that brings no whole command is followed by another.
// redcon's reader reads again, one stack frame deeper (its readCommands
// recurses), whenever a read gives it no whole command: a client dripping
// a frame a byte at a time, or streaming blank lines, grew its goroutine's
// stack without bound (Go's 1 GB limit ends the process). Now the depth
// grows only as redcon's buffer doubles for a frame larger than it.
func (c *netConn) Read(p []byte) (int, error) {
	if c.violation != nil {
		c.writeDirect("-ERR " + c.violation.Error() + "\r\n")
		return 0, c.violation
	}
	if c.lim == nil {
		return c.Conn.Read(p)
	}
	// The start of a frame scanned at the last Read: handed on first.
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	if len(c.pending) > 0 {
		return n, nil
	}
	commands := c.lim.commands
	for {
		var got, ok int
		var err error
		var perr *protocolError
		switch {
		case len(c.rest) > 0:
			// Bytes read before, not scanned yet (the limiter stopped after
			// a frame before AUTH): scanned in place, handed on up to where
			// the limiter stops again.
			got = copy(p[n:], c.rest)
			ok, perr = c.lim.scan(p[n : n+got])
			c.rest = c.rest[ok:]
		case c.restErr != nil:
			err, c.restErr = c.restErr, nil // the error of the read that brought the rest
		default:
			got, err = c.Conn.Read(p[n:])
			ok, perr = c.lim.scan(p[n : n+got])
			if perr == nil && ok < got {
				c.rest = append(c.rest[:0], p[n+ok:n+got]...)
				c.restErr, err = err, nil
			}
		}
		n += ok
		switch {
		case perr != nil:
			c.violation = perr
			if n == 0 {
				return c.Read(p)
			}
			return n, nil
		case err != nil:
			if n > 0 {
				c.restErr = err // after what was read
				return n, nil
			}
			return 0, err
		case n == len(p) || ok < got:
			return n, nil
		case c.lim.commands > commands:
			// Whole frames up to here; the start of the next waits.
			whole := n - int(c.lim.frameLen)
			if c.lim.atBoundary() {
				whole = n
			}
			c.pending = append(c.pending[:0], p[whole:n]...)
			return whole, nil
		}
	}
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

// writeDirect writes a reply outside redcon's writer: used only where
// redcon has nothing pending (a refused connection, a protocol violation
// found while reading).
func (c *netConn) writeDirect(s string) {
	c.Conn.SetWriteDeadline(time.Now().Add(time.Second))
	c.Conn.Write([]byte(s))
}

// SetReadDeadline is redcon's idle timeout; once draining it is ignored.
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
	authed bool
	name   string
	// pending estimates the reply bytes written since the last flush.
	pending int
	// scratch holds the lower-cased command name.
	scratch [32]byte
	// getBuf is GET's value buffer (DB.AppendValue), reused from one GET
	// to the next while it is at most maxGetBuf: a GET allocates nothing
	// for values that fit, and a connection keeps no large buffer.
	getBuf []byte
}

// maxGetBuf bounds the value buffer a connection keeps between GETs.
const maxGetBuf = 64 << 10

// randomUint64 is a random 64-bit number (cursor ids).
func randomUint64() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

package server

// The listener, the server's state and shutdown.
//
// Serve accepts connections and runs each on a goroutine of its own
// (conn.go). Shutdown can let in-flight commands finish: it stops
// accepting, pins every connection's read deadline in the past (so each
// connection's goroutine ends at its next read, after it has run and
// answered the commands it already read), waits for them, and only then
// lets Serve return.
//
// Lock rules: listener.mu guards the connection registry and the draining
// flag, and a connection is counted in Server.handlers when it is
// registered, under it: so a connection Accept returns before Shutdown's
// drain is counted before Shutdown waits for the count, and none is
// counted after (a WaitGroup must not go up from zero while it is waited
// on). Server.mu guards ln and stopped. Neither is held while calling the
// database or doing I/O on a connection.

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
	s.ln = wl
	s.mu.Unlock()
	var delay time.Duration
	for {
		nc, err := wl.accept()
		switch {
		case err == nil:
			delay = 0
			go s.serveConn(nc)
		case errors.Is(err, net.ErrClosed):
			return nil // Shutdown (which let the connections finish), or the caller closed ln
		default:
			// Out of descriptors and the like: wait, as net/http does,
			// rather than spin.
			s.cfg.Logger.Warn("server: accept", "err", err)
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			time.Sleep(delay)
		}
	}
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

// listener registers the connections it accepts and, once draining, holds
// Serve's accept loop until Shutdown has let the connections finish.
type listener struct {
	net.Listener
	srv *Server

	mu          sync.Mutex
	conns       map[*netConn]struct{}
	draining    bool
	released    chan struct{} // closed when Serve may return
	releaseOnce sync.Once
}

// accept returns the next connection, registered and counted; once
// draining, it waits until Shutdown releases Serve and returns
// net.ErrClosed.
func (l *listener) accept() (*netConn, error) {
	c, err := l.Listener.Accept()
	l.mu.Lock()
	draining := l.draining
	if err == nil && !draining {
		nc := &netConn{Conn: c, outputTimeout: l.srv.cfg.OutputTimeout}
		l.conns[nc] = struct{}{}
		// Counted until its serveConn returns.
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

// randomUint64 is a random 64-bit number (cursor ids).
func randomUint64() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

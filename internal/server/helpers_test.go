package server

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stratadb/strata"
)

// testServer is a server on a loopback port over a database in a temporary
// directory.
type testServer struct {
	t      *testing.T
	db     *strata.DB
	srv    *Server
	addr   string
	served chan error
}

func startServer(t *testing.T, cfg Config) *testServer {
	t.Helper()
	db, err := strata.Open(t.TempDir(), &strata.Options{CacheSize: 8 << 20, Sync: strata.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	return startServerOn(t, db, cfg)
}

func startServerOn(t *testing.T, db *strata.DB, cfg Config) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, db: db, srv: New(db, cfg), addr: ln.Addr().String(), served: make(chan error, 1)}
	go func() { ts.served <- ts.srv.Serve(ln) }()
	t.Cleanup(ts.stop)
	return ts
}

// stop shuts the server down (once) and closes the database.
func (ts *testServer) stop() {
	if ts.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		ts.t.Errorf("shutdown: %v", err)
	}
	if err := <-ts.served; err != nil {
		ts.t.Errorf("serve: %v", err)
	}
	if err := ts.db.Close(); err != nil {
		ts.t.Errorf("close db: %v", err)
	}
	ts.srv = nil
}

// client returns a go-redis client of the server (closed at cleanup).
func (ts *testServer) client(opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: ts.addr, MaxRetries: -1, DialTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	ts.t.Cleanup(func() { c.Close() })
	return c
}

// raw is a plain TCP connection for byte-level tests.
type raw struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func (ts *testServer) raw() *raw {
	ts.t.Helper()
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(func() { c.Close() })
	return &raw{t: ts.t, c: c, br: bufio.NewReader(c)}
}

func (r *raw) send(s string) {
	r.t.Helper()
	r.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.c.Write([]byte(s)); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// line reads one reply line (without CRLF); "" and the error at EOF.
func (r *raw) line() (string, error) {
	r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	s, err := r.br.ReadString('\n')
	return strings.TrimRight(s, "\r\n"), err
}

func (r *raw) expect(want string) {
	r.t.Helper()
	got, err := r.line()
	if err != nil || got != want {
		r.t.Fatalf("reply %q (%v), want %q", got, err, want)
	}
}

// closed reports whether the server closed the connection (reading hits
// EOF or a reset within the timeout), after draining any pending replies.
func (r *raw) closed(timeout time.Duration) bool {
	r.c.SetReadDeadline(time.Now().Add(timeout))
	buf := make([]byte, 4096)
	for {
		if _, err := r.br.Read(buf); err != nil {
			var ne net.Error
			if ok := asNetErr(err, &ne); ok && ne.Timeout() {
				return false
			}
			return true
		}
	}
}

func asNetErr(err error, target *net.Error) bool {
	ne, ok := err.(net.Error)
	if ok {
		*target = ne
	}
	return ok
}

var bg = context.Background()

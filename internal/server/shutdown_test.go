package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata"
)

// TestShutdownFinishesInFlight: Shutdown during a pipeline lets the
// connection finish the commands the server has read and answers them;
// every answered SET is in the database afterwards; then the connection
// closes and new connections are refused.
func TestShutdownFinishesInFlight(t *testing.T) {
	dir := t.TempDir()
	db, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	ts := startServerOn(t, db, Config{})
	r := ts.raw()
	var b strings.Builder
	const n = 5000
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "*3\r\n$3\r\nSET\r\n$6\r\nk%05d\r\n$1\r\nv\r\n", i)
	}
	go r.c.Write([]byte(b.String()))
	r.expect("+OK") // the server has started on the pipeline
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-ts.served; err != nil {
		t.Fatal(err)
	}
	ts.srv = nil // stopped; the database is ours
	answered := 1
	for {
		line, err := r.line()
		if err != nil {
			break
		}
		if line != "+OK" {
			t.Fatalf("reply %q", line)
		}
		answered++
	}
	for i := 0; i < answered; i++ {
		if _, err := db.Get([]byte(fmt.Sprintf("k%05d", i))); err != nil {
			t.Fatalf("answered SET %d of %d not in the database: %v", i, answered, err)
		}
	}
	t.Logf("%d of %d pipelined SETs answered before the connection closed", answered, n)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestShutdownCommand(t *testing.T) {
	ts := startServer(t, Config{})
	c := ts.client()
	if err := c.Do(bg, "SHUTDOWN", "bogus").Err(); err == nil || err.Error() != "ERR syntax error" {
		t.Fatalf("SHUTDOWN bogus: %v", err)
	}
	r := ts.raw()
	r.send("SHUTDOWN NOSAVE\r\n") // no reply: the server stops
	select {
	case <-ts.srv.ShutdownRequested():
	case <-time.After(5 * time.Second):
		t.Fatal("SHUTDOWN did not request a shutdown")
	}
}

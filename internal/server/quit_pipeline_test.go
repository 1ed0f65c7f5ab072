package server

import (
	"testing"
	"time"
)

// TestCommandsAfterQuitDoNotRun: QUIT pipelined with commands after it,
// in one write, answers OK and closes the connection; the commands after
// it do not run, as in Redis.
func TestCommandsAfterQuitDoNotRun(t *testing.T) {
	ts := startServer(t, Config{})
	r := ts.raw()
	r.send("SET before 1\r\nQUIT\r\nSET after 1\r\nINCR counter\r\n")
	r.expect("+OK")
	r.expect("+OK")
	if !r.closed(2 * time.Second) {
		t.Fatal("connection left open after QUIT")
	}
	c := ts.client()
	if n := c.Exists(bg, "before").Val(); n != 1 {
		t.Errorf("the command before QUIT did not run (EXISTS before = %d)", n)
	}
	if n := c.Exists(bg, "after", "counter").Val(); n != 0 {
		t.Errorf("%d commands after QUIT ran", n)
	}
}

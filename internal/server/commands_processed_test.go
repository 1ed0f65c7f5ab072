package server

import (
	"strings"
	"testing"
)

// TestRefusedCommandsNotProcessed: INFO's total_commands_processed counts
// the commands that ran, as Redis's does: not an unknown command, one of
// the wrong arity, or one refused before AUTH; the INFO that reports it
// counts once it ran.
func TestRefusedCommandsNotProcessed(t *testing.T) {
	ts := startServer(t, Config{Password: "pw"})
	r := ts.raw()
	r.send("GET k\r\nAUTH pw\r\nNOSUCH\r\nGET\r\nPING\r\nINFO stats\r\n")
	r.expect("-NOAUTH Authentication required.")
	r.expect("+OK")
	r.expect("-ERR unknown command 'NOSUCH', with args beginning with: ")
	r.expect("-ERR wrong number of arguments for 'get' command")
	r.expect("+PONG")
	if hdr, err := r.line(); err != nil || !strings.HasPrefix(hdr, "$") {
		t.Fatalf("INFO reply %q, %v", hdr, err)
	}
	for {
		l, err := r.line()
		if err != nil {
			t.Fatalf("INFO without total_commands_processed: %v", err)
		}
		if v, ok := strings.CutPrefix(l, "total_commands_processed:"); ok {
			if v != "2" { // AUTH and PING: INFO counts once it ran
				t.Fatalf("total_commands_processed:%s, want 2", v)
			}
			return
		}
	}
}

package server

// The command table and dispatch. Every handler runs on its connection's
// goroutine (conn.go); its arguments are valid only until it returns
// (request.go). Handlers handlers share only the *strata.DB (safe for concurrent use),
// the cursor table (locked inside) and atomic counters.

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stratadb/strata"
)

// command is one entry of the command table.
type command struct {
	name string
	// arity as in Redis: n > 0 exactly n arguments (the name included),
	// n < 0 at least -n.
	arity int
	flags []string // COMMAND's flags: "write", "readonly", "fast", ...
	// firstKey, lastKey, step: the key positions (COMMAND).
	firstKey, lastKey, step int
	// noAuth commands run before AUTH.
	noAuth bool
	fn     func(s *Server, r *reply, args [][]byte)
	// Documentation (COMMAND DOCS).
	summary, group, since string

	latency prometheus.Observer // nil without metrics
	errors  prometheus.Counter
}

func (c *command) accepts(n int) bool {
	if c.arity >= 0 {
		return n == c.arity
	}
	return n >= -c.arity
}

func (s *Server) dispatch(r *reply, args [][]byte) {
	cl := r.cl
	name := lowerInto(cl.scratch[:0], args[0])
	c := s.commands[string(name)]
	if c == nil {
		// Redis's order: unknown command, then arity, then NOAUTH.
		if m := s.cfg.Metrics; m != nil {
			m.unknown.Inc()
		}
		r.err(errUnknown(args))
		return
	}
	if !c.accepts(len(args)) {
		r.err(errArity(c.name))
		c.countError()
		return
	}
	if !cl.authed && !c.noAuth {
		r.err(errNoAuth)
		c.countError()
		return
	}
	var start time.Time
	if c.latency != nil {
		start = time.Now()
	}
	c.fn(s, r, args)
	// Counted once it ran (INFO does not count itself), as Redis does;
	// commands refused above (unknown, wrong arity, NOAUTH) are not.
	s.commandsRun.Add(1)
	if c.latency != nil {
		c.latency.Observe(time.Since(start).Seconds())
		if r.failed {
			c.errors.Inc()
		}
	}
}

func (c *command) countError() {
	if c.errors != nil {
		c.errors.Inc()
	}
}

// lowerInto appends b lower-cased (ASCII) to dst; names longer than dst's
// capacity still work (append grows it), they just allocate.
func lowerInto(dst, b []byte) []byte {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func equalFold(b []byte, s string) bool { return strings.EqualFold(string(b), s) }

// commandTable builds the table; with metrics, each command gets its
// latency histogram and error counter now, so the hot path does no label
// lookups.
func commandTable(m *Metrics) map[string]*command {
	list := []*command{
		// Connection.
		{name: "ping", arity: -1, flags: []string{"fast"}, fn: cmdPing, group: "connection", since: "1.0.0", summary: "Returns the server's liveliness response."},
		{name: "echo", arity: 2, flags: []string{"fast"}, fn: cmdEcho, group: "connection", since: "1.0.0", summary: "Returns the given string."},
		{name: "hello", arity: -1, flags: []string{"noauth", "fast"}, noAuth: true, fn: cmdHello, group: "connection", since: "6.0.0", summary: "Handshakes with the server (RESP2 only)."},
		{name: "auth", arity: -2, flags: []string{"noauth", "fast"}, noAuth: true, fn: cmdAuth, group: "connection", since: "1.0.0", summary: "Authenticates the connection."},
		{name: "select", arity: 2, flags: []string{"fast"}, fn: cmdSelect, group: "connection", since: "1.0.0", summary: "Changes the selected database (only 0 exists)."},
		{name: "quit", arity: -1, flags: []string{"noauth", "fast"}, noAuth: true, fn: cmdQuit, group: "connection", since: "1.0.0", summary: "Closes the connection."},
		{name: "client", arity: -2, flags: []string{}, fn: cmdClient, group: "connection", since: "2.4.0", summary: "CLIENT ID, GETNAME, SETNAME, SETINFO."},
		// Strings.
		{name: "get", arity: 2, flags: []string{"readonly", "fast"}, firstKey: 1, lastKey: 1, step: 1, fn: cmdGet, group: "string", since: "1.0.0", summary: "Returns the string value of a key."},
		{name: "set", arity: -3, flags: []string{"write"}, firstKey: 1, lastKey: 1, step: 1, fn: cmdSet, group: "string", since: "1.0.0", summary: "Sets the string value of a key (NX, XX, GET; no expiry)."},
		{name: "getset", arity: 3, flags: []string{"write", "fast"}, firstKey: 1, lastKey: 1, step: 1, fn: cmdGetSet, group: "string", since: "1.0.0", summary: "Returns the old value of a key after setting it to a new one."},
		{name: "setnx", arity: 3, flags: []string{"write", "fast"}, firstKey: 1, lastKey: 1, step: 1, fn: cmdSetNX, group: "string", since: "1.0.0", summary: "Sets a key only if it does not exist."},
		{name: "mget", arity: -2, flags: []string{"readonly", "fast"}, firstKey: 1, lastKey: -1, step: 1, fn: cmdMGet, group: "string", since: "1.0.0", summary: "Returns the values of keys, from one snapshot."},
		{name: "mset", arity: -3, flags: []string{"write"}, firstKey: 1, lastKey: -1, step: 2, fn: cmdMSet, group: "string", since: "1.0.1", summary: "Sets keys atomically (one batch)."},
		{name: "incr", arity: 2, flags: []string{"write", "fast"}, firstKey: 1, lastKey: 1, step: 1, fn: cmdIncr, group: "string", since: "1.0.0", summary: "Increments the integer value of a key by one."},
		{name: "incrby", arity: 3, flags: []string{"write", "fast"}, firstKey: 1, lastKey: 1, step: 1, fn: cmdIncrBy, group: "string", since: "1.0.0", summary: "Increments the integer value of a key by a number."},
		{name: "decr", arity: 2, flags: []string{"write", "fast"}, firstKey: 1, lastKey: 1, step: 1, fn: cmdDecr, group: "string", since: "1.0.0", summary: "Decrements the integer value of a key by one."},
		{name: "decrby", arity: 3, flags: []string{"write", "fast"}, firstKey: 1, lastKey: 1, step: 1, fn: cmdDecrBy, group: "string", since: "1.0.0", summary: "Decrements the integer value of a key by a number."},
		{name: "append", arity: 3, flags: []string{"write"}, firstKey: 1, lastKey: 1, step: 1, fn: cmdAppend, group: "string", since: "2.0.0", summary: "Appends a string to the value of a key."},
		{name: "strlen", arity: 2, flags: []string{"readonly", "fast"}, firstKey: 1, lastKey: 1, step: 1, fn: cmdStrlen, group: "string", since: "2.2.0", summary: "Returns the length of a string value."},
		// Keys.
		{name: "del", arity: -2, flags: []string{"write"}, firstKey: 1, lastKey: -1, step: 1, fn: cmdDel, group: "generic", since: "1.0.0", summary: "Deletes keys (atomically)."},
		{name: "exists", arity: -2, flags: []string{"readonly", "fast"}, firstKey: 1, lastKey: -1, step: 1, fn: cmdExists, group: "generic", since: "1.0.0", summary: "Counts the given keys that exist."},
		{name: "scan", arity: -2, flags: []string{"readonly"}, fn: cmdScan, group: "generic", since: "2.8.0", summary: "Iterates over the keys in key order (MATCH, COUNT, TYPE)."},
		{name: "dbsize", arity: 1, flags: []string{"readonly"}, fn: cmdDBSize, group: "server", since: "1.0.0", summary: "Counts the keys (reads every leaf: O(N))."},
		{name: "flushdb", arity: -1, flags: []string{"write"}, fn: cmdFlushDB, group: "server", since: "1.0.0", summary: "Deletes every key (only with --enable-flushdb)."},
		{name: "flushall", arity: -1, flags: []string{"write"}, fn: cmdFlushDB, group: "server", since: "1.0.0", summary: "Same as FLUSHDB: there is one database."},
		// Server.
		{name: "info", arity: -1, flags: []string{}, fn: cmdInfo, group: "server", since: "1.0.0", summary: "Returns information and statistics, with a Strata section."},
		{name: "config", arity: -2, flags: []string{}, fn: cmdConfig, group: "server", since: "2.0.0", summary: "CONFIG GET of the settings clients ask about."},
		{name: "command", arity: -1, flags: []string{}, fn: cmdCommand, group: "server", since: "2.8.13", summary: "Returns details about commands (COMMAND, COUNT, INFO, DOCS)."},
		{name: "save", arity: 1, flags: []string{}, fn: cmdSave, group: "server", since: "1.0.0", summary: "Runs a Strata checkpoint."},
		{name: "shutdown", arity: -1, flags: []string{}, fn: cmdShutdown, group: "server", since: "1.0.0", summary: "Finishes in-flight commands, checkpoints, closes and exits."},
		{name: "strata", arity: -2, flags: []string{}, fn: cmdStrata, group: "server", since: "0.1.0", summary: "STRATA STATS: the engine's statistics as JSON."},
	}
	t := make(map[string]*command, len(list))
	for _, c := range list {
		if m != nil {
			c.latency = m.cmdLatency.WithLabelValues(c.name)
			c.errors = m.cmdErrors.WithLabelValues(c.name)
		}
		t[c.name] = c
	}
	return t
}

// sortedCommands lists the table by name.
func (s *Server) sortedCommands() []*command {
	out := make([]*command, 0, len(s.commands))
	for _, c := range s.commands {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// dbError turns a database error into a reply.
func (r *reply) dbError(err error) {
	switch {
	case errors.Is(err, strata.ErrEmptyKey):
		r.err("ERR empty keys are not supported by Strata")
	case errors.Is(err, strata.ErrKeyTooLarge):
		r.err(fmt.Sprintf("ERR key too large: %v", err))
	case errors.Is(err, strata.ErrValueTooLarge):
		r.err(errTooBig)
	case errors.Is(err, strata.ErrBatchTooLarge):
		r.err(fmt.Sprintf("ERR %v", err))
	case errors.Is(err, strata.ErrClosed):
		r.err("ERR server is shutting down")
	case errors.Is(err, strata.ErrCorrupt):
		r.err(fmt.Sprintf("ERR corrupt data: %v", err))
	default:
		r.err(fmt.Sprintf("ERR %v", err))
	}
}

package server

// Connection and server commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT,
// CLIENT, CONFIG, COMMAND, SAVE, SHUTDOWN, STRATA. INFO is in info.go.

import (
	"crypto/subtle"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// RedisVersion is the Redis version whose RESP2 behaviour the server
// follows, reported where clients look for one (HELLO, INFO).
const RedisVersion = "7.0.0"

func cmdPing(s *Server, r *reply, args [][]byte) {
	switch len(args) {
	case 1:
		r.simple("PONG")
	case 2:
		r.bulk(args[1])
	default:
		r.err(errArity("ping"))
	}
}

func cmdEcho(s *Server, r *reply, args [][]byte) { r.bulk(args[1]) }

func (s *Server) checkPassword(user, pass []byte) bool {
	if user != nil && !equalFold(user, "default") {
		return false
	}
	return subtle.ConstantTimeCompare(pass, []byte(s.cfg.Password)) == 1
}

func cmdAuth(s *Server, r *reply, args [][]byte) {
	if len(args) > 3 {
		r.err(errSyntax)
		return
	}
	if s.cfg.Password == "" {
		r.err("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
		return
	}
	var user []byte
	pass := args[1]
	if len(args) == 3 {
		user, pass = args[1], args[2]
	}
	if !s.checkPassword(user, pass) {
		r.err(errWrongPass)
		return
	}
	r.cl.authed = true
	r.ok()
}

func cmdHello(s *Server, r *reply, args [][]byte) {
	if len(args) >= 2 {
		v, ok := parseInt64(args[1])
		if !ok {
			r.err("ERR Protocol version is not an integer or out of range")
			return
		}
		if v != 2 {
			r.err("NOPROTO unsupported protocol version: Strata speaks RESP2 only")
			return
		}
	}
	authed := r.cl.authed
	var name []byte
	for i := 2; i < len(args); i++ {
		switch {
		case equalFold(args[i], "auth") && i+2 < len(args):
			if s.cfg.Password == "" {
				r.err("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
				return
			}
			if !s.checkPassword(args[i+1], args[i+2]) {
				r.err(errWrongPass)
				return
			}
			authed = true
			i += 2
		case equalFold(args[i], "setname") && i+1 < len(args):
			name = args[i+1]
			i++
		default:
			r.err(errSyntax)
			return
		}
	}
	if !authed {
		r.err("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	r.cl.authed = true
	if name != nil {
		r.cl.name = string(name)
	}
	r.array(14)
	r.bulkString("server")
	r.bulkString("strata")
	r.bulkString("version")
	r.bulkString(RedisVersion)
	r.bulkString("proto")
	r.int(2)
	r.bulkString("id")
	r.int(r.cl.id)
	r.bulkString("mode")
	r.bulkString("standalone")
	r.bulkString("role")
	r.bulkString("master")
	r.bulkString("modules")
	r.emptyArray()
}

func cmdSelect(s *Server, r *reply, args [][]byte) {
	n, ok := parseInt64(args[1])
	switch {
	case !ok:
		r.err(errNotInteger)
	case n != 0:
		r.err("ERR DB index is out of range")
	default:
		r.ok()
	}
}

func cmdQuit(s *Server, r *reply, _ [][]byte) {
	r.ok()
	r.closeConn() // flushes the OK first
}

func cmdClient(s *Server, r *reply, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	switch {
	case sub == "id" && len(args) == 2:
		r.int(r.cl.id)
	case sub == "getname" && len(args) == 2:
		if r.cl.name == "" {
			r.null()
		} else {
			r.bulkString(r.cl.name)
		}
	case sub == "setname" && len(args) == 3:
		if strings.ContainsAny(string(args[2]), " \n") {
			r.err("ERR Client names cannot contain spaces, newlines or special characters.")
			return
		}
		r.cl.name = string(args[2])
		r.ok()
	case sub == "setinfo" && len(args) == 4:
		// Client library name and version: accepted, not kept.
		r.ok()
	case sub == "help":
		lines := []string{"CLIENT <subcommand> [<arg> ...]. Subcommands are:", "ID", "GETNAME", "SETNAME <name>", "SETINFO <attr> <value>"}
		r.array(len(lines))
		for _, l := range lines {
			r.simple(l)
		}
	case sub == "id" || sub == "getname" || sub == "setname" || sub == "setinfo":
		r.err("ERR wrong number of arguments for 'client|" + sub + "' command")
	default:
		r.err(errUnknownSub("CLIENT", args))
	}
}

// configParams are the CONFIG GET parameters clients commonly ask about.
func (s *Server) configParams() [][2]string {
	timeout := strconv.Itoa(int(s.cfg.IdleTimeout / time.Second))
	return [][2]string{
		{"appendfsync", s.cfg.AppendFsync},
		{"appendonly", "yes"},
		{"bind", "127.0.0.1"},
		{"databases", "1"},
		{"maxclients", strconv.Itoa(s.cfg.MaxClients)},
		{"maxmemory", "0"},
		{"maxmemory-policy", "noeviction"},
		{"port", strconv.Itoa(s.cfg.Port)},
		{"proto-max-bulk-len", strconv.FormatInt(s.cfg.Limits.MaxBulkLen, 10)},
		{"requirepass", ""}, // never revealed
		{"save", ""},
		{"timeout", timeout},
	}
}

func cmdConfig(s *Server, r *reply, args [][]byte) {
	switch {
	case equalFold(args[1], "get"):
		if len(args) < 3 {
			r.err("ERR wrong number of arguments for 'config|get' command")
			return
		}
		var out [][2]string
		for _, p := range s.configParams() {
			for _, pat := range args[2:] {
				if globMatch(lowerInto(nil, pat), []byte(p[0])) {
					out = append(out, p)
					break
				}
			}
		}
		r.array(2 * len(out))
		for _, p := range out {
			r.bulkString(p[0])
			r.bulkString(p[1])
		}
	case equalFold(args[1], "set"):
		r.err("ERR CONFIG SET is not supported by Strata: restart strata serve with other flags")
	case equalFold(args[1], "resetstat"):
		r.ok()
	default:
		r.err(errUnknownSub("CONFIG", args))
	}
}

func cmdCommand(s *Server, r *reply, args [][]byte) {
	if len(args) == 1 {
		cmds := s.sortedCommands()
		r.array(len(cmds))
		for _, c := range cmds {
			writeCommandInfo(r, c)
		}
		return
	}
	switch {
	case equalFold(args[1], "count"):
		r.int(int64(len(s.commands)))
	case equalFold(args[1], "info"):
		names := args[2:]
		if len(names) == 0 {
			cmdCommand(s, r, args[:1])
			return
		}
		r.array(len(names))
		for _, n := range names {
			if c := s.commands[strings.ToLower(string(n))]; c != nil {
				writeCommandInfo(r, c)
			} else {
				r.null()
			}
		}
	case equalFold(args[1], "docs"):
		var cmds []*command
		if len(args) == 2 {
			cmds = s.sortedCommands()
		} else {
			for _, n := range args[2:] {
				if c := s.commands[strings.ToLower(string(n))]; c != nil {
					cmds = append(cmds, c)
				}
			}
		}
		r.array(2 * len(cmds))
		for _, c := range cmds {
			r.bulkString(c.name)
			r.array(6)
			r.bulkString("summary")
			r.bulkString(c.summary)
			r.bulkString("since")
			r.bulkString(c.since)
			r.bulkString("group")
			r.bulkString(c.group)
		}
	case equalFold(args[1], "list"):
		cmds := s.sortedCommands()
		r.array(len(cmds))
		for _, c := range cmds {
			r.bulkString(c.name)
		}
	default:
		r.err(errUnknownSub("COMMAND", args))
	}
}

// writeCommandInfo writes COMMAND's ten-element entry of Redis 7.
func writeCommandInfo(r *reply, c *command) {
	r.array(10)
	r.bulkString(c.name)
	r.int(int64(c.arity))
	r.array(len(c.flags))
	for _, f := range c.flags {
		r.simple(f)
	}
	r.int(int64(c.firstKey))
	r.int(int64(c.lastKey))
	r.int(int64(c.step))
	r.emptyArray() // ACL categories
	r.emptyArray() // tips
	r.emptyArray() // key specs
	r.emptyArray() // subcommands
}

func cmdSave(s *Server, r *reply, _ [][]byte) {
	start := time.Now()
	err := s.db.Checkpoint()
	if m := s.cfg.Metrics; m != nil && err == nil {
		m.checkpointDuration.Observe(time.Since(start).Seconds())
	}
	if err != nil {
		r.dbError(err)
		return
	}
	r.ok()
}

func cmdShutdown(s *Server, r *reply, args [][]byte) {
	for _, a := range args[1:] {
		if !equalFold(a, "nosave") && !equalFold(a, "save") && !equalFold(a, "now") && !equalFold(a, "force") {
			r.err(errSyntax)
			return
		}
	}
	// Like Redis: no reply; the connection closes when the server stops.
	s.requestShutdown()
}

func cmdStrata(s *Server, r *reply, args [][]byte) {
	switch {
	case equalFold(args[1], "stats") && len(args) == 2:
		b, err := json.Marshal(s.db.Stats())
		if err != nil {
			r.err("ERR " + err.Error())
			return
		}
		r.bulk(b)
	default:
		r.err(errUnknownSub("STRATA", args))
	}
}

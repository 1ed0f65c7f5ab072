package server

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// wantErr checks that err is a Redis error reply with exactly text msg.
func wantErr(t *testing.T, what string, err error, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %q", what, msg)
	}
	if err.Error() != msg {
		t.Fatalf("%s: error %q, want %q", what, err.Error(), msg)
	}
}

func TestStringCommands(t *testing.T) {
	ts := startServer(t, Config{})
	c := ts.client()
	check := func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s = %v, want %v", what, got, want)
		}
	}
	if err := c.Get(bg, "nope").Err(); err != redis.Nil {
		t.Fatalf("GET of a missing key: %v", err)
	}
	check("SET", c.Set(bg, "k", "v1", 0).Val(), "OK")
	check("GET", c.Get(bg, "k").Val(), "v1")
	// SET NX / XX / GET.
	if err := c.SetNX(bg, "k", "v2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	check("GET after SET NX on a present key", c.Get(bg, "k").Val(), "v1")
	check("SET XX on a missing key", c.SetXX(bg, "missing", "x", 0).Val(), false)
	check("EXISTS after SET XX", c.Exists(bg, "missing").Val(), 0)
	check("SET XX", c.SetXX(bg, "k", "v3", 0).Val(), true)
	check("SET ... GET", c.SetArgs(bg, "k", "v4", redis.SetArgs{Get: true}).Val(), "v3")
	if err := c.SetArgs(bg, "fresh", "f", redis.SetArgs{Get: true}).Err(); err != redis.Nil {
		t.Fatalf("SET GET of a missing key: %v", err)
	}
	check("SET NX GET on a present key returns it", c.SetArgs(bg, "k", "zz", redis.SetArgs{Mode: "NX", Get: true}).Val(), "v4")
	check("value after SET NX GET", c.Get(bg, "k").Val(), "v4")
	check("SET KEEPTTL", c.Do(bg, "SET", "k", "v5", "KEEPTTL").Val(), "OK")
	// GETSET, SETNX.
	check("GETSET", c.GetSet(bg, "k", "v6").Val(), "v5")
	if err := c.GetSet(bg, "gs", "a").Err(); err != redis.Nil {
		t.Fatalf("GETSET of a missing key: %v", err)
	}
	check("SETNX new", c.Do(bg, "SETNX", "nx", "1").Val(), 1)
	check("SETNX present", c.Do(bg, "SETNX", "nx", "2").Val(), 0)
	check("GET nx", c.Get(bg, "nx").Val(), "1")
	// MSET / MGET.
	check("MSET", c.MSet(bg, "a", "1", "b", "2", "c", "3").Val(), "OK")
	check("MGET", c.MGet(bg, "a", "nokey", "c", "b").Val(), []any{"1", nil, "3", "2"})
	check("MGET one", c.MGet(bg, "a").Val(), []any{"1"})
	// Integers.
	check("INCR new", c.Incr(bg, "n").Val(), 1)
	check("INCRBY", c.IncrBy(bg, "n", 41).Val(), 42)
	check("DECR", c.Decr(bg, "n").Val(), 41)
	check("DECRBY", c.DecrBy(bg, "n", 50).Val(), -9)
	check("GET n", c.Get(bg, "n").Val(), "-9")
	c.Set(bg, "big", strconv.FormatInt(math.MaxInt64-1, 10), 0)
	check("INCR to MaxInt64", c.Incr(bg, "big").Val(), int64(math.MaxInt64))
	c.Set(bg, "small", strconv.FormatInt(math.MinInt64, 10), 0)
	check("INCRBY on MinInt64", c.IncrBy(bg, "small", 5).Val(), int64(math.MinInt64+5))
	// APPEND, STRLEN.
	check("APPEND new", c.Append(bg, "s", "hello").Val(), 5)
	check("APPEND", c.Append(bg, "s", " world").Val(), 11)
	check("GET s", c.Get(bg, "s").Val(), "hello world")
	check("STRLEN", c.StrLen(bg, "s").Val(), 11)
	check("STRLEN missing", c.StrLen(bg, "nokey").Val(), 0)
	// DEL / EXISTS.
	check("EXISTS counts duplicates", c.Exists(bg, "a", "a", "b", "nokey").Val(), 3)
	check("DEL", c.Del(bg, "a", "b", "nokey", "a").Val(), 2)
	check("EXISTS after DEL", c.Exists(bg, "a", "b", "c").Val(), 1)
	// Binary-safe keys and values.
	bin := string([]byte{0, 1, 2, '\r', '\n', 0xff})
	check("SET binary", c.Set(bg, bin, bin+bin, 0).Val(), "OK")
	check("GET binary", c.Get(bg, bin).Val(), bin+bin)
	// A value stored in overflow pages.
	large := strings.Repeat("0123456789", 100_000)
	check("SET 1 MB", c.Set(bg, "large", large, 0).Val(), "OK")
	if got := c.Get(bg, "large").Val(); got != large {
		t.Fatalf("GET of a 1 MB value: %d bytes", len(got))
	}
	check("empty value", c.Set(bg, "empty", "", 0).Val(), "OK")
	if v, err := c.Get(bg, "empty").Result(); err != nil || v != "" {
		t.Fatalf("GET empty value: %q %v", v, err)
	}
}

func TestErrorReplies(t *testing.T) {
	ts := startServer(t, Config{})
	c := ts.client()
	c.Set(bg, "s", "abc", 0)
	c.Set(bg, "max", strconv.FormatInt(math.MaxInt64, 10), 0)
	c.Set(bg, "min", strconv.FormatInt(math.MinInt64, 10), 0)
	cases := []struct {
		args []any
		want string
	}{
		{[]any{"nosuchcmd", "a", "b"}, "ERR unknown command 'nosuchcmd', with args beginning with: 'a' 'b' "},
		{[]any{"get"}, "ERR wrong number of arguments for 'get' command"},
		{[]any{"GET", "a", "b"}, "ERR wrong number of arguments for 'get' command"},
		{[]any{"set", "k"}, "ERR wrong number of arguments for 'set' command"},
		{[]any{"mset", "a", "1", "b"}, "ERR wrong number of arguments for 'mset' command"},
		{[]any{"set", "k", "v", "nx", "xx"}, "ERR syntax error"},
		{[]any{"set", "k", "v", "bogus"}, "ERR syntax error"},
		{[]any{"set", "k", "v", "ex", "10"}, "ERR key expiry (SET EX/PX/EXAT/PXAT) is not supported: Strata keys do not expire"},
		{[]any{"set", "k", "v", "px"}, "ERR syntax error"},
		{[]any{"incr", "s"}, "ERR value is not an integer or out of range"},
		{[]any{"incrby", "n", "1.5"}, "ERR value is not an integer or out of range"},
		{[]any{"incrby", "n", "+1"}, "ERR value is not an integer or out of range"},
		{[]any{"incrby", "n", "01"}, "ERR value is not an integer or out of range"},
		{[]any{"incrby", "n", "99999999999999999999"}, "ERR value is not an integer or out of range"},
		{[]any{"incr", "max"}, "ERR increment or decrement would overflow"},
		{[]any{"decr", "min"}, "ERR increment or decrement would overflow"},
		{[]any{"decrby", "n", "-9223372036854775808"}, "ERR decrement would overflow"},
		{[]any{"incrby", "min", "-1"}, "ERR increment or decrement would overflow"},
		{[]any{"select", "1"}, "ERR DB index is out of range"},
		{[]any{"select", "x"}, "ERR value is not an integer or out of range"},
		{[]any{"hello", "3"}, "NOPROTO unsupported protocol version: Strata speaks RESP2 only"},
		{[]any{"auth", "pw"}, "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"},
		{[]any{"scan", "x"}, "ERR invalid cursor"},
		{[]any{"scan", "12345"}, "ERR invalid cursor"},
		{[]any{"scan", "0", "count", "0"}, "ERR syntax error"},
		{[]any{"scan", "0", "count"}, "ERR syntax error"},
		{[]any{"flushdb"}, "ERR FLUSHDB and FLUSHALL are disabled; start strata serve with --enable-flushdb to allow them"},
		{[]any{"config", "set", "maxmemory", "1"}, "ERR CONFIG SET is not supported by Strata: restart strata serve with other flags"},
		{[]any{"client", "nope"}, "ERR unknown subcommand 'nope'. Try CLIENT HELP."},
		{[]any{"set", "", "v"}, "ERR empty keys are not supported by Strata"},
		{[]any{"set", strings.Repeat("k", 5000), "v"}, "ERR key too large: strata: key too large: 5000 bytes, the limit is 1008"},
	}
	for _, tc := range cases {
		err := c.Do(bg, tc.args...).Err()
		wantErr(t, fmt.Sprint(tc.args), err, tc.want)
	}
	// Errors change nothing.
	if v := c.Get(bg, "s").Val(); v != "abc" {
		t.Fatalf("s = %q after a failed INCR", v)
	}
	if v := c.Get(bg, "max").Val(); v != strconv.FormatInt(math.MaxInt64, 10) {
		t.Fatalf("max = %q after an overflow", v)
	}
	if n := c.Exists(bg, "k").Val(); n != 0 {
		t.Fatal("a refused SET wrote its key")
	}
	// The connection is still usable.
	if err := c.Ping(bg).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestConnectionCommands(t *testing.T) {
	ts := startServer(t, Config{Port: 6380})
	c := ts.client()
	if v := c.Ping(bg).Val(); v != "PONG" {
		t.Fatalf("PING = %q", v)
	}
	if v := c.Do(bg, "PING", "hi").Val(); v != "hi" {
		t.Fatalf("PING hi = %v", v)
	}
	if v := c.Echo(bg, "x y").Val(); v != "x y" {
		t.Fatalf("ECHO = %q", v)
	}
	if v := c.Do(bg, "SELECT", "0").Val(); v != "OK" {
		t.Fatalf("SELECT 0 = %v", v)
	}
	hello, err := c.Do(bg, "HELLO", "2").Slice()
	if err != nil || len(hello) != 14 || hello[0] != "server" || hello[5] != int64(2) {
		t.Fatalf("HELLO 2 = %v, %v", hello, err)
	}
	if err := c.Do(bg, "CLIENT", "SETNAME", "me").Err(); err != nil {
		t.Fatal(err)
	}
	if v := c.Do(bg, "CLIENT", "GETNAME").Val(); v != "me" {
		t.Fatalf("CLIENT GETNAME = %v", v)
	}
	if v, err := c.Do(bg, "CONFIG", "GET", "save").StringSlice(); err != nil || !slices.Equal(v, []string{"save", ""}) {
		t.Fatalf("CONFIG GET save = %v, %v", v, err)
	}
	if v, err := c.Do(bg, "CONFIG", "GET", "append*").StringSlice(); err != nil || !slices.Equal(v, []string{"appendfsync", "everysec", "appendonly", "yes"}) {
		t.Fatalf("CONFIG GET append* = %v, %v", v, err)
	}
	if v := c.Do(bg, "CONFIG", "GET", "PORT").Val(); fmt.Sprint(v) != "[port 6380]" {
		t.Fatalf("CONFIG GET PORT = %v", v)
	}
	n, err := c.Do(bg, "COMMAND", "COUNT").Int()
	if err != nil || n != len(ts.srv.commands) {
		t.Fatalf("COMMAND COUNT = %d, %v", n, err)
	}
	// go-redis parses COMMAND's reply itself: it must understand ours.
	info, err := c.Command(bg).Result()
	if err != nil || info["get"] == nil || info["get"].Arity != 2 || info["mset"].LastKeyPos != -1 {
		t.Fatalf("COMMAND: %v", err)
	}
	docs, err := c.Do(bg, "COMMAND", "DOCS", "get").Slice()
	if err != nil || len(docs) != 2 || docs[0] != "get" {
		t.Fatalf("COMMAND DOCS get = %v, %v", docs, err)
	}
	text, err := c.Info(bg).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Server\r\n", "redis_version:", "# Strata\r\n", "hit_ratio_uncompressed:", "compressed_share:", "t_disk_read_us:", "appendfsync:everysec"} {
		if !strings.Contains(text, want) {
			t.Fatalf("INFO lacks %q:\n%s", want, text)
		}
	}
	c.Set(bg, "k", "v", 0)
	if text := c.Info(bg, "keyspace").Val(); !strings.Contains(text, "db0:keys=1,") {
		t.Fatalf("INFO keyspace:\n%s", text)
	}
	if text := c.Info(bg, "strata").Val(); strings.Contains(text, "# Server") || !strings.Contains(text, "# Strata") {
		t.Fatalf("INFO strata:\n%s", text)
	}
	if js := c.Do(bg, "STRATA", "STATS").Val(); !strings.Contains(fmt.Sprint(js), `"Pool":`) {
		t.Fatalf("STRATA STATS = %v", js)
	}
	if err := c.Do(bg, "SAVE").Err(); err != nil {
		t.Fatal(err)
	}
	// QUIT answers OK and closes.
	r := ts.raw()
	r.send("*1\r\n$4\r\nQUIT\r\n")
	r.expect("+OK")
	if !r.closed(2e9) {
		t.Fatal("QUIT left the connection open")
	}
}

func TestInlineCommands(t *testing.T) {
	ts := startServer(t, Config{})
	r := ts.raw()
	r.send("SET a \"hello world\"\r\nGET a\r\n\r\nPING\n")
	r.expect("+OK")
	r.expect("$11")
	r.expect("hello world")
	r.expect("+PONG")
}

func TestDBSizeAndFlush(t *testing.T) {
	ts := startServer(t, Config{EnableFlushDB: true})
	c := ts.client()
	for i := 0; i < 10000; i += 500 {
		var kv []any
		for j := i; j < i+500; j++ {
			kv = append(kv, fmt.Sprintf("k%05d", j), "v")
		}
		if err := c.MSet(bg, kv...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.DBSize(bg).Val(); n != 10000 {
		t.Fatalf("DBSIZE = %d", n)
	}
	if err := c.FlushDB(bg).Err(); err != nil {
		t.Fatal(err)
	}
	if n := c.DBSize(bg).Val(); n != 0 {
		t.Fatalf("DBSIZE after FLUSHDB = %d", n)
	}
	wantErr(t, "FLUSHDB bogus", c.Do(bg, "FLUSHDB", "bogus").Err(), "ERR syntax error")
}

func TestPipelining(t *testing.T) {
	ts := startServer(t, Config{})
	c := ts.client(func(o *redis.Options) { o.ReadTimeout = time.Minute })
	const n = 1000
	cmds, err := c.Pipelined(bg, func(p redis.Pipeliner) error {
		for i := 0; i < n; i++ {
			p.Set(bg, fmt.Sprintf("p%d", i), i, 0)
			p.Incr(bg, "ctr")
			p.Get(bg, fmt.Sprintf("p%d", i))
		}
		p.Get(bg, "missing")
		p.Do(bg, "nosuch")
		p.Ping(bg)
		return nil
	})
	if len(cmds) != 3*n+3 {
		t.Fatalf("%d replies for %d commands (%v)", len(cmds), 3*n+3, err)
	}
	for i := 0; i < n; i++ {
		if v := cmds[3*i+1].(*redis.IntCmd).Val(); v != int64(i+1) {
			t.Fatalf("INCR %d = %d: replies out of order", i, v)
		}
		if v := cmds[3*i+2].(*redis.StringCmd).Val(); v != strconv.Itoa(i) {
			t.Fatalf("GET p%d = %q", i, v)
		}
	}
	if cmds[3*n].Err() != redis.Nil || !strings.HasPrefix(cmds[3*n+1].Err().Error(), "ERR unknown command") || cmds[3*n+2].Err() != nil {
		t.Fatalf("tail of the pipeline: %v %v %v", cmds[3*n].Err(), cmds[3*n+1].Err(), cmds[3*n+2].Err())
	}
	// A raw pipeline in one write, replies in order.
	r := ts.raw()
	var b strings.Builder
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "*2\r\n$4\r\nECHO\r\n$%d\r\n%d\r\n", len(strconv.Itoa(i)), i)
	}
	r.send(b.String())
	for i := 0; i < 100; i++ {
		r.expect("$" + strconv.Itoa(len(strconv.Itoa(i))))
		r.expect(strconv.Itoa(i))
	}
}

func TestAuth(t *testing.T) {
	ts := startServer(t, Config{Password: "s3cret"})
	// Without a password nothing but AUTH, HELLO and QUIT works.
	anon := ts.client()
	for _, args := range [][]any{{"ping"}, {"get", "k"}, {"set", "k", "v"}, {"info"}, {"scan", "0"}, {"command"}} {
		wantErr(t, fmt.Sprint(args), anon.Do(bg, args...).Err(), "NOAUTH Authentication required.")
	}
	wantErr(t, "wrong password", anon.Do(bg, "AUTH", "nope").Err(), "WRONGPASS invalid username-password pair or user is disabled.")
	wantErr(t, "wrong user", anon.Do(bg, "AUTH", "bob", "s3cret").Err(), "WRONGPASS invalid username-password pair or user is disabled.")
	wantErr(t, "HELLO unauthenticated", anon.Do(bg, "HELLO", "2").Err(), "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
	// go-redis authenticates itself with the password.
	c := ts.client(func(o *redis.Options) { o.Password = "s3cret" })
	if err := c.Set(bg, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// Also with RESP2 forced (AUTH, not HELLO).
	c2 := ts.client(func(o *redis.Options) { o.Password = "s3cret"; o.Protocol = 2 })
	if v := c2.Get(bg, "k").Val(); v != "v" {
		t.Fatalf("GET after AUTH = %q", v)
	}
	// A wrong password fails the connection.
	bad := ts.client(func(o *redis.Options) { o.Password = "wrong" })
	if err := bad.Ping(bg).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("PING with a wrong password: %v", err)
	}
	// HELLO 2 AUTH default <pw>, and AUTH default <pw>.
	r := ts.raw()
	r.send("*5\r\n$5\r\nHELLO\r\n$1\r\n2\r\n$4\r\nAUTH\r\n$7\r\ndefault\r\n$6\r\ns3cret\r\n")
	r.expect("*14")
	r2 := ts.raw()
	r2.send("*3\r\n$4\r\nAUTH\r\n$7\r\ndefault\r\n$6\r\ns3cret\r\n*1\r\n$4\r\nPING\r\n")
	r2.expect("+OK")
	r2.expect("+PONG")
}

func TestMSetIsAtomic(t *testing.T) {
	ts := startServer(t, Config{})
	w, rd := ts.client(), ts.client()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 300; i++ {
			v := strconv.Itoa(i)
			if err := w.MSet(bg, "x", v, "y", v, "z", v).Err(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		vals, err := rd.MGet(bg, "x", "y", "z").Result()
		if err != nil {
			t.Fatal(err)
		}
		if vals[0] != vals[1] || vals[1] != vals[2] {
			t.Fatalf("MGET saw a partial MSET: %v", vals)
		}
	}
}

func TestErrorsAreRedisErrors(t *testing.T) {
	ts := startServer(t, Config{})
	c := ts.client()
	err := c.Incr(bg, "k").Err()
	c.Set(bg, "k", "x", 0)
	err = c.Incr(bg, "k").Err()
	var re redis.Error
	if !errors.As(err, &re) {
		t.Fatalf("%v is not a redis.Error", err)
	}
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The serve crash test runs `strata serve --appendfsync always` in a child
// process (this test binary, re-executed), has several clients write to it,
// kills it with SIGKILL at a random moment, restarts it on the same
// directory and checks that every acknowledged write is there: SETs with
// their values, MSETs whole, INCR counters at their last acknowledged value
// (or one more, if an INCR was in flight).

const serveCrashEnv = "STRATA_SERVE_CRASH_CHILD"

// TestServeCrashChild is the child: strata serve on the directory in the
// environment, a loopback port chosen by the kernel, 1 MiB of cache in
// 4 KiB pages (so pages are evicted and written between checkpoints).
func TestServeCrashChild(t *testing.T) {
	dir := os.Getenv(serveCrashEnv)
	if dir == "" {
		t.Skip("child of TestServeCrash only")
	}
	cmd := newServeCommand()
	cmd.SetArgs([]string{dir, "--addr", "127.0.0.1:0", "--appendfsync", "always", "--cache", "1MiB", "--page-size", "4KiB"})
	cmd.SetOut(os.Stdout)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// serveCrashModel is what the clients were told is durable.
type serveCrashModel struct {
	mu      sync.Mutex
	sets    map[string]string // acknowledged SETs and MSETs
	ctr     map[string]int64  // counter → last acknowledged INCR
	pending map[string]bool   // counter → an INCR was in flight at the kill
}

func TestServeCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	if os.Getenv(serveCrashEnv) != "" {
		t.Skip("in the child")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("STRATA_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (STRATA_CRASH_SEED repeats the schedule; timing still varies)", seed)
	rng := rand.New(rand.NewPCG(seed, 12))
	dir := t.TempDir()
	m := &serveCrashModel{sets: map[string]string{}, ctr: map[string]int64{}, pending: map[string]bool{}}
	const rounds, clients = 20, 4
	total := 0
	for round := 0; round < rounds; round++ {
		child, addr := startServeChild(t, dir)
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, Protocol: 2})
		verifyServeCrash(t, round, c, m)
		c.Close()
		// Load, then SIGKILL at a random moment.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		acks := make([]int, clients)
		for id := 0; id < clients; id++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				acks[id] = serveCrashClient(addr, round, id, m, stop)
			}()
		}
		time.Sleep(time.Duration(30+rng.IntN(300)) * time.Millisecond)
		child.Process.Signal(syscall.SIGKILL)
		close(stop)
		wg.Wait()
		child.Wait()
		n := 0
		for _, a := range acks {
			n += a
		}
		total += n
		t.Logf("round %d: %d writes acknowledged before the kill", round, n)
	}
	child, addr := startServeChild(t, dir)
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, Protocol: 2})
	verifyServeCrash(t, rounds, c, m)
	c.Close()
	child.Process.Signal(syscall.SIGTERM)
	if err := child.Wait(); err != nil {
		t.Fatalf("child after SIGTERM: %v", err)
	}
	if total == 0 {
		t.Fatal("no write was acknowledged")
	}
	t.Logf("%d acknowledged writes, all recovered, %d kills", total, rounds)
}

// startServeChild starts the server child on dir and returns it with its
// address, once it listens.
func startServeChild(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), serveCrashEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			// "strata serve: DIR on ADDR (appendfsync always)"
			if f := strings.Fields(sc.Text()); len(f) >= 5 && f[0] == "strata" && f[3] == "on" {
				addrc <- f[4]
			}
		}
		close(addrc)
	}()
	select {
	case addr, ok := <-addrc:
		if !ok {
			cmd.Wait()
			t.Fatal("server child exited before listening")
		}
		return cmd, addr
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("server child did not start")
	}
	return nil, ""
}

// serveCrashClient writes until the server dies; it records each write in
// the model once acknowledged, and returns how many it was.
func serveCrashClient(addr string, round, id int, m *serveCrashModel, stop chan struct{}) int {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, Protocol: 2, PoolSize: 1})
	defer c.Close()
	ctx := context.Background()
	ctr := fmt.Sprintf("ctr:%d", id)
	acks := 0
	for seq := 0; ; seq++ {
		pad := strings.Repeat(string(rune('a'+seq%26)), seq%700)
		key := fmt.Sprintf("r%d:c%d:%d", round, id, seq)
		val := fmt.Sprintf("%d/%d/%d;%s", round, id, seq, pad)
		var err error
		switch seq % 5 {
		case 0, 1:
			if err = c.Set(ctx, key, val, 0).Err(); err == nil {
				m.mu.Lock()
				m.sets[key] = val
				m.mu.Unlock()
			}
		case 2:
			if err = c.MSet(ctx, key+":a", val, key+":b", val+"b").Err(); err == nil {
				m.mu.Lock()
				m.sets[key+":a"], m.sets[key+":b"] = val, val+"b"
				m.mu.Unlock()
			}
		case 3:
			m.mu.Lock()
			m.pending[ctr] = true
			m.mu.Unlock()
			var n int64
			if n, err = c.Incr(ctx, ctr).Result(); err == nil {
				m.mu.Lock()
				m.ctr[ctr], m.pending[ctr] = n, false
				m.mu.Unlock()
			}
		case 4:
			if id == 0 && seq%50 == 4 {
				err = c.Do(ctx, "SAVE").Err() // a checkpoint under load
			} else {
				err = c.Get(ctx, key).Err()
				if err == redis.Nil {
					err = nil
				}
			}
		}
		if err != nil {
			return acks
		}
		acks++
	}
}

// verifyServeCrash checks the restarted server against the model, then
// makes the model the recovered state (counters read back).
func verifyServeCrash(t *testing.T, round int, c *redis.Client, m *serveCrashModel) {
	t.Helper()
	ctx := context.Background()
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]string, 0, len(m.sets))
	for k := range m.sets {
		keys = append(keys, k)
	}
	for i := 0; i < len(keys); i += 500 {
		chunk := keys[i:min(i+500, len(keys))]
		vals, err := c.MGet(ctx, chunk...).Result()
		if err != nil {
			t.Fatalf("round %d: MGET after restart: %v", round, err)
		}
		for j, k := range chunk {
			if vals[j] != m.sets[k] {
				t.Fatalf("round %d: acknowledged %s lost: got %.30v, want %.30q", round, k, vals[j], m.sets[k])
			}
		}
	}
	for ctr, want := range m.ctr {
		got, err := c.Get(ctx, ctr).Int64()
		if err != nil {
			t.Fatalf("round %d: GET %s: %v", round, ctr, err)
		}
		if got != want && !(m.pending[ctr] && got == want+1) {
			t.Fatalf("round %d: %s = %d, acknowledged %d (in flight: %v)", round, ctr, got, want, m.pending[ctr])
		}
		m.ctr[ctr], m.pending[ctr] = got, false
	}
	for ctr := range m.pending {
		if _, ok := m.ctr[ctr]; !ok && m.pending[ctr] {
			// The first INCR was in flight: 0 (absent) or 1.
			got, err := c.Get(ctx, ctr).Int64()
			if err != nil && err != redis.Nil || got > 1 {
				t.Fatalf("round %d: %s = %d (%v), no INCR acknowledged", round, ctr, got, err)
			}
			if err == nil {
				m.ctr[ctr] = got
			}
			m.pending[ctr] = false
		}
	}
}

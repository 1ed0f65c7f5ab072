package strata

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	stdmaps "maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// The process crash test runs the database in a child process (this test
// binary, re-executed) on the real file system and kills it with SIGKILL at
// a random moment: during recovery, commits, WAL syncs, page evictions or
// background checkpoints. The child acknowledges each synced commit on
// stdout; the parent then recovers the database and checks that every
// acknowledged commit survived and that the state is exactly that after
// commits 1..last — no partial batch, nothing lost, nothing invented.

const procCrashEnv = "STRATA_CRASH_CHILD"

// procCrashKeys is the key space: about 1 MiB of live data once most keys
// are set, as much as the cache holds.
const procCrashKeys = 2000

// procCrashOptions are the options of both processes: defaults (real file
// system, zstd, SyncAlways, direct I/O where supported) except a 1 MiB cache
// of 4 KiB pages, so pages are evicted and written between checkpoints, and
// a 128 KiB WAL limit, so background checkpoints run every hundred or so
// commits.
func procCrashOptions() *Options {
	return &Options{PageSize: 4096, CacheSize: 1 << 20, CheckpointWAL: 128 << 10}
}

// procCrashOp is one write of commit n, in order.
type procCrashOp struct {
	key   string
	value string // "" with del
	del   bool
}

// procCrashOps is commit n's batch: one to four sets of keys chosen from n
// (values "n=<n>" and 0..899 bytes of padding), a delete every third
// commit, and "last" = n. It is a pure function of n, so the parent can
// recompute the expected state of any prefix of commits.
func procCrashOps(n int) []procCrashOp {
	var ops []procCrashOp
	for i := 0; i < 1+n%4; i++ {
		k := fmt.Sprintf("k%04d", (n*37+i*101)%procCrashKeys)
		pad := strings.Repeat(string(rune('a'+(n+i)%26)), (n*13+i*7)%900)
		ops = append(ops, procCrashOp{key: k, value: fmt.Sprintf("n=%d;%s", n, pad)})
	}
	if n%3 == 0 {
		ops = append(ops, procCrashOp{key: fmt.Sprintf("k%04d", (n*53+11)%procCrashKeys), del: true})
	}
	return append(ops, procCrashOp{key: "last", value: strconv.Itoa(n)})
}

// procCrashState is the state after commits 1..last.
func procCrashState(last int) map[string]string {
	m := map[string]string{}
	for n := 1; n <= last; n++ {
		for _, op := range procCrashOps(n) {
			if op.del {
				delete(m, op.key)
			} else {
				m[op.key] = op.value
			}
		}
	}
	return m
}

func readLast(db *DB) (int, error) {
	v, err := db.Get([]byte("last"))
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(v))
}

// TestProcessCrashChild is the child: it commits forever (until killed, or
// for at most 20 s), acknowledging each commit after Commit(Sync) returns.
// It also reports how many background checkpoints have run, and how many
// pages the buffer pool has evicted and written back ("ckpt <count>",
// "evict <count>", "flush <count>").
func TestProcessCrashChild(t *testing.T) {
	dir := os.Getenv(procCrashEnv)
	if dir == "" {
		t.Skip("child of TestProcessCrash only")
	}
	db, err := Open(dir, procCrashOptions())
	if err != nil {
		t.Fatalf("child open: %v", err)
	}
	last, err := readLast(db)
	if err != nil {
		t.Fatalf("child read last: %v", err)
	}
	os.Stdout.Write([]byte(fmt.Sprintf("start %d\n", last)))
	deadline := time.Now().Add(20 * time.Second)
	st0 := db.Stats() // after the recovery checkpoint
	reported := map[string]int64{}
	report := func(name string, n int64) {
		if n != reported[name] {
			reported[name] = n
			os.Stdout.Write([]byte(fmt.Sprintf("%s %d\n", name, n)))
		}
	}
	for n := last + 1; time.Now().Before(deadline); n++ {
		b := db.NewBatch()
		for _, op := range procCrashOps(n) {
			if op.del {
				err = b.Delete([]byte(op.key))
			} else {
				err = b.Set([]byte(op.key), []byte(op.value))
			}
			if err != nil {
				t.Fatalf("child batch %d: %v", n, err)
			}
		}
		if err := b.Commit(Sync); err != nil {
			t.Fatalf("child commit %d: %v", n, err)
		}
		if _, err := os.Stdout.Write([]byte(fmt.Sprintf("ack %d\n", n))); err != nil {
			t.Fatalf("child ack: %v", err)
		}
		st := db.Stats()
		report("ckpt", st.Checkpoints-st0.Checkpoints)
		report("evict", st.Pool.Evictions-st0.Pool.Evictions)
		report("flush", st.Pool.Flushes-st0.Pool.Flushes)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestProcessCrash kills a child process that commits synced batches at 7
// random moments and recovers the database after each kill.
func TestProcessCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	if os.Getenv(procCrashEnv) != "" {
		t.Skip("in the child")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("STRATA_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (set STRATA_CRASH_SEED to repeat the kill schedule; timing still varies)", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	dir := t.TempDir()
	last, totalAcks := 0, 0
	busy := map[string]int{} // rounds in which the child checkpointed, evicted, flushed
	const rounds = 7
	for round := 0; round < rounds; round++ {
		// How to choose the moment of the kill: after a delay from the
		// start (it may land in recovery), after a delay from the first
		// acknowledgement, or after some number of acknowledgements.
		var (
			mode    = round % 3
			delay   = time.Duration(20+rng.IntN(281)) * time.Millisecond
			killAck = 1 + rng.IntN(250)
		)
		ackHi, work, desc := procCrashRound(t, dir, last, mode, delay, killAck)
		totalAcks += ackHi - last
		for k, n := range work {
			if n > 0 {
				busy[k]++
			}
		}

		db, err := Open(dir, procCrashOptions())
		if err != nil {
			t.Fatalf("round %d: recovery: %v", round, err)
		}
		got, err := readLast(db)
		if err != nil {
			t.Fatalf("round %d: read last: %v", round, err)
		}
		t.Logf("round %d: kill %s; start %d, last ack %d, recovered last %d; child: %d background checkpoints, %d evictions, %d page flushes",
			round, desc, last, ackHi, got, work["ckpt"], work["evict"], work["flush"])
		// Commit n+1 starts only after "ack n" is written, so at most one
		// unacknowledged commit can have reached the WAL.
		if got < ackHi || got > ackHi+1 {
			db.Close()
			t.Fatalf("round %d: recovered last = %d, acknowledged %d (want %d or %d)", round, got, ackHi, ackHi, ackHi+1)
		}
		want := procCrashState(got)
		state := scanAll(t, db)
		if !stdmaps.Equal(state, want) {
			db.Close()
			t.Fatalf("round %d: recovered state is not the state after commits 1..%d: %s", round, got, diffStates(state, want))
		}
		for _, k := range []string{"k0000", "k0123", "k1999"} {
			v, err := db.Get([]byte(k))
			if w, ok := want[k]; ok != (err == nil) || string(v) != w {
				db.Close()
				t.Fatalf("round %d: get %s = %.20q, %v; want %.20q", round, k, v, err, w)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatalf("round %d: close: %v", round, err)
		}
		last = got
	}
	if totalAcks == 0 {
		t.Fatal("no child acknowledged a commit")
	}
	t.Logf("%d commits acknowledged, %d recovered; of %d rounds, the child checkpointed in %d, evicted in %d, flushed in %d",
		totalAcks, last, rounds, busy["ckpt"], busy["evict"], busy["flush"])
}

// procCrashRound runs a child on dir, kills it, and returns the highest
// acknowledged commit (start if none) and the last counts of work it
// reported.
func procCrashRound(t *testing.T, dir string, start, mode int, delay time.Duration, killAck int) (ackHi int, work map[string]int, desc string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestProcessCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), procCrashEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type line struct {
		kind string
		n    int
	}
	lines := make(chan line, 1024)
	var other []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var l line
			if f := strings.Fields(sc.Text()); len(f) == 2 {
				if n, err := strconv.Atoi(f[1]); err == nil {
					l = line{f[0], n}
				}
			}
			if l.kind == "" {
				other = append(other, sc.Text())
				continue
			}
			lines <- l
		}
	}()

	ackHi = start
	work = map[string]int{}
	acks := 0
	started := false
	var timer <-chan time.Time
	switch mode {
	case 0:
		timer = time.After(delay)
		desc = fmt.Sprintf("%v after start", delay)
	case 1:
		desc = fmt.Sprintf("%v after the first ack", delay)
	default:
		desc = fmt.Sprintf("after %d acks", killAck)
	}
	killed := false
	kill := func() {
		if !killed {
			killed = true
			cmd.Process.Kill()
		}
	}
	check := func(l line) {
		switch l.kind {
		case "start":
			if l.n != start {
				kill()
				t.Errorf("child recovered last = %d, want %d", l.n, start)
			}
			started = true
		case "ack":
			if !started || l.n != ackHi+1 {
				kill()
				t.Errorf("child acknowledged %d after %d", l.n, ackHi)
			}
			ackHi = l.n
			acks++
		case "ckpt", "evict", "flush":
			work[l.kind] = l.n
		}
	}
loop:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				break loop // the child exited on its own
			}
			check(l)
			if l.kind == "ack" && acks == 1 && mode == 1 {
				timer = time.After(delay)
			}
			if l.kind == "ack" && mode == 2 && acks >= killAck {
				kill()
				break loop
			}
		case <-timer:
			kill()
			break loop
		}
	}
	// Acknowledgements written before the kill are still in the pipe.
	for l := range lines {
		check(l)
	}
	wg.Wait()
	werr := cmd.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if !killed {
		t.Fatalf("child exited before the kill (%v); other output %q; stderr:\n%s", werr, other, stderr.String())
	}
	if e := stderr.String(); strings.Contains(e, "DATA RACE") || strings.Contains(e, "panic") {
		t.Fatalf("child stderr:\n%s", e)
	}
	return ackHi, work, desc
}

// diffStates describes the first few differences between two states.
func diffStates(got, want map[string]string) string {
	var d []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			d = append(d, fmt.Sprintf("%s missing (want %.20q)", k, w))
		} else if g != w {
			d = append(d, fmt.Sprintf("%s = %.20q, want %.20q", k, g, w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("%s = %.20q unexpected", k, g))
		}
	}
	if len(d) > 5 {
		d = append(d[:5], fmt.Sprintf("... %d differences", len(d)))
	}
	return strings.Join(d, "; ")
}

// TestBackgroundCheckpointTrigger checks when commits start background
// checkpoints: once the WAL has grown by Options.CheckpointWAL bytes since
// the last checkpoint — not after every commit, and for Update transactions
// as for batches. (The process crash test saw dozens of checkpoints in a
// round of a hundred commits of ~1 KiB with a 128 KiB limit.)
func TestBackgroundCheckpointTrigger(t *testing.T) {
	const limit = 32 << 10
	open := func(t *testing.T) *DB {
		o := memOptions(vfs.NewMem())
		o.CheckpointWAL = limit
		db, err := Open("db", o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	// settle waits until no background checkpoint has run for 100 ms and
	// returns the count.
	settle := func(db *DB) int64 {
		n := db.Stats().Checkpoints
		for {
			time.Sleep(100 * time.Millisecond)
			m := db.Stats().Checkpoints
			if m == n {
				return n
			}
			n = m
		}
	}
	value := bytes.Repeat([]byte("v"), 1000)

	t.Run("batches", func(t *testing.T) {
		db := open(t)
		before := db.Stats().Checkpoints
		// 3 × limit of WAL: a few background checkpoints are due.
		for i := 0; i < 3*limit/len(value); i++ {
			if err := db.Set([]byte(fmt.Sprintf("k%03d", i%100)), value); err != nil {
				t.Fatal(err)
			}
		}
		mid := settle(db)
		if mid == before {
			t.Fatalf("no background checkpoint after %d KiB of WAL (limit %d KiB)", 3*limit>>10, limit>>10)
		}
		// 20 commits of ~20 bytes: far below the limit, no checkpoint due.
		for i := 0; i < 20; i++ {
			if err := db.Set([]byte(fmt.Sprintf("s%02d", i)), []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		if after := settle(db); after != mid {
			st := db.Stats()
			t.Fatalf("%d background checkpoints for 20 commits of ~20 bytes (WAL limit %d KiB; %d checkpoints for the first %d KiB); "+
				"the trigger compares wal.Stats().Bytes — bytes written since Open, never reset by a checkpoint — with CheckpointWAL, "+
				"so once a session has written CheckpointWAL bytes every commit asks for one and they run back to back (WAL Bytes now %d, files %d)",
				after-mid, limit>>10, mid-before, 3*limit>>10, st.WAL.Bytes, st.WAL.Files)
		}
	})

	t.Run("update", func(t *testing.T) {
		db := open(t)
		before := db.Stats().Checkpoints
		for i := 0; i < 3*limit/len(value); i++ {
			err := db.Update(func(tx *Tx) error { return tx.Set([]byte(fmt.Sprintf("k%03d", i%100)), value) })
			if err != nil {
				t.Fatal(err)
			}
		}
		if after := settle(db); after == before {
			st := db.Stats()
			t.Fatalf("no background checkpoint after %d KiB of WAL written by Update (limit %d KiB; WAL files %d): "+
				"Update commits through commitLocked and never kicks the checkpointer, as DB.commit does",
				st.WAL.Bytes>>10, limit>>10, st.WAL.Files)
		}
	})
}

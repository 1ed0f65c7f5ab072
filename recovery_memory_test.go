package strata

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/bench/hostenv"
)

// The WAL TestRecoveryMemoryBound replays: 20 times the cache, of commits
// of 100 rows of 900 bytes (records of about 90 KiB) over 40,000 keys (36
// MB of rows, 9 times the cache, so replay reads and evicts pages all the
// way).
const (
	recoveryChildEnv = "STRATA_RECOVERY_CHILD" // "write:DIR" or "recover:DIR"
	recoveryCache    = 4 << 20
	recoveryWAL      = 20 * recoveryCache
	recoveryRecord   = 100 * (900 + 20) // a commit's WAL record, at most
	// recoveryConstBytes is what recovery may use beyond the cache and
	// recoveryRecordFactor WAL records (docs/KVSTORE.md, "Memory during
	// recovery").
	recoveryConstBytes   = 40 << 20
	recoveryRecordFactor = 3
)

// TestRecoveryMemoryChild is the child of TestRecoveryMemoryBound: "write"
// fills the WAL with commits and exits without closing (a crash after
// Sync), printing the last commit's LSN; "recover" opens the database
// (replaying the WAL) once it reads a line on stdin, then prints the LSN it
// recovered to and its peak RSS.
func TestRecoveryMemoryChild(t *testing.T) {
	mode, dir, ok := strings.Cut(os.Getenv(recoveryChildEnv), ":")
	if !ok {
		t.Skip("child of TestRecoveryMemoryBound")
	}
	opts := &Options{CacheSize: recoveryCache, CheckpointWAL: 1 << 40, CheckpointReplaced: -1, Sync: SyncNever}
	lastLSN := func(db *DB) uint64 {
		db.mu.RLock()
		defer db.mu.RUnlock()
		return db.lsn
	}
	if mode == "recover" {
		bufio.NewReader(os.Stdin).ReadString('\n')
		db, err := Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("lsn %d\npeak-rss %d\n", lastLSN(db), peakRSS(t))
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	v := make([]byte, 900)
	written := int64(0)
	for written < recoveryWAL {
		b := db.NewBatch()
		for i := 0; i < 100; i++ {
			for j := range v {
				v[j] = byte('a' + rng.IntN(8))
			}
			b.Set([]byte(fmt.Sprintf("key%06d", rng.IntN(40000))), v)
		}
		if b.size > recoveryRecord {
			t.Fatalf("a batch of %d bytes, the bound assumes %d", b.size, recoveryRecord)
		}
		if err := b.Commit(nil); err != nil {
			t.Fatal(err)
		}
		written = db.Stats().WAL.Bytes
	}
	if err := db.Sync(); err != nil {
		t.Fatal(err)
	}
	if n := db.Stats().Checkpoints; n != 1 { // Open's, of the empty database
		t.Fatalf("%d checkpoints: the WAL to replay is shorter than written", n)
	}
	// The WAL's last record: deferred commits (deferred.go) may still be
	// queued, not yet in the tree's db.lsn.
	fmt.Printf("wal-bytes %d\nlsn %d\n", written, db.log.NextLSN()-1)
	os.Exit(0) // no Close: the next Open replays the whole WAL
}

// TestRecoveryMemoryBound: replaying a WAL 20 times the cache keeps the
// process within CacheSize + recoveryConstBytes + 3 WAL records of
// resident memory: replay changes the tree's pages in the pool, inside its
// budget, and the page store's own recovery reads its log through a fixed
// window. The recovering child runs under a cgroup memory limit of that
// bound where one can be made (page cache included), and its peak RSS is
// checked against it.
func TestRecoveryMemoryBound(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory makes RSS meaningless; .ci/run runs this test without it")
	}
	if testing.Short() {
		t.Skip("writes and replays an 80 MiB WAL")
	}
	dir := t.TempDir()
	run := func(mode string, limit int64) string {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestRecoveryMemoryChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), recoveryChildEnv+"="+mode+":"+dir, "GOMEMLIMIT=off", "GOGC=100")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var g *hostenv.Group
		if limit > 0 {
			if g, err = hostenv.Limit(fmt.Sprintf("strata-recovery-test-%d", os.Getpid()), limit); err == nil {
				defer g.Close()
				if err := g.Add(cmd.Process.Pid); err != nil {
					t.Logf("cgroup: %v; checking peak RSS only", err)
				}
			} else {
				t.Logf("no memory limit (%v); checking peak RSS only", err)
			}
		}
		stdin.Write([]byte("go\n"))
		stdin.Close()
		werr := cmd.Wait()
		if g != nil {
			if n, ok := g.OOMKills(); ok && n > 0 {
				t.Fatalf("%s was killed by a %d MiB memory limit:\n%s", mode, limit>>20, out.String())
			}
		}
		if werr != nil {
			t.Fatalf("%s child: %v\n%s", mode, werr, out.String())
		}
		return out.String()
	}
	figure := func(out, name string) int64 {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[0] == name {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				return n
			}
		}
		t.Fatalf("no %s in:\n%s", name, out)
		return 0
	}
	wrote := run("write", 0)
	walBytes, wroteLSN := figure(wrote, "wal-bytes"), figure(wrote, "lsn")
	bound := int64(recoveryCache + recoveryConstBytes + recoveryRecordFactor*recoveryRecord)
	out := run("recover", bound)
	if got := figure(out, "lsn"); got != wroteLSN {
		t.Fatalf("recovered to WAL record %d, the writer synced up to %d", got, wroteLSN)
	}
	peak := figure(out, "peak-rss")
	t.Logf("replayed a %.0f MiB WAL (%.0f× the %d MiB cache, %d records): peak RSS %.1f MiB, bound %.1f MiB",
		float64(walBytes)/(1<<20), float64(walBytes)/recoveryCache, recoveryCache>>20, wroteLSN,
		float64(peak)/(1<<20), float64(bound)/(1<<20))
	if peak > bound {
		t.Fatalf("recovery peaked at %.1f MiB, over the bound of %.1f MiB", float64(peak)/(1<<20), float64(bound)/(1<<20))
	}
}

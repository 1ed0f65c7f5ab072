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

// The load of TestLoadMemoryBound: JSON-event-like rows of about 900
// bytes (3-4× compressible), loaded in batches as a user would.
const (
	loadChildEnv      = "STRATA_LOAD_CHILD"
	loadCache         = 32 << 20
	loadTestRows      = 60000 // ~54 MB logical: 1.7× the cache
	loadTestBatchRows = 5000  // ~4.5 MB per batch
	// loadConstBytes was 24 MiB until a run on the 2-vCPU Xeon host
	// peaked at that bound (69.2 MiB; fifteen runs there at 61.0–69.2
	// MiB): once the store trains a zstd dictionary its encoders hold
	// about 3.5 MiB more of live heap (heap profile), twice that with
	// the GC's headroom at GOGC=100 (docs/KVSTORE.md, "Memory during
	// loads").
	loadConstBytes = 28 << 20
	// loadBatchFactor is how many times the largest batch a load may
	// add to the cache and the constant (docs/KVSTORE.md, "Memory").
	loadBatchFactor = 3
)

// loadRow appends row i's value.
func loadRow(dst []byte, rng *rand.Rand, i int) []byte {
	words := [...]string{"push", "repo", "commit", "branch", "main", "issue", "comment", "user", "login", "refs/heads/", "payload", "created_at", "true", "false", "null"}
	dst = fmt.Appendf(dst, `{"id":"%d","type":"PushEvent","actor":{"id":%d,"login":"user%d"},"repo":{"name":"org%d/repo%d"},"payload":{"commits":[`, i, rng.IntN(50000), rng.IntN(50000), rng.IntN(300), rng.IntN(3000))
	for len(dst) < 860 {
		dst = fmt.Appendf(dst, `{"sha":"%016x","message":"%s %s %s"},`, rng.Uint64(), words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))])
	}
	return append(dst, `]}}`...)
}

// TestLoadMemoryBoundChild is the child of TestLoadMemoryBound: it loads
// the rows into the database in $STRATA_LOAD_CHILD once it reads a line on
// stdin (after the parent put it in a cgroup), then prints its peak RSS.
func TestLoadMemoryBoundChild(t *testing.T) {
	dir := os.Getenv(loadChildEnv)
	if dir == "" {
		t.Skip("child of TestLoadMemoryBound")
	}
	bufio.NewReader(os.Stdin).ReadString('\n')
	db, err := Open(dir, &Options{CacheSize: loadCache})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	var v []byte
	largest := 0
	for first := 0; first < loadTestRows; first += loadTestBatchRows {
		b := db.NewBatch()
		for i := first; i < first+loadTestBatchRows; i++ {
			v = loadRow(v[:0], rng, i)
			if err := b.Set(fmt.Appendf(nil, "event%08d", i), v); err != nil {
				t.Fatal(err)
			}
		}
		largest = max(largest, b.size)
		if err := b.Commit(nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("largest-batch %d\npeak-rss %d\n", largest, peakRSS(t))
}

// peakRSS is this process's peak resident set (VmHWM), in bytes.
func peakRSS(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmHWM in /proc/self/status")
	return 0
}

// TestLoadMemoryBound: a load in large batches peaks at no more than
// CacheSize + loadConstBytes + loadBatchFactor × the largest batch of
// resident memory (the bound docs/KVSTORE.md states), measured in a child
// process and, where a cgroup memory controller is writable, enforced by a
// memory limit of that size (page cache included), which used to kill such
// loads.
func TestLoadMemoryBound(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory makes RSS meaningless; .ci/run runs this test without it")
	}
	if testing.Short() {
		t.Skip("a 54 MB load")
	}
	const batchBytes = loadTestBatchRows * 920
	bound := int64(loadCache + loadConstBytes + loadBatchFactor*batchBytes)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLoadMemoryBoundChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), loadChildEnv+"="+t.TempDir(), "GOMEMLIMIT=off", "GOGC=100")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g, err := hostenv.Limit(fmt.Sprintf("strata-load-test-%d", os.Getpid()), bound)
	if err == nil {
		defer g.Close()
		if err := g.Add(cmd.Process.Pid); err != nil {
			t.Logf("cgroup: %v; checking peak RSS only", err)
		}
	} else {
		t.Logf("no memory limit (%v); checking peak RSS only", err)
	}
	stdin.Write([]byte("go\n"))
	stdin.Close()
	werr := cmd.Wait()
	if g != nil {
		if n, ok := g.OOMKills(); ok && n > 0 {
			t.Fatalf("the load was killed by a %d MiB memory limit:\n%s", bound>>20, out.String())
		}
	}
	if werr != nil {
		t.Fatalf("child: %v\n%s", werr, out.String())
	}
	var peak, largest int64
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "peak-rss":
				peak = n
			case "largest-batch":
				largest = n
			}
		}
	}
	if peak == 0 || largest == 0 {
		t.Fatalf("child printed no figures:\n%s", out.String())
	}
	if largest > batchBytes {
		t.Fatalf("largest batch %d bytes, the bound assumed %d", largest, batchBytes)
	}
	t.Logf("peak RSS %.1f MiB, bound %.1f MiB (cache %d MiB + %d MiB + %d × %.1f MiB batches)",
		float64(peak)/(1<<20), float64(bound)/(1<<20), loadCache>>20, loadConstBytes>>20, loadBatchFactor, float64(largest)/(1<<20))
	if peak > bound {
		t.Fatalf("peak RSS %d MiB over the bound of %d MiB", peak>>20, bound>>20)
	}
}

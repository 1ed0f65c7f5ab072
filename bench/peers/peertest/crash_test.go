package peertest

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/bench"
)

// The crash test runs a writer in a child process (this test binary, in
// TestCrashChild), kills it with SIGKILL while it commits, reopens the
// directory and checks that every batch is there whole or not at all, and
// that every batch acknowledged with sync is there. (A process crash, not
// a power cut: what reached the kernel survives either way, so the
// unsynced batches of bbolt and Badger survive too, Pebble's may not: its
// WAL writer buffers them.)

const (
	crashEnvEngine = "PEERS_CRASH_ENGINE"
	crashEnvDir    = "PEERS_CRASH_DIR"
	crashKeys      = 16
)

// crashBatch is generation gen of the crash test's data: every key holds
// gen, and the key "odd" exists exactly when gen is odd.
func crashBatch(gen int) []bench.Op {
	ops := make([]bench.Op, 0, crashKeys+1)
	for i := 0; i < crashKeys; i++ {
		v := strings.Repeat(strconv.Itoa(gen)+".", 1+(gen+i)%50)
		ops = append(ops, bench.Op{Key: fmt.Appendf(nil, "c%02d", i), Value: []byte(v)})
	}
	ops = append(ops, bench.Op{Key: []byte("odd"), Value: []byte("1"), Delete: gen%2 == 0})
	return ops
}

func TestCrashChild(t *testing.T) {
	name, dir := os.Getenv(crashEnvEngine), os.Getenv(crashEnvDir)
	if name == "" {
		t.Skip("the child of TestCrashAtomicity")
	}
	f, err := bench.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := f(testConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Apply(crashBatch(0), true); err != nil {
		t.Fatal(err)
	}
	fmt.Println("acked 0 sync")
	for gen := 1; ; gen++ {
		sync := gen%3 == 0
		if err := e.Apply(crashBatch(gen), sync); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("acked %d %v\n", gen, map[bool]string{true: "sync", false: "nosync"}[sync])
	}
}

func TestCrashAtomicity(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, name := range peerEngines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), name)
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), crashEnvEngine+"="+name, crashEnvDir+"="+dir)
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Kill it after it acknowledged a random number of batches, or
			// after a while; then read what it acknowledged before it died.
			deadline := time.Now().Add(2 * time.Second)
			killAt := 150 + rand.IntN(150)
			lastAcked, lastSynced := -1, -1
			sc := bufio.NewScanner(out)
			killed := false
			for sc.Scan() {
				var gen int
				var mode string
				if _, err := fmt.Sscanf(sc.Text(), "acked %d %s", &gen, &mode); err != nil {
					continue // test framework output
				}
				lastAcked = gen
				if mode == "sync" {
					lastSynced = gen
				}
				if !killed && (gen >= killAt || time.Now().After(deadline)) {
					if err := cmd.Process.Kill(); err != nil {
						t.Fatal(err)
					}
					killed = true
				}
			}
			_ = cmd.Wait()
			if !killed {
				t.Fatalf("the child exited by itself")
			}
			if lastSynced < 0 {
				t.Fatalf("the child acknowledged nothing")
			}

			e := open(t, name, testConfig(dir))
			defer e.Close()
			gen := -1
			for i := 0; i < crashKeys; i++ {
				v, found, err := e.Get(fmt.Appendf(nil, "c%02d", i), nil)
				if err != nil || !found {
					t.Fatalf("after the crash, key %d: found %v, err %v", i, found, err)
				}
				g, err := strconv.Atoi(strings.SplitN(string(v), ".", 2)[0])
				if err != nil {
					t.Fatalf("value %q", v)
				}
				if i == 0 {
					gen = g
				} else if g != gen {
					t.Fatalf("after the crash, key 0 holds generation %d, key %d generation %d: a torn batch", gen, i, g)
				}
				if want := strings.Repeat(strconv.Itoa(g)+".", 1+(g+i)%50); string(v) != want {
					t.Fatalf("key %d: value %q, want %q", i, v, want)
				}
			}
			_, odd, err := e.Get([]byte("odd"), nil)
			if err != nil || odd != (gen%2 == 1) {
				t.Fatalf("generation %d, key odd present %v (err %v): a torn batch", gen, odd, err)
			}
			if gen < lastSynced || gen > lastAcked+1 {
				t.Fatalf("recovered generation %d; acknowledged %d, the last of them synced %d", gen, lastAcked, lastSynced)
			}
			t.Logf("acknowledged %d (synced %d), recovered %d", lastAcked, lastSynced, gen)
		})
	}
}

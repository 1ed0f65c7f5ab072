package hostenv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The test binary doubles as the child process of the cgroup tests: with
// allocChildEnv set it waits for a byte count on stdin (the go-ahead, sent
// once it is in the cgroup), then allocates and touches that much memory.
const allocChildEnv = "HOSTENV_TEST_ALLOC_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(allocChildEnv) != "" {
		os.Exit(allocChild())
	}
	os.Exit(m.Run())
}

func allocChild() int {
	var n int
	if _, err := fmt.Fscanln(os.Stdin, &n); err != nil {
		fmt.Fprintln(os.Stderr, "alloc child:", err)
		return 2
	}
	b := make([]byte, n)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	fmt.Println("allocated", len(b))
	return 0
}

type allocProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startAllocChild(t *testing.T) *allocProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), allocChildEnv+"=1", "GOGC=off")
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	cmd.Stderr = os.Stderr
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return &allocProcess{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
}

// allocate tells the child to allocate n bytes and waits for it to exit.
func (p *allocProcess) allocate(n int64) (string, error) {
	fmt.Fprintln(p.stdin, n)
	p.stdin.Close()
	line, _ := p.out.ReadString('\n')
	return line, p.cmd.Wait()
}

// limitOrSkip creates a group, skipping the test where this host offers
// none (not root, no memory controller, a read-only /sys/fs/cgroup).
func limitOrSkip(t *testing.T, bytes int64) *Group {
	t.Helper()
	name := fmt.Sprintf("hostenv-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))
	g, err := Limit(name, bytes)
	if errors.Is(err, ErrNoMemoryController) {
		t.Skipf("no cgroup memory limit on this host: %v", err)
	}
	must(t, err)
	t.Cleanup(func() {
		if _, err := os.Stat(g.Dir); err == nil {
			g.Close()
		}
	})
	return g
}

func TestLimitKeepsAChildUnderIt(t *testing.T) {
	const limit = 256 << 20
	g := limitOrSkip(t, limit)
	t.Logf("cgroup v%d at %s, swap limited: %v", g.Version, g.Dir, g.SwapLimited)
	file := "memory.max"
	if g.Version == 1 {
		file = "memory.limit_in_bytes"
	}
	if got, ok := g.readInt(file); !ok || got != limit {
		t.Fatalf("%s = %d (ok %v), want %d", file, got, ok, limit)
	}

	p := startAllocChild(t)
	must(t, g.Add(p.cmd.Process.Pid))
	procs, err := os.ReadFile(filepath.Join(g.Dir, "cgroup.procs"))
	must(t, err)
	if !strings.Contains("\n"+string(procs), "\n"+strconv.Itoa(p.cmd.Process.Pid)+"\n") {
		t.Fatalf("cgroup.procs = %q, want pid %d", procs, p.cmd.Process.Pid)
	}
	const alloc = 48 << 20
	if _, err := p.allocate(alloc); err != nil {
		t.Fatalf("child allocating %d MiB under a %d MiB limit: %v", alloc>>20, limit>>20, err)
	}
	if peak, ok := g.Peak(); ok && peak < alloc {
		t.Errorf("peak %d < the %d the child allocated", peak, alloc)
	} else if !ok {
		t.Logf("peak not reported by this kernel (cgroup v%d)", g.Version)
	}

	must(t, g.Close())
	if _, err := os.Stat(g.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cgroup directory still there after Close: %v", err)
	}
}

func TestLimitStopsAChildOverIt(t *testing.T) {
	const limit = 32 << 20
	g := limitOrSkip(t, limit)
	p := startAllocChild(t)
	must(t, g.Add(p.cmd.Process.Pid))
	line, err := p.allocate(4 * limit)
	if err == nil {
		if !g.SwapLimited {
			t.Skipf("child exceeded the limit by swapping: swap is not limited on this host (%q)", line)
		}
		t.Fatalf("child allocated 4× the limit without being killed (%q)", line)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatal(err)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want killed by the OOM killer (SIGKILL)", err)
	}
	if n, ok := g.OOMKills(); ok && n < 1 {
		t.Errorf("OOMKills = %d after the child was killed", n)
	}
}

func TestLimitRejectsBadArguments(t *testing.T) {
	for _, tt := range []struct {
		name  string
		bytes int64
	}{{"ok", 0}, {"ok", -1}, {"a/b", 1 << 20}, {"..", 1 << 20}, {"", 1 << 20}} {
		if g, err := Limit(tt.name, tt.bytes); err == nil {
			g.Close()
			t.Errorf("Limit(%q, %d) succeeded", tt.name, tt.bytes)
		} else if errors.Is(err, ErrNoMemoryController) {
			t.Errorf("Limit(%q, %d): %v; want an argument error, not a host one", tt.name, tt.bytes, err)
		}
	}
}

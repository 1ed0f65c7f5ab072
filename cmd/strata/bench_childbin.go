package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// The bench children's binaries. strata-bench-bbolt, -pebble and -badger
// run the peers, each linking its engine alone (a binary linking all three
// was 12 MiB more resident at rest than bbolt's own: memory a run's limit
// took from the engine measured); they are built from the bench/ module,
// separate so that Strata's own module does not depend on its competitors.
// strata-bench-child runs Strata's engine and nothing else: the strata
// binary also links the server, Prometheus, cobra and gonum/plot, whose
// code adds about 12 MiB to the resident size of any process it runs
// (13.0 MiB of 17.6 at rest, against 4.5 MiB for strata-bench-child), which
// is memory an application embedding Strata does not spend and a bench
// run under a memory limit would take from the cache.
const (
	peerBinPrefix = "strata-bench-" // + the engine's name
	peersModule   = "github.com/stratadb/strata/bench"
	childBinName  = "strata-bench-child"
	strataModule  = "github.com/stratadb/strata"
)

// binLocator finds (or builds) one of the bench children's binaries. Its
// fields past the first four are the environment, so that tests can
// substitute them.
type binLocator struct {
	name      string // the binary, also its ./cmd/ directory
	module    string // the module that builds it
	moduleDir string // where that module's go.mod is, relative to a checkout
	flagName  string // the flag that names the binary
	need      string // what it is needed for, in the error when not found

	flag     string // the flag's value
	exe      string // the running strata binary
	cwd      string
	lookPath func(string) (string, error)
	// build compiles the binary from the module in moduleDir into out.
	build func(moduleDir, name, out string) error
	// buildDir is where a built binary goes (a temporary directory).
	buildDir func() (string, error)
	log      io.Writer
}

// peerBinName is the binary that runs peer engine.
func peerBinName(engine string) string { return peerBinPrefix + engine }

// newPeerLocator finds the binary of peer engine: in dir (--peers-dir)
// when it is given, else as binLocator.locate does.
func newPeerLocator(engine, dir string, log io.Writer) binLocator {
	name := peerBinName(engine)
	flag := ""
	if dir != "" {
		flag = filepath.Join(dir, name)
	}
	return newBinLocator(name, peersModule, "bench", "--peers-dir", "needed for "+engine, flag, log)
}

func newChildLocator(flag string, log io.Writer) binLocator {
	return newBinLocator(childBinName, strataModule, ".", "--strata-bin", "Strata's runs without the strata binary's other code", flag, log)
}

func newBinLocator(name, module, moduleDir, flagName, need, flag string, log io.Writer) binLocator {
	exe, _ := os.Executable()
	cwd, _ := os.Getwd()
	return binLocator{
		name: name, module: module, moduleDir: moduleDir, flagName: flagName, need: need,
		flag: flag, exe: exe, cwd: cwd, lookPath: exec.LookPath, log: log,
		build: goBuild,
		buildDir: func() (string, error) {
			return os.MkdirTemp("", name+"-")
		},
	}
}

// locate returns the path of the binary: the flag's, else next to the
// strata executable, else on $PATH, else built from the module found
// walking up from the current directory (a source checkout).
func (l binLocator) locate() (string, error) {
	if l.flag != "" {
		if !isExecutableFile(l.flag) {
			return "", fmt.Errorf("%s %s: not an executable file", l.flagName, l.flag)
		}
		// Absolute: a relative path without a slash ("--peers-dir ." gives
		// "strata-bench-bbolt") would be looked up on $PATH when run.
		if abs, err := filepath.Abs(l.flag); err == nil {
			return abs, nil
		}
		return l.flag, nil
	}
	if l.exe != "" {
		if p := filepath.Join(filepath.Dir(l.exe), l.name); isExecutableFile(p) {
			return p, nil
		}
	}
	if p, err := l.lookPath(l.name); err == nil {
		return p, nil
	}
	if mod := findModule(l.cwd, l.moduleDir, l.module); mod != "" {
		dir, err := l.buildDir()
		if err != nil {
			return "", fmt.Errorf("build %s: %w", l.name, err)
		}
		out := filepath.Join(dir, l.name)
		fmt.Fprintf(l.log, "building %s from %s (go build -o %s ./cmd/%s)\n", l.name, mod, out, l.name)
		if err := l.build(mod, l.name, out); err != nil {
			return "", fmt.Errorf("build %s in %s: %w", l.name, mod, err)
		}
		return out, nil
	}
	in := ""
	if l.moduleDir != "." {
		in = "cd " + l.moduleDir + " && "
	}
	return "", fmt.Errorf("%s not found (%s): build it in a Strata checkout with `%sgo build -o %s ./cmd/%s` and pass %s, put it next to the strata binary or on $PATH, or run strata bench from inside the checkout",
		l.name, l.need, in, filepath.Join(relUp(l.moduleDir), l.name), l.name, l.flagName)
}

// relUp is the path from a checkout's subdirectory back to the checkout.
func relUp(dir string) string {
	if dir == "." {
		return "."
	}
	return ".."
}

// findModule walks up from dir looking for sub/go.mod declaring module,
// and returns that directory.
func findModule(dir, sub, module string) string {
	if dir == "" {
		return ""
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, sub, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module "+module+"\n")) {
			return filepath.Clean(filepath.Join(dir, sub))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func goBuild(moduleDir, name, out string) error {
	cmd := exec.Command("go", "build", "-o", out, "./cmd/"+name)
	cmd.Dir = moduleDir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

func isExecutableFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

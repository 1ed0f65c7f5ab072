package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// peersBinName is the binary of the bench/ module that runs bbolt, Pebble
// and Badger as bench children; it is a separate module so that Strata's
// own module does not depend on its competitors.
const (
	peersBinName = "strata-bench-peers"
	peersModule  = "github.com/stratadb/strata/bench"
)

// peersLocator finds (or builds) strata-bench-peers. Its fields are the
// environment, so that tests can substitute them.
type peersLocator struct {
	flag     string // --peers-bin
	exe      string // the running strata binary
	cwd      string
	lookPath func(string) (string, error)
	// build compiles the binary from the module in moduleDir into out.
	build func(moduleDir, out string) error
	// buildDir is where a built binary goes (a temporary directory).
	buildDir func() (string, error)
	log      io.Writer
}

func newPeersLocator(flag string, log io.Writer) peersLocator {
	exe, _ := os.Executable()
	cwd, _ := os.Getwd()
	return peersLocator{
		flag: flag, exe: exe, cwd: cwd, lookPath: exec.LookPath, log: log,
		build: goBuildPeers,
		buildDir: func() (string, error) {
			return os.MkdirTemp("", "strata-bench-peers-")
		},
	}
}

// locate returns the path of strata-bench-peers: --peers-bin, else next to
// the strata executable, else on $PATH, else built from a bench/go.mod
// found walking up from the current directory (a source checkout).
func (l peersLocator) locate() (string, error) {
	if l.flag != "" {
		if !isExecutableFile(l.flag) {
			return "", fmt.Errorf("--peers-bin %s: not an executable file", l.flag)
		}
		return l.flag, nil
	}
	if l.exe != "" {
		if p := filepath.Join(filepath.Dir(l.exe), peersBinName); isExecutableFile(p) {
			return p, nil
		}
	}
	if p, err := l.lookPath(peersBinName); err == nil {
		return p, nil
	}
	if mod := findPeersModule(l.cwd); mod != "" {
		dir, err := l.buildDir()
		if err != nil {
			return "", fmt.Errorf("build %s: %w", peersBinName, err)
		}
		out := filepath.Join(dir, peersBinName)
		fmt.Fprintf(l.log, "building %s from %s (go build -o %s ./cmd/%s)\n", peersBinName, mod, out, peersBinName)
		if err := l.build(mod, out); err != nil {
			return "", fmt.Errorf("build %s in %s: %w", peersBinName, mod, err)
		}
		return out, nil
	}
	return "", errors.New(peersBinName + " not found (needed for bbolt, pebble and badger): " +
		"build it in a Strata checkout with `cd bench && go build -o ../" + peersBinName + " ./cmd/" + peersBinName +
		"` and pass --peers-bin, put it next to the strata binary or on $PATH, or run strata bench from inside the checkout")
}

// findPeersModule walks up from dir looking for bench/go.mod declaring the
// peers module, and returns that bench directory.
func findPeersModule(dir string) string {
	if dir == "" {
		return ""
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "bench", "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module "+peersModule+"\n")) {
			return filepath.Join(dir, "bench")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func goBuildPeers(moduleDir, out string) error {
	cmd := exec.Command("go", "build", "-o", out, "./cmd/"+peersBinName)
	cmd.Dir = moduleDir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

func isExecutableFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

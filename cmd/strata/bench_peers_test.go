package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakePeersEnv is a peersLocator whose environment is a temporary tree:
// nothing on $PATH, and a build that records what it was asked.
func fakePeersEnv(t *testing.T) (*peersLocator, *[]string, *bytes.Buffer) {
	root := t.TempDir()
	var builds []string
	log := &bytes.Buffer{}
	l := &peersLocator{
		exe:      filepath.Join(root, "bin", "strata"),
		cwd:      filepath.Join(root, "src", "strata", "cmd", "strata"),
		lookPath: func(string) (string, error) { return "", errors.New("not found") },
		build: func(moduleDir, out string) error {
			builds = append(builds, moduleDir+" -> "+out)
			return os.WriteFile(out, []byte("#!/bin/sh\n"), 0o755)
		},
		buildDir: func() (string, error) { return os.MkdirTemp(root, "build-") },
		log:      log,
	}
	must(t, os.MkdirAll(filepath.Dir(l.exe), 0o755))
	must(t, os.MkdirAll(l.cwd, 0o755))
	return l, &builds, log
}

func writeExecutable(t *testing.T, path string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755))
}

func TestPeersLocatorOrder(t *testing.T) {
	t.Run("flag", func(t *testing.T) {
		l, _, _ := fakePeersEnv(t)
		l.flag = filepath.Join(t.TempDir(), "peers")
		if _, err := l.locate(); err == nil {
			t.Error("a missing --peers-bin accepted")
		}
		writeExecutable(t, l.flag)
		writeExecutable(t, filepath.Join(filepath.Dir(l.exe), peersBinName))
		if got, err := l.locate(); err != nil || got != l.flag {
			t.Errorf("locate = %q, %v; want the flag's %q first", got, err, l.flag)
		}
	})
	t.Run("next to strata, before $PATH", func(t *testing.T) {
		l, _, _ := fakePeersEnv(t)
		want := filepath.Join(filepath.Dir(l.exe), peersBinName)
		writeExecutable(t, want)
		l.lookPath = func(string) (string, error) { return "/usr/bin/" + peersBinName, nil }
		if got, err := l.locate(); err != nil || got != want {
			t.Errorf("locate = %q, %v; want %q", got, err, want)
		}
	})
	t.Run("a non-executable file next to strata is skipped", func(t *testing.T) {
		l, _, _ := fakePeersEnv(t)
		must(t, os.WriteFile(filepath.Join(filepath.Dir(l.exe), peersBinName), nil, 0o644))
		l.lookPath = func(string) (string, error) { return "/usr/bin/" + peersBinName, nil }
		if got, err := l.locate(); err != nil || got != "/usr/bin/"+peersBinName {
			t.Errorf("locate = %q, %v; want the $PATH one", got, err)
		}
	})
	t.Run("built from the checkout", func(t *testing.T) {
		l, builds, log := fakePeersEnv(t)
		checkout := filepath.Dir(filepath.Dir(l.cwd)) // src/strata
		must(t, os.MkdirAll(filepath.Join(checkout, "bench"), 0o755))
		must(t, os.WriteFile(filepath.Join(checkout, "bench", "go.mod"), []byte("module "+peersModule+"\n\ngo 1.26\n"), 0o644))
		got, err := l.locate()
		if err != nil {
			t.Fatal(err)
		}
		if len(*builds) != 1 || !strings.HasPrefix((*builds)[0], filepath.Join(checkout, "bench")+" -> ") || filepath.Base(got) != peersBinName {
			t.Errorf("locate = %q, builds %q; want one build in %s/bench", got, *builds, checkout)
		}
		if !strings.Contains(log.String(), "building "+peersBinName) {
			t.Errorf("the build was not announced: %q", log.String())
		}
	})
	t.Run("another module's bench/ is not ours", func(t *testing.T) {
		l, builds, _ := fakePeersEnv(t)
		checkout := filepath.Dir(filepath.Dir(l.cwd))
		must(t, os.MkdirAll(filepath.Join(checkout, "bench"), 0o755))
		must(t, os.WriteFile(filepath.Join(checkout, "bench", "go.mod"), []byte("module example.com/other/bench\n"), 0o644))
		_, err := l.locate()
		if err == nil || len(*builds) != 0 {
			t.Fatalf("locate succeeded or built (%q) from a foreign module", *builds)
		}
		if !strings.Contains(err.Error(), "go build -o") || !strings.Contains(err.Error(), "--peers-bin") {
			t.Errorf("the error does not say how to build it: %v", err)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/bench"
)

// fakePeersEnv is the peers' binLocator whose environment is a temporary
// tree: nothing on $PATH, and a build that records what it was asked.
func fakePeersEnv(t *testing.T) (*binLocator, *[]string, *bytes.Buffer) {
	l := newPeerLocator("bbolt", "", nil)
	return fakeEnv(t, &l)
}

// fakeEnv gives locator l a temporary tree as its environment.
func fakeEnv(t *testing.T, l *binLocator) (*binLocator, *[]string, *bytes.Buffer) {
	root := t.TempDir()
	var builds []string
	log := &bytes.Buffer{}
	l.exe = filepath.Join(root, "bin", "strata")
	l.cwd = filepath.Join(root, "src", "strata", "cmd", "strata")
	l.lookPath = func(string) (string, error) { return "", errors.New("not found") }
	l.build = func(moduleDir, name, out string) error {
		builds = append(builds, moduleDir+" -> "+out)
		return os.WriteFile(out, []byte("#!/bin/sh\n"), 0o755)
	}
	l.buildDir = func() (string, error) { return os.MkdirTemp(root, "build-") }
	l.log = log
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
		dir := t.TempDir()
		nl := newPeerLocator("bbolt", dir, nil)
		l, _, _ := fakeEnv(t, &nl)
		if _, err := l.locate(); err == nil {
			t.Error("a --peers-dir without the binary accepted")
		}
		if l.flag != filepath.Join(dir, peerBinName("bbolt")) {
			t.Errorf("--peers-dir %s: looks for %s", dir, l.flag)
		}
		writeExecutable(t, l.flag)
		writeExecutable(t, filepath.Join(filepath.Dir(l.exe), peerBinName("bbolt")))
		if got, err := l.locate(); err != nil || got != l.flag {
			t.Errorf("locate = %q, %v; want the flag's %q first", got, err, l.flag)
		}
	})
	t.Run("next to strata, before $PATH", func(t *testing.T) {
		l, _, _ := fakePeersEnv(t)
		want := filepath.Join(filepath.Dir(l.exe), peerBinName("bbolt"))
		writeExecutable(t, want)
		l.lookPath = func(string) (string, error) { return "/usr/bin/" + peerBinName("bbolt"), nil }
		if got, err := l.locate(); err != nil || got != want {
			t.Errorf("locate = %q, %v; want %q", got, err, want)
		}
	})
	t.Run("a non-executable file next to strata is skipped", func(t *testing.T) {
		l, _, _ := fakePeersEnv(t)
		must(t, os.WriteFile(filepath.Join(filepath.Dir(l.exe), peerBinName("bbolt")), nil, 0o644))
		l.lookPath = func(string) (string, error) { return "/usr/bin/" + peerBinName("bbolt"), nil }
		if got, err := l.locate(); err != nil || got != "/usr/bin/"+peerBinName("bbolt") {
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
		if len(*builds) != 1 || !strings.HasPrefix((*builds)[0], filepath.Join(checkout, "bench")+" -> ") || filepath.Base(got) != peerBinName("bbolt") {
			t.Errorf("locate = %q, builds %q; want one build in %s/bench", got, *builds, checkout)
		}
		if !strings.Contains(log.String(), "building "+peerBinName("bbolt")) {
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
		if !strings.Contains(err.Error(), "go build -o") || !strings.Contains(err.Error(), "--peers-dir") {
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

// TestChildLocator: strata-bench-child is found as the peers' binary is,
// and built from the checkout's root module, not from another module.
func TestChildLocator(t *testing.T) {
	t.Run("next to strata", func(t *testing.T) {
		l, _, _ := fakeChildEnv(t)
		want := filepath.Join(filepath.Dir(l.exe), childBinName)
		writeExecutable(t, want)
		if got, err := l.locate(); err != nil || got != want {
			t.Errorf("locate = %q, %v; want %q", got, err, want)
		}
	})
	t.Run("built from the checkout", func(t *testing.T) {
		l, builds, _ := fakeChildEnv(t)
		checkout := filepath.Dir(filepath.Dir(l.cwd)) // src/strata
		must(t, os.WriteFile(filepath.Join(checkout, "go.mod"), []byte("module "+strataModule+"\n\ngo 1.26\n"), 0o644))
		got, err := l.locate()
		if err != nil {
			t.Fatal(err)
		}
		if len(*builds) != 1 || (*builds)[0] != checkout+" -> "+got || filepath.Base(got) != childBinName {
			t.Errorf("locate = %q, builds %q; want one build in %s", got, *builds, checkout)
		}
	})
	t.Run("the peers' module is not Strata's", func(t *testing.T) {
		l, builds, _ := fakeChildEnv(t)
		checkout := filepath.Dir(filepath.Dir(l.cwd))
		must(t, os.WriteFile(filepath.Join(checkout, "go.mod"), []byte("module "+peersModule+"\n"), 0o644))
		_, err := l.locate()
		if err == nil || len(*builds) != 0 {
			t.Fatalf("locate succeeded or built (%q) from another module", *builds)
		}
		if !strings.Contains(err.Error(), "go build -o "+childBinName+" ./cmd/"+childBinName) || !strings.Contains(err.Error(), "--strata-bin") {
			t.Errorf("the error does not say how to build it: %v", err)
		}
	})
}

// TestBenchRunnerStrataBinary: Strata's runs use strata-bench-child where
// it is found; where it is not, the strata binary itself, and every result
// says so; a --strata-bin that does not exist is an error, not a silent
// fallback.
func TestBenchRunnerStrataBinary(t *testing.T) {
	runner := func(t *testing.T) (*benchRunner, *bytes.Buffer) {
		l, _, _ := fakeChildEnv(t)
		var stderr bytes.Buffer
		return &benchRunner{exe: l.exe, strata: *l, stderr: &stderr}, &stderr
	}
	r, _ := runner(t)
	want := filepath.Join(filepath.Dir(r.exe), childBinName)
	writeExecutable(t, want)
	if got, err := r.binFor("strata"); err != nil || got != want || r.binNote("strata") != "" {
		t.Errorf("binFor = %q, %v, note %q; want %q without a note", got, err, r.binNote("strata"), want)
	}

	r, stderr := runner(t)
	if got, err := r.binFor("strata"); err != nil || got != r.exe {
		t.Errorf("no strata-bench-child: binFor = %q, %v; want the strata binary %q", got, err, r.exe)
	}
	if n := r.binNote("strata"); !strings.Contains(n, "strata binary") || !strings.Contains(stderr.String(), n) {
		t.Errorf("the fallback is not said: note %q, stderr %q", n, stderr.String())
	}
	if r.binNote("bbolt") != "" {
		t.Error("a peer's result carries Strata's binary note")
	}

	r, _ = runner(t)
	r.strata.flag = filepath.Join(t.TempDir(), "missing")
	if _, err := r.binFor("strata"); err == nil {
		t.Error("a missing --strata-bin accepted")
	}
}

// fakeChildEnv is fakePeersEnv for strata-bench-child.
func fakeChildEnv(t *testing.T) (*binLocator, *[]string, *bytes.Buffer) {
	l := newChildLocator("", nil)
	return fakeEnv(t, &l)
}

// TestChildBinaryNoteInResults: the note on Strata's binary reaches every
// result the child process returns.
func TestChildBinaryNoteInResults(t *testing.T) {
	c := &childProcess{spec: bench.RunSpec{Engine: "strata"}, binNote: "Strata ran in the strata binary"}
	res := &bench.Result{}
	c.annotate(res, nil, nil)
	if !containsNote(res.Notes, c.binNote) {
		t.Errorf("notes %q, want %q among them", res.Notes, c.binNote)
	}
}

func TestBuildOf(t *testing.T) {
	info := func(kv ...string) *debug.BuildInfo {
		var b debug.BuildInfo
		for i := 0; i < len(kv); i += 2 {
			b.Settings = append(b.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return &b
	}
	for _, tc := range []struct {
		in   *debug.BuildInfo
		want string
	}{
		{info(), ""},
		{info("vcs.revision", "abc", "vcs.modified", "false"), "abc"},
		{info("vcs.revision", "abc", "vcs.modified", "true"), "abc+modified"},
		{info("vcs.modified", "true"), ""},
	} {
		if got := bench.BuildOf(tc.in); got != tc.want {
			t.Errorf("BuildOf(%v) = %q, want %q", tc.in.Settings, got, tc.want)
		}
	}
}

// TestEachPeerRunsInItsOwnBinary: binFor gives each peer engine the binary
// named after it in --peers-dir, and the retired --peers-bin (one binary
// linking every peer) is refused with a pointer to --peers-dir.
func TestEachPeerRunsInItsOwnBinary(t *testing.T) {
	dir := t.TempDir()
	for _, e := range []string{"bbolt", "pebble", "badger"} {
		writeExecutable(t, filepath.Join(dir, peerBinName(e)))
	}
	var stderr bytes.Buffer
	r, err := newBenchRunner(&stderr, benchFlags{peersDir: dir, dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	for _, e := range []string{"bbolt", "pebble", "badger"} {
		got, err := r.binFor(e)
		if want := filepath.Join(dir, peerBinName(e)); err != nil || got != want {
			t.Errorf("binFor(%s) = %q, %v; want %q", e, got, err, want)
		}
	}
	// A relative --peers-dir: the binaries are run by absolute path, not
	// looked up on $PATH (a bare "strata-bench-bbolt" would be).
	t.Chdir(dir)
	r2, err := newBenchRunner(&stderr, benchFlags{peersDir: ".", dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.close()
	if got, err := r2.binFor("bbolt"); err != nil || got != filepath.Join(dir, peerBinName("bbolt")) {
		t.Errorf("--peers-dir .: binFor(bbolt) = %q, %v; want %q", got, err, filepath.Join(dir, peerBinName("bbolt")))
	}
	if _, err := newBenchRunner(&stderr, benchFlags{peersBin: "./strata-bench-peers"}); err == nil || !strings.Contains(err.Error(), "--peers-dir") {
		t.Errorf("--peers-bin: %v, want it refused with a pointer to --peers-dir", err)
	}
}

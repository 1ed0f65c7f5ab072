package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

const rw = os.O_RDWR | os.O_CREATE

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func create(t *testing.T, fs FS, name string) File {
	t.Helper()
	f, err := fs.OpenFile(name, rw, 0o644, OpenOptions{})
	must(t, err)
	return f
}

func writeAt(t *testing.T, f File, s string, off int64) {
	t.Helper()
	n, err := f.WriteAt([]byte(s), off)
	must(t, err)
	if n != len(s) {
		t.Fatalf("wrote %d of %d bytes", n, len(s))
	}
}

// contents reads a whole file, or returns "<missing>".
func contents(t *testing.T, fs FS, name string) string {
	t.Helper()
	f, err := fs.OpenFile(name, os.O_RDONLY, 0, OpenOptions{})
	if errors.Is(err, os.ErrNotExist) {
		return "<missing>"
	}
	must(t, err)
	defer f.Close()
	size, err := f.Size()
	must(t, err)
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return string(buf)
}

func list(t *testing.T, fs FS, dir string) []string {
	t.Helper()
	names, err := fs.List(dir)
	must(t, err)
	return names
}

func TestMemUnsyncedWritesVanish(t *testing.T) {
	m := NewMem()
	f := create(t, m, "a")
	must(t, m.SyncDir("/"))
	writeAt(t, f, "synced", 0)
	must(t, f.Sync())
	writeAt(t, f, "+unsynced", 6)
	writeAt(t, f, "X", 0) // overwrite of synced bytes, not synced

	if got := contents(t, m, "a"); got != "Xynced+unsynced" {
		t.Fatalf("before crash: %q", got)
	}
	c := m.CrashClone(CrashDropUnsynced, nil)
	if got := contents(t, c, "a"); got != "synced" {
		t.Fatalf("after crash: %q, want %q", got, "synced")
	}
	// The clone is independent of m.
	if got := contents(t, m, "a"); got != "Xynced+unsynced" {
		t.Fatalf("CrashClone changed the original: %q", got)
	}
	writeAt(t, create(t, c, "a"), "Z", 0)
	if got := contents(t, m, "a"); got != "Xynced+unsynced" {
		t.Fatalf("writing the clone changed the original: %q", got)
	}
}

func TestMemSyncedSurvivesAndSyncIsPerFile(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("db", 0o755))
	must(t, m.SyncDir("/"))
	a, b := create(t, m, "db/a"), create(t, m, "db/b")
	must(t, m.SyncDir("db"))
	writeAt(t, a, "aaa", 0)
	writeAt(t, b, "bbb", 0)
	must(t, a.Sync())
	c := m.CrashClone(CrashDropUnsynced, nil)
	if got := contents(t, c, "db/a"); got != "aaa" {
		t.Errorf("synced file: %q", got)
	}
	if got := contents(t, c, "db/b"); got != "" {
		t.Errorf("file with durable entry but unsynced data: %q, want empty", got)
	}
}

func TestMemCreateNeedsSyncDir(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("db", 0o755))
	must(t, m.SyncDir("/"))
	f := create(t, m, "db/seg")
	writeAt(t, f, "data", 0)
	must(t, f.Sync())

	c := m.CrashClone(CrashDropUnsynced, nil)
	if got := contents(t, c, "db/seg"); got != "<missing>" {
		t.Fatalf("file synced but directory not: %q, want it gone", got)
	}
	if names := list(t, c, "db"); len(names) != 0 {
		t.Fatalf("db lists %v", names)
	}
	must(t, m.SyncDir("db"))
	c = m.CrashClone(CrashDropUnsynced, nil)
	if got := contents(t, c, "db/seg"); got != "data" {
		t.Fatalf("after SyncDir: %q", got)
	}
}

func TestMemMkdirNeedsParentSync(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("a/b", 0o755))
	f := create(t, m, "a/b/f")
	must(t, f.Sync())
	must(t, m.SyncDir("a/b"))
	must(t, m.SyncDir("a"))
	c := m.CrashClone(CrashDropUnsynced, nil)
	if names := list(t, c, "/"); len(names) != 0 {
		t.Fatalf("root not synced, yet lists %v", names)
	}
	must(t, m.SyncDir("/"))
	c = m.CrashClone(CrashDropUnsynced, nil)
	if got := list(t, c, "a/b"); !slices.Equal(got, []string{"f"}) {
		t.Fatalf("a/b lists %v", got)
	}
}

func TestMemRenameDurableOnlyAfterSyncDir(t *testing.T) {
	m := NewMem()
	f := create(t, m, "tmp")
	writeAt(t, f, "v2", 0)
	must(t, f.Sync())
	old := create(t, m, "current")
	writeAt(t, old, "v1", 0)
	must(t, old.Sync())
	must(t, m.SyncDir("/"))

	must(t, m.Rename("tmp", "current"))
	if got := contents(t, m, "current"); got != "v2" {
		t.Fatalf("current after rename: %q", got)
	}
	c := m.CrashClone(CrashDropUnsynced, nil)
	if got, want := list(t, c, "/"), []string{"current", "tmp"}; !slices.Equal(got, want) {
		t.Fatalf("crash before SyncDir lists %v, want %v", got, want)
	}
	if got := contents(t, c, "current"); got != "v1" {
		t.Fatalf("crash before SyncDir: current = %q, want v1", got)
	}

	must(t, m.SyncDir("/"))
	c = m.CrashClone(CrashDropUnsynced, nil)
	if got, want := list(t, c, "/"), []string{"current"}; !slices.Equal(got, want) {
		t.Fatalf("crash after SyncDir lists %v, want %v", got, want)
	}
	if got := contents(t, c, "current"); got != "v2" {
		t.Fatalf("crash after SyncDir: current = %q, want v2", got)
	}
}

func TestMemRenameAcrossDirsSharesNode(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("a", 0o755))
	must(t, m.MkdirAll("b", 0o755))
	must(t, m.SyncDir("/"))
	f := create(t, m, "a/x")
	must(t, m.SyncDir("a"))
	must(t, m.Rename("a/x", "b/x"))
	must(t, m.SyncDir("b"))
	writeAt(t, f, "shared", 0)
	must(t, f.Sync())
	// a's durable entries still name x: the image has x under both names,
	// one node, as a hard link would.
	c := m.CrashClone(CrashDropUnsynced, nil)
	if a, b := contents(t, c, "a/x"), contents(t, c, "b/x"); a != "shared" || b != "shared" {
		t.Fatalf("a/x = %q, b/x = %q", a, b)
	}
	writeAt(t, create(t, c, "a/x"), "S", 0)
	if got := contents(t, c, "b/x"); got != "Shared" {
		t.Fatalf("a/x and b/x are not one node after the crash: b/x = %q", got)
	}
}

func TestMemRemoveDurableOnlyAfterSyncDir(t *testing.T) {
	m := NewMem()
	f := create(t, m, "old")
	writeAt(t, f, "x", 0)
	must(t, f.Sync())
	must(t, m.SyncDir("/"))
	must(t, m.Remove("old"))
	if got := contents(t, m, "old"); got != "<missing>" {
		t.Fatalf("removed file still there: %q", got)
	}
	// Still readable through the open handle, as on Unix.
	buf := make([]byte, 1)
	if _, err := f.ReadAt(buf, 0); err != nil || buf[0] != 'x' {
		t.Fatalf("read of removed open file: %q, %v", buf, err)
	}
	if got := contents(t, m.CrashClone(CrashDropUnsynced, nil), "old"); got != "x" {
		t.Fatalf("removal not synced, crash image: %q, want x", got)
	}
	must(t, m.SyncDir("/"))
	if got := contents(t, m.CrashClone(CrashDropUnsynced, nil), "old"); got != "<missing>" {
		t.Fatalf("removal synced, crash image: %q", got)
	}
}

// TestMemTorn checks every torn image against the model: there is an n with
// the image equal to cur[:n] then dur[n:], except random bytes confined to
// the last sector below n and above len(dur).
func TestMemTorn(t *testing.T) {
	m := NewMem()
	f := create(t, m, "f")
	must(t, m.SyncDir("/"))
	dur := bytes.Repeat([]byte("D"), 1000)
	writeAt(t, f, string(dur), 0)
	must(t, f.Sync())
	// Change the durable region from 900 on and append 200 bytes.
	tail := bytes.Repeat([]byte("C"), 300)
	writeAt(t, f, string(tail), 900)
	cur := append(slices.Clone(dur[:900]), tail...)

	rng := rand.New(rand.NewPCG(1, 2))
	var sawDur, sawCur, sawMid, sawGarbage bool
	for range 3000 {
		got := []byte(contents(t, m.CrashClone(CrashTorn, rng), "f"))
		if len(got) < len(dur) || len(got) > len(cur) {
			t.Fatalf("torn size %d outside [%d, %d]", len(got), len(dur), len(cur))
		}
		garbage := false
		if n := len(got); n > len(dur) {
			// The file grew, so n = len(got): the image is cur[:n], except
			// that the last sector above len(dur) may be garbage.
			start := max(len(dur), (n-1)/tornSector*tornSector)
			if !bytes.Equal(got[:start], cur[:start]) {
				t.Fatalf("torn image of %d bytes differs from cur below %d", n, start)
			}
			garbage = !bytes.Equal(got[start:], cur[start:n])
		} else {
			// n <= len(dur): the image follows cur up to some n, then dur.
			k := 0
			for k < len(got) && got[k] == cur[k] {
				k++
			}
			if !bytes.Equal(got[k:], dur[k:]) {
				t.Fatalf("torn image follows neither cur nor dur at offset %d", k)
			}
		}
		switch {
		case garbage:
			sawGarbage = true
		case bytes.Equal(got, dur):
			sawDur = true
		case bytes.Equal(got, cur):
			sawCur = true
		default:
			sawMid = true
		}
	}
	if !sawDur || !sawCur || !sawMid || !sawGarbage {
		t.Fatalf("outcomes: durable %v, current %v, in between %v, torn sector %v; want all",
			sawDur, sawCur, sawMid, sawGarbage)
	}

	// Deterministic: the same seed gives the same image.
	a := contents(t, m.CrashClone(CrashTorn, rand.New(rand.NewPCG(7, 7))), "f")
	b := contents(t, m.CrashClone(CrashTorn, rand.New(rand.NewPCG(7, 7))), "f")
	if a != b {
		t.Fatal("same seed, different torn images")
	}
}

func TestMemTornContentsExact(t *testing.T) {
	// Direct checks of the model on small inputs, every n reachable.
	cur, dur := []byte("abcXYZ"), []byte("abcdefghij")
	seen := map[string]bool{}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		seen[string(tornContents(cur, dur, rng))] = true
	}
	// p = 3; n in [3, 6]; len(dur) > n always, so no garbage.
	want := []string{"abcXYZghij", "abcXYfghij", "abcXefghij", "abcdefghij"}
	if got := slices.Sorted(func(yield func(string) bool) {
		for s := range seen {
			if !yield(s) {
				return
			}
		}
	}); !slices.Equal(got, want) {
		t.Fatalf("torn images %q, want %q", got, want)
	}
}

func TestMemCrashInPlace(t *testing.T) {
	m := NewMem()
	f := create(t, m, "f")
	must(t, m.SyncDir("/"))
	writeAt(t, f, "keep", 0)
	must(t, f.Sync())
	writeAt(t, f, "lose", 4)
	l, err := m.Lock("LOCK")
	must(t, err)

	m.Crash(CrashDropUnsynced, nil)

	if _, err := f.ReadAt(make([]byte, 1), 0); !errors.Is(err, ErrCrashed) {
		t.Fatalf("read on pre-crash handle: %v, want ErrCrashed", err)
	}
	if _, err := f.WriteAt([]byte("x"), 0); !errors.Is(err, ErrCrashed) {
		t.Fatalf("write on pre-crash handle: %v, want ErrCrashed", err)
	}
	if err := f.Sync(); !errors.Is(err, ErrCrashed) {
		t.Fatalf("sync on pre-crash handle: %v, want ErrCrashed", err)
	}
	if got := contents(t, m, "f"); got != "keep" {
		t.Fatalf("after crash: %q", got)
	}
	// LOCK's entry was never synced, and the lock table is new.
	if got := contents(t, m, "LOCK"); got != "<missing>" {
		t.Fatalf("LOCK survived: %q", got)
	}
	l2, err := m.Lock("LOCK")
	if err != nil {
		t.Fatalf("lock after crash: %v", err)
	}
	if err := l.Close(); !errors.Is(err, ErrCrashed) {
		t.Fatalf("closing pre-crash lock: %v", err)
	}
	if _, err := m.Lock("LOCK"); !errors.Is(err, ErrLocked) {
		t.Fatalf("closing the pre-crash lock released the new one: %v", err)
	}
	must(t, l2.Close())
	// New handles work.
	g := create(t, m, "f")
	writeAt(t, g, "new", 4)
	must(t, g.Sync())
	if got := contents(t, m, "f"); got != "keepnew" {
		t.Fatalf("write after reboot: %q", got)
	}
}

func TestMemInjectAfter(t *testing.T) {
	m := NewMem()
	f := create(t, m, "f")
	m.SetInjector(InjectAfter(2, OpSync))
	for i := range 4 {
		writeAt(t, f, fmt.Sprint(i), int64(i))
		err := f.Sync()
		if i < 2 && err != nil {
			t.Fatalf("sync %d: %v", i, err)
		}
		if i >= 2 && !errors.Is(err, ErrInjected) {
			t.Fatalf("sync %d: %v, want ErrInjected", i, err)
		}
	}
	must(t, m.SyncDir("/")) // not a matching op
	m.SetInjector(nil)
	// The failed syncs made nothing durable.
	if got := contents(t, m.CrashClone(CrashDropUnsynced, nil), "f"); got != "01" {
		t.Fatalf("durable after failed syncs: %q, want 01", got)
	}

	m.SetInjector(InjectAfter(0, OpOpen))
	if _, err := m.OpenFile("f", os.O_RDONLY, 0, OpenOptions{}); !errors.Is(err, ErrInjected) {
		t.Fatalf("open: %v", err)
	}
}

func TestMemInjectRandom(t *testing.T) {
	m := NewMem()
	f := create(t, m, "f")
	m.SetInjector(InjectRandom(rand.New(rand.NewPCG(1, 1)), 0.5, OpWrite))
	failed := 0
	for i := range 200 {
		if _, err := f.WriteAt([]byte{1}, int64(i)); err != nil {
			if !errors.Is(err, ErrInjected) {
				t.Fatal(err)
			}
			failed++
		}
	}
	if failed < 50 || failed > 150 {
		t.Fatalf("%d of 200 writes failed with p = 0.5", failed)
	}
	must(t, f.Sync()) // not a matching op
}

func TestMemShortWrite(t *testing.T) {
	m := NewMem()
	f := create(t, m, "f")
	writeAt(t, f, "..........", 0)
	var calls []string
	m.SetShortWrites(func(path string, off int64, n int) int {
		calls = append(calls, fmt.Sprintf("%s@%d+%d", path, off, n))
		return 3
	})
	n, err := f.WriteAt([]byte("abcdef"), 2)
	if n != 3 || !errors.Is(err, ErrInjected) || !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("short write: n = %d, err = %v", n, err)
	}
	if want := []string{"f@2+6"}; !slices.Equal(calls, want) {
		t.Fatalf("hook calls %v, want %v", calls, want)
	}
	m.SetShortWrites(nil)
	if got := contents(t, m, "f"); got != "..abc....." {
		t.Fatalf("after short write: %q", got)
	}
	// A short write past the end extends the file only by what was written.
	m.SetShortWrites(func(string, int64, int) int { return 0 })
	if n, err := f.WriteAt([]byte("zz"), 20); n != 0 || err == nil {
		t.Fatalf("zero-byte short write: %d, %v", n, err)
	}
	m.SetShortWrites(nil)
	if size, _ := f.Size(); size != 10 {
		t.Fatalf("size %d after a zero-byte short write past the end", size)
	}
}

// workload is a deterministic sequence of mutating operations; step i is
// exactly one mutating operation, so running the first k steps and crashing
// must give the same image as CrashAfterOps(k).
func workload(fs FS) []func() error {
	var f File
	open := func(name string) func() error {
		return func() (err error) {
			f, err = fs.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644, OpenOptions{})
			return err
		}
	}
	write := func(s string, off int64) func() error {
		return func() error { _, err := f.WriteAt([]byte(s), off); return err }
	}
	return []func() error{
		func() error { return fs.MkdirAll("db", 0o755) },
		func() error { return fs.SyncDir("/") },
		open("db/tmp"),
		write("hello", 0),
		func() error { return f.Sync() },
		write(" world", 5),
		func() error { return fs.SyncDir("db") },
		func() error { return f.Sync() },
		func() error { return fs.Rename("db/tmp", "db/final") },
		func() error { return f.Truncate(3) },
		func() error { return fs.SyncDir("db") },
		open("db/other"),
		write("x", 0),
		func() error { return fs.Remove("db/final") },
		func() error { return f.Sync() },
		func() error { return fs.SyncDir("db") },
	}
}

// image renders a file system's full contents.
func image(t *testing.T, fs FS) string {
	t.Helper()
	var b bytes.Buffer
	var walk func(dir string)
	walk = func(dir string) {
		for _, name := range list(t, fs, dir) {
			p := dir + "/" + name
			fi, err := fs.Stat(p)
			must(t, err)
			if fi.IsDir() {
				fmt.Fprintf(&b, "%s/\n", p)
				walk(p)
			} else {
				fmt.Fprintf(&b, "%s = %q\n", p, contents(t, fs, p))
			}
		}
	}
	walk("")
	return b.String()
}

func TestMemCrashAfterOps(t *testing.T) {
	probe := NewMem()
	for i, step := range workload(probe) {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	count := probe.OpCount()
	if count != len(workload(probe)) {
		t.Fatalf("OpCount = %d, want one per step (%d)", count, len(workload(probe)))
	}

	images := map[string]bool{}
	for k := 0; k <= count; k++ {
		// Reference: run exactly k steps, then crash.
		ref := NewMem()
		for _, step := range workload(ref)[:k] {
			must(t, step())
		}
		want := image(t, ref.CrashClone(CrashDropUnsynced, nil))

		m := NewMem()
		m.CrashAfterOps(k)
		var failedAt = -1
		for i, step := range workload(m) {
			if err := step(); err != nil {
				if !errors.Is(err, ErrCrashed) {
					t.Fatalf("k=%d: step %d: %v, want ErrCrashed", k, i, err)
				}
				failedAt = i
				break
			}
		}
		if k < count && failedAt != k {
			t.Fatalf("k=%d: first failure at step %d", k, failedAt)
		}
		if k < count && !m.Crashed() {
			t.Fatalf("k=%d: not crashed", k)
		}
		if k < count {
			// Everything fails once crashed, reads included.
			if _, err := m.List("/"); !errors.Is(err, ErrCrashed) {
				t.Fatalf("k=%d: List after crash: %v", k, err)
			}
		}
		got := image(t, m.CrashedClone(CrashDropUnsynced, nil))
		if got != want {
			t.Fatalf("k=%d: crash image\n%s\nwant\n%s", k, got, want)
		}
		images[got] = true
	}
	if len(images) < 5 {
		t.Fatalf("only %d distinct crash images over %d points: workload too weak", len(images), count+1)
	}

	// Rebooting in place after the crash point makes the FS usable.
	m := NewMem()
	m.CrashAfterOps(7) // after SyncDir("db"), before the second Sync
	for _, step := range workload(m) {
		if step() != nil {
			break
		}
	}
	m.Crash(CrashDropUnsynced, nil)
	if m.Crashed() {
		t.Fatal("still crashed after Crash")
	}
	if got := contents(t, m, "db/tmp"); got != "hello" {
		t.Fatalf("after reboot: db/tmp = %q", got)
	}
}

func TestMemCrashAfterZero(t *testing.T) {
	m := NewMem()
	m.CrashAfterOps(0)
	if !m.Crashed() {
		t.Fatal("CrashAfterOps(0) did not crash at once")
	}
	if _, err := m.OpenFile("x", rw, 0o644, OpenOptions{}); !errors.Is(err, ErrCrashed) {
		t.Fatalf("open: %v", err)
	}
	if m.OpCount() != 0 {
		t.Fatalf("OpCount %d: refused ops must not count", m.OpCount())
	}
}

func TestMemDirectAlignment(t *testing.T) {
	m := NewMem()
	f, err := m.OpenFile("f", rw, 0o644, OpenOptions{Direct: true})
	must(t, err)
	if !f.Direct() {
		t.Fatal("Direct() false")
	}
	buf := AlignedBuffer(2 * BlockSize)
	buf[0], buf[BlockSize] = 1, 2
	if n, err := f.WriteAt(buf, BlockSize); err != nil || n != len(buf) {
		t.Fatalf("aligned write: %d, %v", n, err)
	}
	cases := []struct {
		name string
		b    []byte
		off  int64
	}{
		{"offset", buf[:BlockSize], 512},
		{"length", buf[:100], 0},
		{"address", AlignedBuffer(3 * BlockSize)[1 : BlockSize+1], 0},
	}
	for _, c := range cases {
		if _, err := f.WriteAt(c.b, c.off); !errors.Is(err, ErrUnaligned) || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("write with unaligned %s: %v, want ErrUnaligned", c.name, err)
		}
		if _, err := f.ReadAt(c.b, c.off); !errors.Is(err, ErrUnaligned) {
			t.Errorf("read with unaligned %s: %v, want ErrUnaligned", c.name, err)
		}
	}
	got := AlignedBuffer(BlockSize)
	if n, err := f.ReadAt(got, 2*BlockSize); err != nil || n != BlockSize || got[0] != 2 {
		t.Fatalf("aligned read: %d, %v, first byte %d", n, err, got[0])
	}
	// A buffered handle on the same file has no alignment rule.
	g := create(t, m, "f")
	if _, err := g.WriteAt([]byte("x"), 3); err != nil {
		t.Fatal(err)
	}
}

func TestMemOpenFlags(t *testing.T) {
	m := NewMem()
	if _, err := m.OpenFile("nodir/f", rw, 0o644, OpenOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("create in missing dir: %v", err)
	}
	if _, err := m.OpenFile("f", os.O_RDWR, 0, OpenOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("open missing without O_CREATE: %v", err)
	}
	f := create(t, m, "f")
	writeAt(t, f, "abc", 0)
	if _, err := m.OpenFile("f", rw|os.O_EXCL, 0o644, OpenOptions{}); !errors.Is(err, os.ErrExist) {
		t.Errorf("O_EXCL on existing: %v", err)
	}
	r, err := m.OpenFile("f", os.O_RDONLY, 0, OpenOptions{})
	must(t, err)
	if _, err := r.WriteAt([]byte("x"), 0); err == nil {
		t.Error("write on read-only handle succeeded")
	}
	if err := r.Truncate(0); err == nil {
		t.Error("truncate on read-only handle succeeded")
	}
	w, err := m.OpenFile("f", os.O_WRONLY, 0, OpenOptions{})
	must(t, err)
	if _, err := w.ReadAt(make([]byte, 1), 0); err == nil {
		t.Error("read on write-only handle succeeded")
	}
	if _, err := m.OpenFile("f", os.O_WRONLY|os.O_TRUNC, 0, OpenOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, m, "f"); got != "" {
		t.Errorf("after O_TRUNC: %q", got)
	}
	if _, err := m.OpenFile("f", os.O_WRONLY|os.O_APPEND, 0, OpenOptions{}); err == nil {
		t.Error("O_APPEND accepted")
	}
	must(t, m.MkdirAll("d", 0o755))
	if _, err := m.OpenFile("d", os.O_RDONLY, 0, OpenOptions{}); !errors.Is(err, syscall.EISDIR) {
		t.Errorf("open of a directory: %v", err)
	}
	if _, err := m.OpenFile("../f", os.O_RDONLY, 0, OpenOptions{}); err == nil {
		t.Error("path above the root accepted")
	}
	// Paths are cleaned: these name the same file.
	writeAt(t, create(t, m, "/d/../d/./g"), "same", 0)
	if got := contents(t, m, "d/g"); got != "same" {
		t.Errorf("cleaned path: %q", got)
	}
	must(t, f.Close())
	if err := f.Close(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("second close: %v", err)
	}
	if _, err := f.ReadAt(make([]byte, 1), 0); !errors.Is(err, os.ErrClosed) {
		t.Errorf("read after close: %v", err)
	}
}

func TestMemReadWriteBeyondEOF(t *testing.T) {
	m := NewMem()
	f := create(t, m, "f")
	writeAt(t, f, "xy", 4)
	if got := contents(t, m, "f"); got != "\x00\x00\x00\x00xy" {
		t.Fatalf("write past EOF: %q", got)
	}
	buf := make([]byte, 4)
	n, err := f.ReadAt(buf, 3)
	if n != 3 || err != io.EOF || string(buf[:3]) != "\x00xy" {
		t.Fatalf("read across EOF: %d, %v, %q", n, err, buf[:n])
	}
	if n, err := f.ReadAt(buf, 100); n != 0 || err != io.EOF {
		t.Fatalf("read past EOF: %d, %v", n, err)
	}

	// Shrink then grow: the regrown bytes are zeros, not the old data,
	// and the durable contents are not disturbed.
	writeAt(t, f, "abcdefgh", 0)
	must(t, f.Sync())
	must(t, f.Truncate(2))
	must(t, f.Truncate(5))
	if got := contents(t, m, "f"); got != "ab\x00\x00\x00" {
		t.Fatalf("shrink then grow: %q", got)
	}
	writeAt(t, f, "Z", 7)
	if got := contents(t, m, "f"); got != "ab\x00\x00\x00\x00\x00Z" {
		t.Fatalf("write past regrown end: %q", got)
	}
	must(t, m.SyncDir("/"))
	if got := contents(t, m.CrashClone(CrashDropUnsynced, nil), "f"); got != "abcdefgh" {
		t.Fatalf("durable contents changed by unsynced truncates: %q", got)
	}
}

func TestMemSyncCopyOnWrite(t *testing.T) {
	// Sync shares the data; later writes must not leak into the durable
	// copy, whether in place, appended within capacity, or after growth.
	m := NewMem()
	f := create(t, m, "f")
	must(t, m.SyncDir("/"))
	writeAt(t, f, string(bytes.Repeat([]byte("a"), 100)), 0)
	must(t, f.Truncate(10)) // leaves spare capacity
	must(t, f.Sync())
	writeAt(t, f, "BBBB", 10) // append within capacity
	writeAt(t, f, "C", 0)     // in place
	must(t, f.Sync())
	writeAt(t, f, "D", 1)
	if got := contents(t, m.CrashClone(CrashDropUnsynced, nil), "f"); got != "Caaaaaaaaa"+"BBBB" {
		t.Fatalf("durable: %q", got)
	}
	if got := contents(t, m, "f"); got != "CDaaaaaaaa"+"BBBB" {
		t.Fatalf("current: %q", got)
	}
}

func TestMemRenameErrors(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("d/sub", 0o755))
	create(t, m, "d/sub/f")
	create(t, m, "g")
	if err := m.Rename("missing", "x"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("rename of missing: %v", err)
	}
	if err := m.Rename("g", "d"); !errors.Is(err, syscall.EISDIR) {
		t.Errorf("file over dir: %v", err)
	}
	if err := m.Rename("d", "d/sub/x"); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("dir into itself: %v", err)
	}
	if err := m.Remove("d"); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Errorf("remove non-empty dir: %v", err)
	}
	must(t, m.Rename("d", "e"))
	if got := list(t, m, "e/sub"); !slices.Equal(got, []string{"f"}) {
		t.Errorf("renamed dir lists %v", got)
	}
	fi, err := m.Stat("e/sub/f")
	must(t, err)
	if fi.IsDir() || fi.Name() != "f" || fi.Size() != 0 {
		t.Errorf("stat: %v %v %v", fi.IsDir(), fi.Name(), fi.Size())
	}
	if fi, err := m.Stat("e"); err != nil || !fi.IsDir() {
		t.Errorf("stat dir: %v", err)
	}
}

func TestMemLock(t *testing.T) {
	m := NewMem()
	l, err := m.Lock("LOCK")
	must(t, err)
	if _, err := m.Lock("/LOCK"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v, want ErrLocked", err)
	}
	must(t, l.Close())
	l, err = m.Lock("LOCK")
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	must(t, l.Close())
	if got := list(t, m, "/"); !slices.Equal(got, []string{"LOCK"}) {
		t.Fatalf("Lock did not create its file: %v", got)
	}
}

func TestMemConcurrent(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("d", 0o755))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("d/f%d", g)
			f, err := m.OpenFile(name, rw, 0o644, OpenOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			shared, err := m.OpenFile("d/shared", rw, 0o644, OpenOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			buf := make([]byte, 64)
			for i := range 200 {
				for j := range buf {
					buf[j] = byte(g)
				}
				if _, err := f.WriteAt(buf, int64(i*len(buf))); err != nil {
					t.Error(err)
					return
				}
				if _, err := shared.WriteAt(buf, int64(g*len(buf))); err != nil {
					t.Error(err)
					return
				}
				if i%10 == 0 {
					if err := f.Sync(); err != nil {
						t.Error(err)
					}
					if err := m.SyncDir("d"); err != nil {
						t.Error(err)
					}
					_ = m.CrashClone(CrashTorn, rand.New(rand.NewPCG(uint64(g), uint64(i))))
				}
				if _, err := f.ReadAt(buf, 0); err != nil {
					t.Error(err)
				}
				if _, err := m.List("d"); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for g := range 8 {
		want := bytes.Repeat([]byte{byte(g)}, 64*200)
		if got := contents(t, m, fmt.Sprintf("d/f%d", g)); got != string(want) {
			t.Fatalf("f%d corrupted", g)
		}
	}
}

func TestOpString(t *testing.T) {
	for op := Op(0); op < numOps; op++ {
		if s := op.String(); s == "" || s[0] == 'O' {
			t.Errorf("Op(%d).String() = %q", op, s)
		}
	}
	if s := CrashTorn.String(); s != "torn" {
		t.Errorf("CrashTorn.String() = %q", s)
	}
}

// TestMemFailedSyncLosesDirtyBytes: bytes dirty when a Sync fails are
// marked clean, as Linux does after an fsync error: readable until the
// crash, not written by a later successful Sync, gone after the crash.
// Bytes written after the failure are written by that Sync.
func TestMemFailedSyncLosesDirtyBytes(t *testing.T) {
	m := NewMem()
	f := create(t, m, "f")
	must(t, m.SyncDir("/"))
	durable := strings.Repeat("d", 2*osPageSize) // two pages
	writeAt(t, f, durable, 0)
	must(t, f.Sync())
	writeAt(t, f, "XY", 2)                   // overwrite in page 0
	writeAt(t, f, "XY", osPageSize+2)        // and in page 1
	writeAt(t, f, "+appended", 2*osPageSize) // growth: page 2
	m.SetInjector(InjectAfter(0, OpSync))
	if err := f.Sync(); !errors.Is(err, ErrInjected) {
		t.Fatalf("sync: %v", err)
	}
	m.SetInjector(nil)
	now := "ddXY" + durable[4:osPageSize+2] + "XY" + durable[osPageSize+4:] + "+appended"
	if got := contents(t, m, "f"); got != now {
		t.Fatal("a read after the failed sync does not see the writes")
	}
	writeAt(t, f, "Z", osPageSize+5) // dirties page 1 again, its lost bytes with it
	must(t, f.Sync())                // succeeds, writing page 1 only
	now = now[:osPageSize+5] + "Z" + now[osPageSize+6:]
	if got := contents(t, m, "f"); got != now {
		t.Fatal("a read after the successful sync does not see the writes")
	}
	// Page 0's overwrite and page 2's growth are lost; page 1 is whole.
	want := durable[:osPageSize+2] + "XYdZ" + durable[osPageSize+6:] + strings.Repeat("\x00", len("+appended"))
	if got := contents(t, m.CrashClone(CrashDropUnsynced, nil), "f"); got != want {
		t.Fatalf("crash image differs from the durable pages: %q", got[:16]+"…"+got[osPageSize:osPageSize+8]+"…"+got[2*osPageSize:])
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		if got := contents(t, m.CrashClone(CrashTorn, rng), "f"); got != want {
			t.Fatal("a torn crash image differs: nothing is unsynced")
		}
	}
	// A rewrite of all of it makes it durable again.
	writeAt(t, f, now, 0)
	must(t, f.Sync())
	if got := contents(t, m.CrashClone(CrashDropUnsynced, nil), "f"); got != now {
		t.Fatal("after a rewrite and sync the crash image differs")
	}
}

// TestMemFailedSyncNotIssued: a Sync failed with NotIssuedError stands for
// a process death before the fsync, which loses nothing from the cache.
func TestMemFailedSyncNotIssued(t *testing.T) {
	m := NewMem()
	f := create(t, m, "f")
	must(t, m.SyncDir("/"))
	writeAt(t, f, "data", 0)
	m.SetInjector(func(op Op, path string) error { return NotIssuedError(op, path) })
	if err := f.Sync(); !errors.Is(err, ErrInjected) || !errors.Is(err, ErrNotIssued) {
		t.Fatalf("sync: %v", err)
	}
	m.SetInjector(nil)
	must(t, f.Sync())
	if got := contents(t, m.CrashClone(CrashDropUnsynced, nil), "f"); got != "data" {
		t.Fatalf("crash image %q, want data", got)
	}
}

// TestMemFailedSyncThenTruncate: truncating below lost bytes forgets them;
// growing back gives zeros that a Sync writes.
func TestMemFailedSyncThenTruncate(t *testing.T) {
	m := NewMem()
	f := create(t, m, "f")
	must(t, m.SyncDir("/"))
	writeAt(t, f, "abcdef", 0)
	m.SetInjector(InjectAfter(0, OpSync))
	_ = f.Sync()
	m.SetInjector(nil)
	must(t, f.Truncate(3))
	writeAt(t, f, "XYZ", 3) // dirties page 0 again: "abc" with it
	must(t, f.Sync())
	if got := contents(t, m.CrashClone(CrashDropUnsynced, nil), "f"); got != "abcXYZ" {
		t.Fatalf("crash image %q", got)
	}
}

// images collects the distinct crash images of m over n seeds.
func images(t *testing.T, m *MemFS, mode CrashMode, n int) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for i := range n {
		seen[image(t, m.CrashClone(mode, rand.New(rand.NewPCG(uint64(i), 17))))] = true
	}
	return seen
}

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// TestMemUnsyncedRenameMaySurvive: with CrashNamespace an unsynced rename
// survives for some seeds and not for others, atomically; without it, it
// never does.
func TestMemUnsyncedRenameMaySurvive(t *testing.T) {
	m := NewMem()
	f := create(t, m, "tmp")
	writeAt(t, f, "v2", 0)
	must(t, f.Sync())
	must(t, m.SyncDir("/"))
	must(t, m.Rename("tmp", "current"))

	before, after := "/tmp = \"v2\"\n", "/current = \"v2\"\n"
	if got := sortedKeys(images(t, m, CrashDropUnsynced|CrashNamespace, 50)); !slices.Equal(got, []string{after, before}) {
		t.Fatalf("images %q, want the rename lost and kept", got)
	}
	if got := sortedKeys(images(t, m, CrashDropUnsynced, 1)); !slices.Equal(got, []string{before}) {
		t.Fatalf("without CrashNamespace: images %q", got)
	}
	// Which one is a function of the seed.
	a := image(t, m.CrashClone(CrashStrict, rand.New(rand.NewPCG(9, 9))))
	b := image(t, m.CrashClone(CrashStrict, rand.New(rand.NewPCG(9, 9))))
	if a != b {
		t.Fatal("same seed, different images")
	}
	// Once the directory is synced, the rename is durable for every seed.
	must(t, m.SyncDir("/"))
	if got := sortedKeys(images(t, m, CrashDropUnsynced|CrashNamespace, 20)); !slices.Equal(got, []string{after}) {
		t.Fatalf("after SyncDir: images %q", got)
	}
}

// TestMemNamespacePrefixInOrder: the unsynced operations that survive are
// a prefix of them, in order; a created file that was never synced
// survives empty.
func TestMemNamespacePrefixInOrder(t *testing.T) {
	m := NewMem()
	must(t, m.MkdirAll("d", 0o755))
	writeAt(t, create(t, m, "d/a"), "never synced", 0)
	must(t, m.Rename("d/a", "d/b"))
	must(t, m.Remove("d/b"))
	want := []string{
		"",
		"/d/\n",
		"/d/\n/d/a = \"\"\n",
		"/d/\n/d/b = \"\"\n",
	}
	got := sortedKeys(images(t, m, CrashDropUnsynced|CrashNamespace, 200))
	if !slices.Equal(got, want) {
		t.Fatalf("images %q, want %q", got, want)
	}
}

// TestMemSyncDirSettlesJournal: operations on a directory before its
// SyncDir are settled by it; a removal after a creation cannot be undone
// by replaying the creation.
func TestMemSyncDirSettlesJournal(t *testing.T) {
	m := NewMem()
	create(t, m, "x")
	must(t, m.Remove("x"))
	must(t, m.SyncDir("/"))
	create(t, m, "y")
	got := sortedKeys(images(t, m, CrashDropUnsynced|CrashNamespace, 50))
	if want := []string{"", "/y = \"\"\n"}; !slices.Equal(got, want) {
		t.Fatalf("images %q, want %q", got, want)
	}
}

// TestMemUnsyncedTruncateMaySurvive: a truncation not followed by a Sync
// may survive with CrashNamespace (the file cut, or extended with zeros).
func TestMemUnsyncedTruncateMaySurvive(t *testing.T) {
	m := NewMem()
	f := create(t, m, "f")
	writeAt(t, f, "abcdef", 0)
	must(t, f.Sync())
	must(t, m.SyncDir("/"))
	must(t, f.Truncate(2))
	must(t, f.Truncate(8))
	got := sortedKeys(images(t, m, CrashDropUnsynced|CrashNamespace, 100))
	want := []string{`/f = "ab"` + "\n", `/f = "ab\x00\x00\x00\x00\x00\x00"` + "\n", `/f = "abcdef"` + "\n"}
	if !slices.Equal(got, want) {
		t.Fatalf("images %q, want %q", got, want)
	}
	must(t, f.Sync()) // the size is durable: the journal forgets the truncations
	if len(m.journal) != 0 {
		t.Fatalf("journal holds %d entries after the file's Sync", len(m.journal))
	}
}

// TestMemScatter: with CrashScatter the unsynced sectors of a file persist
// in any order: an image can have a later sector new and an earlier one
// old. Every sector is all old or all new except at most one torn one.
func TestMemScatter(t *testing.T) {
	const sectors = 6
	m := NewMem()
	f := create(t, m, "f")
	must(t, m.SyncDir("/"))
	writeAt(t, f, string(bytes.Repeat([]byte("D"), sectors*tornSector)), 0)
	must(t, f.Sync())
	writeAt(t, f, string(bytes.Repeat([]byte("C"), sectors*tornSector)), 0)
	rng := rand.New(rand.NewPCG(1, 3))
	var outOfOrder, allOld, allNew bool
	for range 500 {
		got := []byte(contents(t, m.CrashClone(CrashTorn|CrashScatter, rng), "f"))
		if len(got) != sectors*tornSector {
			t.Fatalf("size %d", len(got))
		}
		var mixed int
		var kinds []byte
		for s := 0; s < sectors; s++ {
			sec := got[s*tornSector : (s+1)*tornSector]
			switch {
			case bytes.Count(sec, []byte("C")) == tornSector:
				kinds = append(kinds, 'C')
			case bytes.Count(sec, []byte("D")) == tornSector:
				kinds = append(kinds, 'D')
			default:
				// Torn: new bytes up to an offset, old after.
				k := bytes.IndexByte(sec, 'D')
				if bytes.Count(sec[:k], []byte("C")) != k || bytes.Count(sec[k:], []byte("D")) != len(sec)-k {
					t.Fatalf("sector %d is neither old, new, nor torn at one offset", s)
				}
				mixed++
				kinds = append(kinds, 'T')
			}
		}
		if mixed > 1 {
			t.Fatalf("%d torn sectors", mixed)
		}
		if i, j := bytes.IndexByte(kinds, 'D'), bytes.LastIndexByte(kinds, 'C'); i >= 0 && j > i {
			outOfOrder = true
		}
		allOld = allOld || string(kinds) == "DDDDDD"
		allNew = allNew || string(kinds) == "CCCCCC"
	}
	if !outOfOrder || !allOld || !allNew {
		t.Fatalf("out of order %v, all old %v, all new %v; want all", outOfOrder, allOld, allNew)
	}
	// The plain torn model never persists a later sector without the
	// earlier ones.
	for range 500 {
		got := []byte(contents(t, m.CrashClone(CrashTorn, rng), "f"))
		if i, j := bytes.IndexByte(got, 'D'), bytes.LastIndexByte(got, 'C'); i >= 0 && j > i {
			t.Fatal("CrashTorn persisted a change after an unpersisted one")
		}
	}
}

// TestMemScatterGrowth: a grown file's size lands anywhere between its
// durable and current sizes, never-written bytes read as zeros or, in one
// torn sector, garbage, and the durable prefix is intact.
func TestMemScatterGrowth(t *testing.T) {
	m := NewMem()
	f := create(t, m, "f")
	must(t, m.SyncDir("/"))
	writeAt(t, f, "durable", 0)
	must(t, f.Sync())
	writeAt(t, f, string(bytes.Repeat([]byte("n"), 3*tornSector)), 7)
	rng := rand.New(rand.NewPCG(2, 2))
	sizes := map[int]bool{}
	for range 300 {
		got := []byte(contents(t, m.CrashClone(CrashStrict, rng), "f"))
		if len(got) < 7 || len(got) > 7+3*tornSector || string(got[:7]) != "durable" {
			t.Fatalf("image of %d bytes starting %q", len(got), got[:min(7, len(got))])
		}
		sizes[len(got)] = true
	}
	if len(sizes) < 50 {
		t.Fatalf("only %d distinct sizes", len(sizes))
	}
}

func TestCrashModeString(t *testing.T) {
	for mode, want := range map[CrashMode]string{
		CrashDropUnsynced:                  "drop-unsynced",
		CrashTorn:                          "torn",
		CrashDropUnsynced | CrashNamespace: "drop-unsynced+namespace",
		CrashStrict:                        "torn+namespace+scatter",
		CrashMode(8):                       "CrashMode(8)",
	} {
		if got := mode.String(); got != want {
			t.Errorf("%d: %q, want %q", int(mode), got, want)
		}
	}
}

package peertest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/bench"
)

// peerEngines are the registered engines this package provides. Other
// registrations (Strata's own, if linked in) are tested by their owners.
func peerEngines(t *testing.T) []string {
	t.Helper()
	ours := versions()
	var names []string
	for _, name := range bench.Engines() {
		if _, ok := ours[name]; ok {
			names = append(names, name)
		}
	}
	if len(names) != len(ours) {
		t.Fatalf("registered engines %v, want all of %v", bench.Engines(), ours)
	}
	return names
}

func testConfig(dir string) bench.Config {
	return bench.Config{Dir: dir, CacheBytes: 8 << 20, Codec: "zstd"}
}

func open(t *testing.T, name string, cfg bench.Config) bench.Engine {
	t.Helper()
	f, err := bench.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	e, desc, err := f(cfg)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	if desc == "" || !strings.HasPrefix(desc, name+" v") {
		t.Errorf("describe %q does not start with %q and a version", desc, name+" v")
	}
	return e
}

func key(i int) []byte { return fmt.Appendf(nil, "key%06d", i) }
func val(i, gen int) []byte {
	return bytes.Repeat(fmt.Appendf(nil, "v%d.%d|", i, gen), 1+i%7)
}

func mustApply(t *testing.T, e bench.Engine, ops []bench.Op, sync bool) {
	t.Helper()
	if err := e.Apply(ops, sync); err != nil {
		t.Fatalf("apply: %v", err)
	}
}

func mustGet(t *testing.T, e bench.Engine, k []byte, want []byte, wantFound bool) {
	t.Helper()
	got, found, err := e.Get(k, nil)
	if err != nil {
		t.Fatalf("get %q: %v", k, err)
	}
	if found != wantFound || (found && !bytes.Equal(got, want)) {
		t.Fatalf("get %q = %q, %v; want %q, %v", k, got, found, want, wantFound)
	}
}

type kv struct{ k, v string }

func scanAll(t *testing.T, e bench.Engine, start []byte, n int, stopAfter int) []kv {
	t.Helper()
	var out []kv
	err := e.Scan(start, nil, n, func(k, v []byte) bool {
		out = append(out, kv{string(k), string(v)})
		return stopAfter <= 0 || len(out) < stopAfter
	})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	return out
}

func TestConformance(t *testing.T) {
	for _, name := range peerEngines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), name)
			cfg := testConfig(dir)
			e := open(t, name, cfg)

			// Sets, in a few batches, one of them synced.
			const N = 500
			for b := 0; b < N; b += 100 {
				var ops []bench.Op
				for i := b; i < b+100; i++ {
					ops = append(ops, bench.Op{Key: key(i), Value: val(i, 0)})
				}
				mustApply(t, e, ops, b == 200)
			}
			// Deletes and overwrites, in one batch; a key set and deleted in
			// the same batch ends deleted (last op wins).
			var ops []bench.Op
			for i := 0; i < N; i += 3 {
				ops = append(ops, bench.Op{Key: key(i), Delete: true})
			}
			for i := 1; i < N; i += 3 {
				ops = append(ops, bench.Op{Key: key(i), Value: val(i, 1)})
			}
			ops = append(ops, bench.Op{Key: key(N), Value: []byte("x")}, bench.Op{Key: key(N), Delete: true})
			ops = append(ops, bench.Op{Key: key(N + 1), Delete: true}) // absent key
			mustApply(t, e, ops, true)

			want := func(i int) ([]byte, bool) {
				switch {
				case i >= N:
					return nil, false
				case i%3 == 0:
					return nil, false
				case i%3 == 1:
					return val(i, 1), true
				}
				return val(i, 0), true
			}
			for i := 0; i < N+3; i++ {
				v, ok := want(i)
				mustGet(t, e, key(i), v, ok)
			}
			mustGet(t, e, []byte("a"), nil, false)
			mustGet(t, e, []byte("zzz"), nil, false)

			// dst reuse: the value is appended to dst[:0], in place when it fits.
			dst := make([]byte, 3, 1024)
			copy(dst, "old")
			got, found, err := e.Get(key(1), dst)
			if err != nil || !found || !bytes.Equal(got, val(1, 1)) {
				t.Fatalf("get with dst = %q, %v, %v", got, found, err)
			}
			if &got[0] != &dst[:1][0] {
				t.Errorf("get did not reuse dst's capacity")
			}
			got, found, err = e.Get(key(0), dst)
			if err != nil || found || len(got) != 0 {
				t.Fatalf("get of a deleted key with dst = %q, %v, %v", got, found, err)
			}

			// Scan: order, start bounds, n, early stop.
			var all []kv
			for i := 0; i < N; i++ {
				if v, ok := want(i); ok {
					all = append(all, kv{string(key(i)), string(v)})
				}
			}
			if got := scanAll(t, e, nil, 1<<30, 0); !slices.Equal(got, all) {
				t.Fatalf("full scan: %d pairs, want %d (first %v)", len(got), len(all), got[:min(3, len(got))])
			}
			if got := scanAll(t, e, key(0), 10, 0); !slices.Equal(got, all[:10]) {
				t.Fatalf("scan from a deleted key: %v", got)
			}
			if got := scanAll(t, e, key(2), 5, 0); !slices.Equal(got, all[1:6]) {
				t.Fatalf("scan from an existing key: %v", got)
			}
			if got := scanAll(t, e, []byte("key000001x"), 2, 0); !slices.Equal(got, all[1:3]) {
				t.Fatalf("scan from between keys: %v", got)
			}
			if got := scanAll(t, e, key(N-1), 10, 0); !slices.Equal(got, all[len(all)-1:]) {
				t.Fatalf("scan at the end: %v", got)
			}
			if got := scanAll(t, e, []byte("zzz"), 10, 0); len(got) != 0 {
				t.Fatalf("scan past the end: %v", got)
			}
			if got := scanAll(t, e, nil, 0, 0); len(got) != 0 {
				t.Fatalf("scan with n=0: %v", got)
			}
			if got := scanAll(t, e, key(100), 50, 4); !slices.Equal(got, all[66:70]) {
				t.Fatalf("scan stopped after 4: %v", got)
			}

			// Empty values are values, not absences.
			mustApply(t, e, []bench.Op{{Key: []byte("empty"), Value: []byte{}}}, false)
			mustGet(t, e, []byte("empty"), []byte{}, true)
			if got := scanAll(t, e, []byte("empty"), 1, 0); !slices.Equal(got, []kv{{"empty", ""}}) {
				t.Fatalf("scan of an empty value: %v", got)
			}

			if err := e.Flush(); err != nil {
				t.Fatalf("flush: %v", err)
			}
			_ = e.Metrics() // nil is allowed
			// Reads after a flush.
			mustGet(t, e, key(2), val(2, 0), true)
			mustGet(t, e, key(3), nil, false)

			// One more batch without sync nor flush, then close: Close must
			// keep it.
			mustApply(t, e, []bench.Op{{Key: key(3), Value: []byte("back")}, {Key: key(4), Delete: true}}, false)
			if err := e.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}

			// Reopen: everything is there.
			e = open(t, name, cfg)
			defer func() {
				if err := e.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			}()
			mustGet(t, e, key(3), []byte("back"), true)
			mustGet(t, e, key(4), nil, false)
			mustGet(t, e, key(5), val(5, 0), true)
			mustGet(t, e, key(7), val(7, 1), true)
			mustGet(t, e, key(N), nil, false)
			mustGet(t, e, []byte("empty"), []byte{}, true)
			if got := scanAll(t, e, key(5), 3, 0); !slices.Equal(got, []kv{
				{string(key(5)), string(val(5, 0))},
				{string(key(7)), string(val(7, 1))},
				{string(key(8)), string(val(8, 0))},
			}) {
				t.Fatalf("scan after reopen: %v", got)
			}
			m := e.Metrics()
			for k, v := range m {
				if v != v { // NaN
					t.Errorf("metric %s is NaN", k)
				}
			}
		})
	}
}

// TestAtomicBatches checks that readers never see part of a batch: a
// writer moves a constant sum between keys in batches while readers scan
// and add up the keys.
func TestAtomicBatches(t *testing.T) {
	for _, name := range peerEngines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := open(t, name, testConfig(filepath.Join(t.TempDir(), name)))
			defer e.Close()
			const keys, total = 20, 1000
			enc := func(n int) []byte { return fmt.Appendf(nil, "%08d", n) }
			var ops []bench.Op
			for i := 0; i < keys; i++ {
				n := 0
				if i == 0 {
					n = total
				}
				ops = append(ops, bench.Op{Key: key(i), Value: enc(n)})
			}
			mustApply(t, e, ops, false)

			done := make(chan error)
			stop := make(chan struct{})
			go func() {
				rng := rand.New(rand.NewPCG(1, 2))
				vals := make([]int, keys)
				vals[0] = total
				for r := 0; r < 300; r++ {
					ops := ops[:0]
					for j := 0; j < 3; j++ {
						from, to := rng.IntN(keys), rng.IntN(keys)
						if vals[from] == 0 || from == to {
							continue
						}
						amt := 1 + rng.IntN(vals[from])
						vals[from] -= amt
						vals[to] += amt
						ops = append(ops, bench.Op{Key: key(from), Value: enc(vals[from])}, bench.Op{Key: key(to), Value: enc(vals[to])})
					}
					if err := e.Apply(ops, false); err != nil {
						done <- err
						return
					}
				}
				close(stop)
				done <- nil
			}()
			for reads := 0; ; reads++ {
				select {
				case <-stop:
					if err := <-done; err != nil {
						t.Fatal(err)
					}
					return
				default:
				}
				sum, n := 0, 0
				err := e.Scan(nil, nil, keys, func(k, v []byte) bool {
					var x int
					if _, err := fmt.Sscanf(string(v), "%d", &x); err != nil {
						t.Errorf("value %q: %v", v, err)
					}
					sum += x
					n++
					return true
				})
				if err != nil {
					t.Fatal(err)
				}
				if sum != total || n != keys {
					t.Fatalf("scan %d saw %d keys summing to %d, want %d summing to %d", reads, n, sum, keys, total)
				}
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	for _, name := range peerEngines(t) {
		t.Run(name, func(t *testing.T) {
			f, _ := bench.Lookup(name)
			// A directory path that is a file cannot be opened.
			file := filepath.Join(t.TempDir(), "file")
			if err := writeFile(file); err != nil {
				t.Fatal(err)
			}
			e, _, err := f(bench.Config{Dir: file, CacheBytes: 1 << 20})
			if err == nil {
				e.Close()
				t.Fatal("opening a file as a directory succeeded")
			}
			if !strings.HasPrefix(err.Error(), name+":") {
				t.Errorf("error %q lacks the engine's name", err)
			}
			var target interface{ Unwrap() error }
			if !errors.As(err, &target) {
				t.Errorf("error %q wraps nothing", err)
			}
		})
	}
}

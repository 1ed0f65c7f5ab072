package peertest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/bench"
)

// TestModel runs a random mix of batches, point reads, scans, flushes and
// reopens against every peer and checks each answer against a map.
func TestModel(t *testing.T) {
	const steps = 3000
	for _, name := range peerEngines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(len(name)), 42))
			cfg := testConfig(filepath.Join(t.TempDir(), name))
			e := open(t, name, cfg)
			defer func() { e.Close() }()
			model := map[string]string{}
			mkey := func() []byte {
				k := fmt.Appendf(nil, "k%04d", rng.IntN(300))
				if rng.IntN(10) == 0 {
					k = append(k, 'x') // between keys, mostly absent
				}
				return k
			}
			var dst []byte
			for step := 0; step < steps; step++ {
				switch r := rng.IntN(200); {
				case r < 80: // batch
					ops := make([]bench.Op, 1+rng.IntN(12))
					for i := range ops {
						ops[i].Key = mkey()
						if rng.IntN(3) == 0 {
							ops[i].Delete = true
						} else {
							v := make([]byte, rng.IntN(300))
							for j := range v {
								v[j] = byte(rng.Uint32())
							}
							ops[i].Value = v
						}
					}
					mustApply(t, e, ops, rng.IntN(10) == 0)
					for _, op := range ops {
						if op.Delete {
							delete(model, string(op.Key))
						} else {
							model[string(op.Key)] = string(op.Value)
						}
					}
				case r < 140: // point read, with or without dst to reuse
					k := mkey()
					if rng.IntN(2) == 0 {
						dst = nil
					}
					got, found, err := e.Get(k, dst)
					if err != nil {
						t.Fatalf("step %d: get: %v", step, err)
					}
					want, ok := model[string(k)]
					if found != ok || !bytes.Equal(got, []byte(want)) {
						t.Fatalf("step %d: get %q = %x, %v; want %x, %v", step, k, got, found, want, ok)
					}
					dst = got
				case r < 196: // scan
					var start, end []byte
					if rng.IntN(8) != 0 {
						start = mkey()
					}
					if rng.IntN(2) == 0 {
						end = mkey()
					}
					n, stop := rng.IntN(30), rng.IntN(40)
					var got []kv
					err := e.Scan(start, end, n, func(k, v []byte) bool {
						got = append(got, kv{string(k), string(v)})
						return len(got) != stop
					})
					if err != nil {
						t.Fatalf("step %d: scan: %v", step, err)
					}
					var keys []string
					for k := range model {
						if k >= string(start) && (end == nil || k < string(end)) {
							keys = append(keys, k)
						}
					}
					slices.Sort(keys)
					var want []kv
					for _, k := range keys {
						if len(want) == n || (stop > 0 && len(want) == stop) {
							break
						}
						want = append(want, kv{k, model[k]})
					}
					if !slices.Equal(got, want) {
						t.Fatalf("step %d: scan from %q n=%d stop=%d: got %d pairs, want %d", step, start, n, stop, len(got), len(want))
					}
				case r < 198:
					if err := e.Flush(); err != nil {
						t.Fatalf("step %d: flush: %v", step, err)
					}
				default: // close and reopen
					if err := e.Close(); err != nil {
						t.Fatalf("step %d: close: %v", step, err)
					}
					e = open(t, name, cfg)
				}
			}
			if m := e.Metrics(); m != nil {
				t.Logf("metrics: %v", m)
			}
		})
	}
}

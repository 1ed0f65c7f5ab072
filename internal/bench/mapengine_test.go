package bench

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// mapEngine is an in-memory Engine for testing the runner without Strata:
// a map for point reads and a sorted key slice for scans. Its data
// outlives Close (per directory, in mapStores) so that reuse can be
// tested; Flush writes a file so that the directory has a size.
type mapEngine struct {
	dir string
	*mapStore
}

type mapStore struct {
	mu     sync.RWMutex
	values map[string][]byte
	keys   [][]byte // sorted
	closed bool
	// applies counts Apply calls and syncs the ones with sync set.
	applies, syncs int
}

var (
	mapStoresMu sync.Mutex
	mapStores   = map[string]*mapStore{}
)

var errInjected = errors.New("injected failure")

func init() {
	Register("map", func(cfg Config) (Engine, string, error) { return openMap(cfg) })
	// "failing" loads like "map" and fails every read.
	Register("failing", func(cfg Config) (Engine, string, error) {
		e, d, err := openMap(cfg)
		if err != nil {
			return nil, "", err
		}
		return failingEngine{e}, d, nil
	})
	// "null" stores nothing and answers every read with one fixed row,
	// so that allocation measurements see the runner's alone.
	Register("null", func(cfg Config) (Engine, string, error) { return nullEngine{}, "null", nil })
}

func openMap(cfg Config) (*mapEngine, string, error) {
	// Like a real engine, a missing directory means an empty store.
	_, statErr := os.Stat(cfg.Dir)
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, "", err
	}
	mapStoresMu.Lock()
	defer mapStoresMu.Unlock()
	s := mapStores[cfg.Dir]
	if s == nil || statErr != nil {
		s = &mapStore{values: map[string][]byte{}}
		mapStores[cfg.Dir] = s
	}
	s.mu.Lock()
	s.closed = false
	s.mu.Unlock()
	return &mapEngine{dir: cfg.Dir, mapStore: s}, "map engine", nil
}

func (e *mapEngine) Get(key, dst []byte) ([]byte, bool, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return dst[:0], false, errors.New("map engine closed")
	}
	v, ok := e.values[string(key)]
	return append(dst[:0], v...), ok, nil
}

func (e *mapEngine) Scan(start, end []byte, n int, fn func(k, v []byte) bool) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	i, _ := slices.BinarySearchFunc(e.keys, start, bytes.Compare)
	for ; i < len(e.keys) && n > 0; i, n = i+1, n-1 {
		k := e.keys[i]
		if end != nil && bytes.Compare(k, end) >= 0 {
			break
		}
		if !fn(k, e.values[string(k)]) {
			break
		}
	}
	return nil
}

func (e *mapEngine) Apply(ops []Op, sync bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errors.New("map engine closed")
	}
	e.applies++
	if sync {
		e.syncs++
	}
	for _, op := range ops {
		i, found := slices.BinarySearchFunc(e.keys, op.Key, bytes.Compare)
		switch {
		case op.Delete && found:
			e.keys = slices.Delete(e.keys, i, i+1)
			delete(e.values, string(op.Key))
		case !op.Delete:
			if !found {
				e.keys = slices.Insert(e.keys, i, bytes.Clone(op.Key))
			}
			e.values[string(op.Key)] = bytes.Clone(op.Value)
		}
	}
	return nil
}

func (e *mapEngine) Flush() error {
	e.mu.RLock()
	n := len(e.keys)
	e.mu.RUnlock()
	return os.WriteFile(filepath.Join(e.dir, "data"), make([]byte, 1+n), 0o644)
}

func (e *mapEngine) Metrics() map[string]float64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return map[string]float64{"rows": float64(len(e.keys))}
}

func (e *mapEngine) Close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	return nil
}

type failingEngine struct{ *mapEngine }

func (failingEngine) Get(key, dst []byte) ([]byte, bool, error) { return dst[:0], false, errInjected }
func (failingEngine) Scan([]byte, []byte, int, func(k, v []byte) bool) error {
	return errInjected
}

type nullEngine struct{}

var nullRow = bytes.Repeat([]byte{'x'}, 200)

func (nullEngine) Get(key, dst []byte) ([]byte, bool, error) {
	return append(dst[:0], nullRow...), true, nil
}

func (nullEngine) Scan(start, _ []byte, n int, fn func(k, v []byte) bool) error {
	for range n {
		if !fn(start, nullRow) {
			break
		}
	}
	return nil
}

func (nullEngine) Apply([]Op, bool) error      { return nil }
func (nullEngine) Flush() error                { return nil }
func (nullEngine) Metrics() map[string]float64 { return nil }
func (nullEngine) Close() error                { return nil }

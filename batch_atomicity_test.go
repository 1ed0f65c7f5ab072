package strata

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// TestConcurrentBatchAtomicity: while a writer commits batches that change
// hundreds of keys at once (splitting leaves, emptying and dropping them),
// point readers never miss a key that no batch touches nor see a key go
// back to an older batch, and iterators see every batch whole or not at
// all. Run under -race in CI.
func TestConcurrentBatchAtomicity(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs)
	opts.CheckpointWAL = 256 << 10 // checkpoints during the run
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const stable, rows, dels = 400, 400, 100
	b := db.NewBatch()
	for i := 0; i < stable; i++ {
		b.Set([]byte(fmt.Sprintf("k%04d/s", i)), []byte("stable"))
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	rounds := 150
	if testing.Short() {
		rounds = 40
	}
	var round atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
		stop.Store(true)
	}
	roundOf := func(v []byte) int {
		n, err := strconv.Atoi(string(v[:bytes.IndexByte(v, '|')]))
		if err != nil {
			report(fmt.Errorf("value %.20q is not a round's", v))
		}
		return n
	}
	// Point readers.
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			seen := make([]int, rows)
			for !stop.Load() {
				k := fmt.Sprintf("k%04d/s", rng.IntN(stable))
				if v, err := db.Get([]byte(k)); err != nil || string(v) != "stable" {
					report(fmt.Errorf("Get(%s) of a key no batch touches: %q %v", k, v, err))
					return
				}
				i := rng.IntN(rows)
				v, err := db.Get([]byte(fmt.Sprintf("k%04d/r", i)))
				if errors.Is(err, ErrNotFound) {
					continue // before the first batch
				}
				if err != nil {
					report(err)
					return
				}
				if r := roundOf(v); r < seen[i] {
					report(fmt.Errorf("k%04d/r went back from round %d to %d", i, seen[i], r))
					return
				} else {
					seen[i] = r
				}
			}
		}()
	}
	// An iterator reader: each scan sees one batch.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			it, err := db.NewIter(nil)
			if err != nil {
				report(err)
				return
			}
			rs := map[int]int{}
			nStable, nDel := 0, 0
			for it.First(); it.Valid(); it.Next() {
				switch k := it.Key(); {
				case k[0] == 'd':
					nDel++
				case k[len(k)-1] == 's':
					nStable++
				default:
					rs[roundOf(it.Value())]++
				}
			}
			if err := it.Error(); err != nil {
				report(err)
			}
			it.Close()
			if nStable != stable || len(rs) > 1 || (len(rs) == 1 && rs[maxKey(rs)] != rows) || (nDel != 0 && nDel != dels) {
				report(fmt.Errorf("a scan saw %d stable keys, rounds %v, %d of the %d alternating keys", nStable, rs, nDel, dels))
				return
			}
		}
	}()
	rng := rand.New(rand.NewPCG(1, 1))
	for r := 1; r <= rounds && !stop.Load(); r++ {
		b := db.NewBatch()
		for i := 0; i < rows; i++ {
			pad := strings.Repeat("x", rng.IntN(400)) // values change size: leaves split
			// Between the stable keys: their leaves split and shrink.
			b.Set([]byte(fmt.Sprintf("k%04d/r", i)), []byte(fmt.Sprintf("%d|%s", r, pad)))
		}
		for i := 0; i < dels; i++ { // present in odd rounds: leaves empty and go
			k := []byte(fmt.Sprintf("d%04d", i))
			if r%2 == 1 {
				b.Set(k, []byte("d"))
			} else {
				b.Delete(k)
			}
		}
		if err := b.Commit(nil); err != nil {
			t.Fatal(err)
		}
		round.Store(int64(r))
	}
	stop.Store(true)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	if db.Stats().Checkpoints == 0 {
		t.Error("no checkpoint ran during the writes")
	}
}

func maxKey(m map[int]int) int {
	k := -1
	for x := range m {
		k = max(k, x)
	}
	return k
}

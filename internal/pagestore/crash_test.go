package pagestore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// histOp is one acknowledged mutation: version ver of page id, or a free (ver < 0).
type histOp struct {
	id  PageID
	ver int
}

// crashWorkload runs a deterministic random workload until it finishes or
// the file system crashes. It returns the acknowledged mutations in order
// and how many of them a successful Sync (or Checkpoint, Clean, Close)
// made durable.
func crashWorkload(t *testing.T, fs *vfs.MemFS, seed uint64, nops int, tune func(*Options)) (hist []histOp, durable int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	opts := testOptions(fs, mustCodec(t, allCodecs[seed%uint64(len(allCodecs))]))
	if tune != nil {
		tune(&opts)
	}
	s, err := Open("db", opts)
	if err != nil {
		return nil, 0
	}
	present := map[PageID]bool{}
	ver := 0
	for i := 0; i < nops; i++ {
		id := PageID(rng.IntN(24))
		start := len(hist)
		var err error
		switch r := rng.IntN(100); {
		case r < 65:
			ver++
			if _, _, err = s.WritePage(id, pageContent(id, ver, testPageSize)); err == nil {
				hist = append(hist, histOp{id, ver})
				present[id] = true
			}
		case r < 78:
			if !present[id] {
				continue
			}
			if err = s.Free(id); err == nil {
				hist = append(hist, histOp{id, -1})
				delete(present, id)
			}
		case r < 88:
			err = s.Sync()
		case r < 92:
			err = s.Checkpoint()
		case r < 97:
			var res CleanResult
			res, err = s.Clean()
			if err == nil && res.SegmentsCleaned == 0 {
				continue // nothing to clean: no checkpoint, so no sync either
			}
		default:
			if err = s.Close(); err == nil {
				durable = start
				s, err = Open("db", opts)
				if err != nil {
					return hist, durable
				}
				continue
			}
		}
		if err != nil {
			if !errors.Is(err, vfs.ErrCrashed) {
				t.Fatalf("seed %d op %d: unexpected error: %v", seed, i, err)
			}
			return hist, durable
		}
		if len(hist) == start {
			durable = start // a sync, checkpoint or clean covers everything before it
		}
	}
	s.Close()
	return hist, durable
}

// readAll returns the version of every page in [0, 24) (absent pages are
// missing from the map), verifying content byte for byte.
func readAll(t *testing.T, s *Store) map[PageID]int {
	t.Helper()
	got := map[PageID]int{}
	buf := make([]byte, testPageSize)
	for id := PageID(0); id < 24; id++ {
		err := s.ReadPage(id, buf)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			t.Fatalf("page %d: %v", id, err)
		}
		var pid PageID
		var ver int
		if _, err := fmt.Sscanf(string(buf[:40]), "page %d version %d|", &pid, &ver); err != nil || pid != id {
			t.Fatalf("page %d: unrecognisable content %q", id, buf[:40])
		}
		if !bytes.Equal(buf, pageContent(id, ver, testPageSize)) {
			t.Fatalf("page %d version %d: content differs", id, ver)
		}
		got[id] = ver
	}
	return got
}

// checkPrefix verifies the crash rule: the recovered state is the state
// after some prefix of the acknowledged mutations that includes every
// durable one.
func checkPrefix(t *testing.T, hist []histOp, durable int, got map[PageID]int) {
	t.Helper()
	state := map[PageID]int{}
	for _, op := range hist[:durable] {
		if op.ver < 0 {
			delete(state, op.id)
		} else {
			state[op.id] = op.ver
		}
	}
	mismatch := func(id PageID) bool {
		v, ok := state[id]
		g, gok := got[id]
		return ok != gok || v != g
	}
	bad := 0
	for id := PageID(0); id < 24; id++ {
		if mismatch(id) {
			bad++
		}
	}
	for p := durable; ; p++ {
		if bad == 0 {
			return
		}
		if p == len(hist) {
			break
		}
		op := hist[p]
		before := mismatch(op.id)
		if op.ver < 0 {
			delete(state, op.id)
		} else {
			state[op.id] = op.ver
		}
		if after := mismatch(op.id); before != after {
			if after {
				bad++
			} else {
				bad--
			}
		}
	}
	t.Fatalf("recovered state %v is not the state after any prefix of %d..%d acknowledged ops", got, durable, len(hist))
}

// TestCrashRecovery crashes the store at hundreds of random points (during
// writes, syncs, rollovers, checkpoints, cleaning and reopening), both
// dropping unsynced writes and tearing them, and checks that recovery gives
// the state after a prefix of the acknowledged operations that includes all
// the durable ones, and that the recovered store keeps working. With these
// small stores every checkpoint rewrites the whole map.
func TestCrashRecovery(t *testing.T) {
	testCrashRecovery(t, 25, 200, nil)
}

// TestCrashRecoveryMapLog is TestCrashRecovery with checkpoints that append
// deltas to the map log and rewrite the whole map only every few
// checkpoints, so that crashes land in delta appends (torn deltas), between
// a full rewrite and the emptying of the log, and in recoveries that apply
// full maps and deltas. A low cleaner threshold makes most cleaning passes
// relocate records to the cold stream.
func TestCrashRecoveryMapLog(t *testing.T) {
	testCrashRecovery(t, 25, 200, func(o *Options) {
		o.MapLogRatio = 40 // deltas are a 4 KiB block, the map about 500 bytes: 4 or 5 deltas per full map
		o.CleanerThreshold = 0.1
	})
}

// testCrashRecovery crashes the workload of each seed at random points and
// checks the recovered store; it fails if fewer than minPoints ran.
//
// Under the race detector each seed's workload is crashed at the first 3
// of its 12 points (minPoints scaled alike): every seed's workload still
// runs, up to and through recovery, with every crash mode (vfs.CrashModes), which is what
// the detector needs to see the store's goroutines interleave; the crash
// points themselves are what the test counts on, and .ci/run runs it with
// all of them without the race detector, about 8 times faster. (Under it
// the 300 points of each of these tests cost about a minute of CPU, most
// of it in the instrumented compressors.)
func testCrashRecovery(t *testing.T, seeds uint64, minPoints int, tune func(*Options)) {
	const nops = 250
	pointsPerSeed := 12
	if raceEnabled {
		minPoints = minPoints * 3 / pointsPerSeed
		pointsPerSeed = 3
	}
	points := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		dry := vfs.NewMem()
		crashWorkload(t, dry, seed, nops, tune)
		total := dry.OpCount()
		rng := rand.New(rand.NewPCG(seed, 2))
		for i := 0; i < pointsPerSeed; i++ {
			crashAt := rng.IntN(total)
			mode := vfs.CrashModes[(int(seed)+i)%len(vfs.CrashModes)] // every mode, also with few points per seed
			t.Run(fmt.Sprintf("seed%d/op%d/%v", seed, crashAt, mode), func(t *testing.T) {
				fs := vfs.NewMem()
				fs.CrashAfterOps(crashAt)
				hist, durable := crashWorkload(t, fs, seed, nops, tune)
				after := fs.CrashedClone(mode, rand.New(rand.NewPCG(seed, uint64(i))))
				opts := testOptions(after, mustCodec(t, "zstd"))
				if tune != nil {
					tune(&opts)
				}
				s, err := Open("db", opts)
				if err != nil {
					t.Fatalf("recovery failed: %v", err)
				}
				got := readAll(t, s)
				checkPrefix(t, hist, durable, got)

				// The recovered store must go on working: write, reopen, read.
				for id := PageID(0); id < 24; id += 3 {
					if _, _, err := s.WritePage(id, pageContent(id, 1000+int(id), testPageSize)); err != nil {
						t.Fatal(err)
					}
					got[id] = 1000 + int(id)
				}
				if err := s.Sync(); err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				opts.Codec = nil
				if s, err = Open("db", opts); err != nil {
					t.Fatalf("second recovery: %v", err)
				}
				defer s.Close()
				again := readAll(t, s)
				if fmt.Sprint(again) != fmt.Sprint(got) {
					t.Fatalf("after reopen: %v, want %v", again, got)
				}
			})
			points++
		}
	}
	if points < minPoints {
		t.Fatalf("only %d crash points", points)
	}
}

//go:build stress

package strata

// Adversarial stress test of snapshot versions (internal/btree/versions.go):
// snapshots, iterators (held mid-scan while commits run) and View
// transactions must read exactly the state they were taken at, while a
// writer commits random batches and Update transactions (some failing
// part-way through injected store-read errors), checkpoints run, the cache
// is tiny, and the database is closed under them and reopened.
//
// Model: every commit (round r) sets the key "!round" to "!round|r|", and
// every value written in round r is key|r|<pseudo-random bytes of a chosen
// size>. A reader learns the round R of its snapshot by reading "!round"
// through it, and then every read must equal the model after the
// successful rounds ≤ R.
//
// Run: STRESS_DURATION=120s go test -tags stress -race -run 'TestStressSnapshotVersions$' -count=3 .
// It is not run by .ci/run (it is useful only for minutes at a time).
// (STRESS_DURATION is split among the configurations; STRESS_CONFIG=name
// runs those whose name contains it; STRESS_SEED fixes the seeds, though
// the interleavings still vary; STRESS_LOG=1 shows the database's
// warnings; STRESS_CLOSE_DURING_CLOSE=1 lets readers close iterators while
// DB.Close runs: that hung Close before TestIteratorClosedWhileCloseWaits's
// fix.)

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/btree"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

const (
	svKeys     = 3000 // data keys, plus "!round" at index 0
	svRoundKey = "!round"
)

func svKey(ki int) string {
	if ki == 0 {
		return svRoundKey
	}
	return fmt.Sprintf("k%05d", ki-1)
}

func svValue(dst []byte, ki int, round int64, size int) []byte {
	dst = append(dst, svKey(ki)...)
	dst = append(dst, '|')
	dst = strconv.AppendInt(dst, round, 10)
	dst = append(dst, '|')
	x := uint64(ki+1)*0x9E3779B97F4A7C15 ^ uint64(round)*0xBF58476D1CE4E5B9 | 1
	for i := 0; i < size; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		dst = append(dst, byte(x))
	}
	return dst
}

// svParseRound returns the round stamped in a value, -1 if none.
func svParseRound(v []byte) int64 {
	parts := bytes.SplitN(v, []byte("|"), 3)
	if len(parts) < 3 {
		return -1
	}
	r, err := strconv.ParseInt(string(parts[1]), 10, 64)
	if err != nil {
		return -1
	}
	return r
}

type svEntry struct {
	round int64
	size  int32
	del   bool
}

type svRow struct {
	ki    int
	key   string
	round int64
	size  int
}

func (r svRow) value() []byte { return svValue(nil, r.ki, r.round, r.size) }

// svModel holds each key's history of writes by round. The writer appends
// a round's writes before it commits (tentatively) and removes them if the
// commit failed: a snapshot that read round R ignores later rounds.
type svModel struct {
	mu   sync.RWMutex
	hist [][]svEntry
}

func newSVModel() *svModel { return &svModel{hist: make([][]svEntry, svKeys+1)} }

func (m *svModel) atLocked(ki int, R int64) (svEntry, bool) {
	h := m.hist[ki]
	i := sort.Search(len(h), func(i int) bool { return h[i].round > R })
	if i == 0 {
		return svEntry{}, false
	}
	e := h[i-1]
	return e, !e.del
}

func (m *svModel) at(ki int, R int64) (svEntry, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.atLocked(ki, R)
}

// rows returns the rows present at round R with key index in [lo, hi).
func (m *svModel) rows(R int64, lo, hi int, over map[int]svEntry) []svRow {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var rows []svRow
	for ki := lo; ki < hi; ki++ {
		e, ok := m.atLocked(ki, R)
		if o, written := over[ki]; written {
			e, ok = o, !o.del
		}
		if ok {
			rows = append(rows, svRow{ki: ki, key: svKey(ki), round: e.round, size: int(e.size)})
		}
	}
	return rows
}

type svOp struct {
	ki   int
	del  bool
	size int
}

func (m *svModel) tentative(round int64, ops []svOp) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, op := range ops {
		h := m.hist[op.ki]
		if n := len(h); n > 0 && h[n-1].round > round {
			panic("model: rounds out of order")
		}
		m.hist[op.ki] = append(h, svEntry{round: round, size: int32(op.size), del: op.del})
	}
}

func (m *svModel) remove(round int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for ki, h := range m.hist {
		for len(h) > 0 && h[len(h)-1].round == round {
			h = h[:len(h)-1]
		}
		m.hist[ki] = h
	}
}

// svPause stops the workers at their pause points.
type svPause struct {
	mu      sync.Mutex
	cond    *sync.Cond
	req     bool
	reqA    atomic.Bool
	parked  int
	workers int
}

func newSVPause() *svPause {
	p := &svPause{}
	p.cond = sync.NewCond(&p.mu)
	return p
}

func (p *svPause) point(release func()) {
	if !p.reqA.Load() {
		return
	}
	release()
	p.mu.Lock()
	p.parked++
	p.cond.Broadcast()
	for p.req {
		p.cond.Wait()
	}
	p.parked--
	p.mu.Unlock()
}

func (p *svPause) exit() {
	p.mu.Lock()
	p.workers--
	p.cond.Broadcast()
	p.mu.Unlock()
}

// stopWorld parks every worker; it gives up (false, workers resumed) if
// giveUp becomes true meanwhile.
func (p *svPause) stopWorld(giveUp func() bool) bool {
	p.mu.Lock()
	p.req = true
	p.reqA.Store(true)
	for p.parked < p.workers {
		if giveUp() {
			p.req = false
			p.reqA.Store(false)
			p.cond.Broadcast()
			p.mu.Unlock()
			return false
		}
		p.mu.Unlock()
		time.Sleep(200 * time.Microsecond)
		p.mu.Lock()
	}
	p.mu.Unlock()
	return true
}

func (p *svPause) resume() {
	p.mu.Lock()
	p.req = false
	p.reqA.Store(false)
	p.cond.Broadcast()
	p.mu.Unlock()
}

type svGen struct {
	db     *DB
	id     int
	closed atomic.Bool // set after Close returned
}

type svConfig struct {
	name       string
	cacheSize  int64
	partitions int
	ckptWAL    int64
	readers    int
	inject     bool // failing commits (store reads on the writer's goroutine)
	failFrees  bool
	deferred   bool // deferTest: commits deferred to the applier
	closes     bool
	pageSize   int
	interval   int  // ms between controller actions (quiesce or close), at least
	pinMany    bool // readers sometimes hold many iterators of one snapshot
}

type svStress struct {
	t      *testing.T
	cfg    svConfig
	fs     *vfs.MemFS
	opts   *Options
	model  *svModel
	cur    atomic.Pointer[svGen]
	pause  *svPause
	stop   atomic.Bool
	failMu sync.Mutex
	fails  []string
	// closeGate: readers hold it shared while they read an iterator's
	// Key or Value (slices into pool memory, valid until DB.Close); Close
	// runs with it held exclusively. Everything else runs concurrently
	// with Close.
	closeGate  sync.RWMutex
	needReopen atomic.Bool
	round      int64 // next round; used by the writer, or by the controller while the writer is parked

	// injection: fail the n-th store read on goroutine gid
	injGID     atomic.Int64
	injCount   atomic.Int64
	injAt      atomic.Int64
	injected   atomic.Int64
	injSticky  atomic.Bool // every read from the n-th on fails (the undo too: the database breaks)
	failFree   atomic.Bool
	freeFailed atomic.Int64

	// counters
	commits, failedCommits, rollbacks, snapsTaken, itersTaken, views, closesDone, quiesces atomic.Int64
	checks, closedChecks, versionsSeen                                                     atomic.Int64
	versionsMade                                                                           atomic.Int64
}

func (s *svStress) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.failMu.Lock()
	if len(s.fails) < 20 {
		s.fails = append(s.fails, msg)
	}
	s.failMu.Unlock()
	if !s.stop.Swap(true) {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, false)
		s.t.Logf("FIRST FAILURE: %s\n%s", msg, buf[:n])
	}
}

func svGoID() int64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	f := strings.Fields(string(buf[:n]))
	if len(f) < 2 {
		return -1
	}
	id, _ := strconv.ParseInt(f[1], 10, 64)
	return id
}

func (s *svStress) open() *DB {
	db, err := Open("db", s.opts)
	if err != nil {
		s.t.Fatalf("open: %v", err)
	}
	if s.cfg.failFrees {
		real := db.freePage
		var n atomic.Int64
		db.freePage = func(id btree.PageID) error {
			if s.failFree.Load() && n.Add(1)%7 == 0 {
				s.freeFailed.Add(1)
				return errors.New("injected: free fails")
			}
			return real(id)
		}
	}
	return db
}

func TestStressSnapshotVersions(t *testing.T) {
	dur := 15 * time.Second
	if d, err := time.ParseDuration(os.Getenv("STRESS_DURATION")); err == nil {
		dur = d
	}
	if testing.Short() {
		dur = 3 * time.Second
	}
	cfgs := []svConfig{
		{name: "tiny-cache-faults-closes", cacheSize: 256 << 10, partitions: 2, ckptWAL: 128 << 10, readers: 4, inject: true, failFrees: true, closes: true},
		{name: "one-partition-no-faults", cacheSize: 192 << 10, partitions: 1, ckptWAL: 64 << 10, readers: 5, closes: true},
		{name: "bigger-cache", cacheSize: 4 << 20, partitions: 4, ckptWAL: 1 << 20, readers: 4, inject: true, closes: true},
		{name: "deferred", cacheSize: 256 << 10, partitions: 2, ckptWAL: 128 << 10, readers: 4, deferred: true, closes: true},
		{name: "long-snapshots-faults", cacheSize: 512 << 10, partitions: 2, ckptWAL: 256 << 10, readers: 4, inject: true, failFrees: true, closes: true, interval: 3000},
		{name: "pin-many-8k", cacheSize: 4 << 20, partitions: 2, ckptWAL: 512 << 10, readers: 3, inject: true, closes: true, pageSize: 8192, pinMany: true},
	}
	if only := os.Getenv("STRESS_CONFIG"); only != "" {
		cfgs = slicesFilter(cfgs, func(c svConfig) bool { return strings.Contains(c.name, only) })
	}
	for _, cfg := range cfgs {
		t.Run(cfg.name, func(t *testing.T) {
			runSVStress(t, cfg, dur/time.Duration(len(cfgs)))
		})
	}
}

func slicesFilter[T any](s []T, keep func(T) bool) []T {
	var out []T
	for _, x := range s {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func runSVStress(t *testing.T, cfg svConfig, dur time.Duration) {
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("STRESS_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d, duration %v", seed, dur)
	s := &svStress{t: t, cfg: cfg, fs: vfs.NewMem(), model: newSVModel(), pause: newSVPause()}
	s.opts = memOptions(s.fs)
	s.opts.CacheSize = cfg.cacheSize
	s.opts.Partitions = cfg.partitions
	s.opts.CheckpointWAL = cfg.ckptWAL
	s.opts.Sync = SyncNever
	if cfg.pageSize != 0 {
		s.opts.PageSize = cfg.pageSize
	}
	if cfg.interval == 0 {
		cfg.interval = 200
		s.cfg.interval = 200
	}
	if os.Getenv("STRESS_LOG") != "" {
		s.opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if !cfg.deferred {
		s.opts.DisableDeferredCommits = true
	} else {
		var mu sync.Mutex
		pick := rand.New(rand.NewPCG(seed, 77))
		deferTest = func() bool { mu.Lock(); defer mu.Unlock(); return pick.IntN(3) != 0 }
		t.Cleanup(func() { deferTest = nil })
	}
	if cfg.inject {
		s.fs.SetInjector(func(op vfs.Op, path string) error {
			if op != vfs.OpRead || strings.Contains(path, "/wal/") {
				return nil
			}
			gid := s.injGID.Load()
			if gid == 0 || svGoID() != gid {
				return nil
			}
			if c := s.injCount.Add(1); c == s.injAt.Load() || s.injSticky.Load() && c > s.injAt.Load() {
				s.injected.Add(1)
				return vfs.InjectedError(op, path)
			}
			return nil
		})
	}
	db := s.open()
	s.cur.Store(&svGen{db: db, id: 1})
	// Round 1: every key.
	rng := rand.New(rand.NewPCG(seed, 1))
	s.round = 1
	{
		ops := []svOp{{ki: 0}}
		for ki := 1; ki <= svKeys; ki++ {
			ops = append(ops, svOp{ki: ki, size: svSize(rng)})
		}
		s.model.tentative(1, ops)
		b := db.NewBatch()
		for _, op := range ops {
			b.Set([]byte(svKey(op.ki)), svValue(nil, op.ki, 1, op.size))
		}
		if err := b.Commit(nil); err != nil {
			t.Fatal(err)
		}
		s.round = 2
	}
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if cfg.failFrees {
		s.failFree.Store(true)
	}

	var wg sync.WaitGroup
	s.pause.workers = cfg.readers + 2
	for i := 0; i < cfg.readers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer s.pause.exit()
			s.reader(rand.New(rand.NewPCG(seed, uint64(100+i))), i)
		}(i)
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer s.pause.exit()
		s.writer(rand.New(rand.NewPCG(seed, 2)))
	}()
	go func() {
		defer wg.Done()
		defer s.pause.exit()
		s.checkpointer(rand.New(rand.NewPCG(seed, 3)))
	}()

	// The controller: quiesce checks and closes.
	crng := rand.New(rand.NewPCG(seed, 4))
	deadline := time.Now().Add(dur)
	next := time.Now().Add(time.Duration(cfg.interval+crng.IntN(4*cfg.interval)) * time.Millisecond)
	for time.Now().Before(deadline) && !s.stop.Load() {
		time.Sleep(5 * time.Millisecond)
		if s.needReopen.Load() {
			s.closeReopen(crng, "the writer asked (database failed)")
			continue
		}
		if time.Now().Before(next) {
			continue
		}
		next = time.Now().Add(time.Duration(cfg.interval+crng.IntN(4*cfg.interval)) * time.Millisecond)
		if cfg.closes && crng.IntN(3) == 0 {
			s.closeReopen(crng, "random")
		} else {
			s.quiesce(crng)
		}
	}
	// Finish: a last quiesce check (unless failed), then stop.
	if !s.stop.Load() {
		if s.needReopen.Load() {
			s.closeReopen(crng, "final")
		}
		s.quiesce(crng)
	}
	s.stop.Store(true)
	s.pause.resume()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		buf := make([]byte, 8<<20)
		n := runtime.Stack(buf, true)
		t.Fatalf("workers did not stop within 60 s (hang?)\n%s", buf[:n])
	}
	g := s.cur.Load()
	st := g.db.Stats()
	if !g.closed.Load() {
		if err := g.db.Close(); err != nil && g.db.failed == nil {
			t.Errorf("final close: %v", err)
		}
	}
	t.Logf("rounds %d, commits %d, failed commits %d (injected read errors %d), rollbacks %d, snapshots %d, iterators %d, views %d, closes %d, quiesce checks %d, checks %d, closed-checks %d, failed frees %d; versions kept for snapshots in all generations %d; last gen stats: SnapshotVersions %d ReplacedFresh %d ReplacedDurable %d Checkpoints %d",
		s.round, s.commits.Load(), s.failedCommits.Load(), s.injected.Load(), s.rollbacks.Load(), s.snapsTaken.Load(), s.itersTaken.Load(), s.views.Load(), s.closesDone.Load(), s.quiesces.Load(), s.checks.Load(), s.closedChecks.Load(), s.freeFailed.Load(), s.versionsMade.Load()+st.SnapshotVersions,
		st.SnapshotVersions, st.ReplacedFresh, st.ReplacedDurable, st.Checkpoints)
	s.failMu.Lock()
	defer s.failMu.Unlock()
	for _, f := range s.fails {
		t.Error(f)
	}
	if len(s.fails) == 0 && s.versionsMade.Load()+st.SnapshotVersions == 0 && s.commits.Load() > 100 {
		t.Errorf("no commit kept a version for a snapshot: the test checks too little")
	}
}

func svSize(rng *rand.Rand) int {
	switch p := rng.IntN(100); {
	case p < 55:
		return rng.IntN(60)
	case p < 85:
		return 60 + rng.IntN(400)
	case p < 94:
		return 400 + rng.IntN(600)
	default:
		return 1500 + rng.IntN(6000) // overflow pages
	}
}

// waitGen returns the current open generation, parking at pause points
// while there is none. nil once the test stops.
func (s *svStress) waitGen(release func()) *svGen {
	for !s.stop.Load() {
		s.pause.point(release)
		g := s.cur.Load()
		if !g.closed.Load() {
			return g
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// ---------------------------------------------------------------- writer

func (s *svStress) writer(rng *rand.Rand) {
	for !s.stop.Load() {
		g := s.waitGen(func() {})
		if g == nil {
			return
		}
		if s.needReopen.Load() {
			time.Sleep(time.Millisecond)
			continue
		}
		s.writeRound(g, rng, true)
		if rng.IntN(4) == 0 {
			time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond)
		}
	}
}

// writeRound commits one round (a batch or an Update) and keeps the model.
func (s *svStress) writeRound(g *svGen, rng *rand.Rand, mayInject bool) {
	s.writeRoundKind(g, rng, mayInject, rng.IntN(100))
}

func (s *svStress) writeRoundKind(g *svGen, rng *rand.Rand, mayInject bool, kind int) {
	db := g.db
	r := s.round
	s.round++
	var ops []svOp
	switch k := kind; {
	case k < 40: // a few random keys
		for i := 0; i < 1+rng.IntN(8); i++ {
			ki := 1 + rng.IntN(svKeys)
			if rng.IntN(8) == 0 {
				ops = append(ops, svOp{ki: ki, del: true})
			} else {
				ops = append(ops, svOp{ki: ki, size: svSize(rng)})
			}
		}
	case k < 55: // a run of keys set (splits)
		start, n := 1+rng.IntN(svKeys), 50+rng.IntN(550)
		for ki := start; ki < min(start+n, svKeys+1); ki++ {
			ops = append(ops, svOp{ki: ki, size: svSize(rng)})
		}
	case k < 67: // a run deleted (empties leaves)
		start, n := 1+rng.IntN(svKeys), 30+rng.IntN(470)
		for ki := start; ki < min(start+n, svKeys+1); ki++ {
			ops = append(ops, svOp{ki: ki, del: true})
		}
	case k < 77: // overflow values
		for i := 0; i < 1+rng.IntN(5); i++ {
			ops = append(ops, svOp{ki: 1 + rng.IntN(svKeys), size: 2100 + rng.IntN(7000)})
		}
	default: // an Update transaction
		s.updateRound(g, rng, r, mayInject)
		return
	}
	// The round key last or first: either way one write.
	if rng.IntN(2) == 0 {
		ops = append(ops, svOp{ki: 0})
	} else {
		ops = append([]svOp{{ki: 0}}, ops...)
	}
	s.model.tentative(r, ops)
	b := db.NewBatch()
	var buf []byte
	for _, op := range ops {
		if op.del {
			b.Delete([]byte(svKey(op.ki)))
		} else {
			buf = svValue(buf[:0], op.ki, r, op.size)
			b.Set([]byte(svKey(op.ki)), buf)
		}
	}
	inject := mayInject && s.cfg.inject && rng.IntN(6) == 0
	if inject {
		s.armInjection(rng)
	}
	err := b.Commit(nil)
	if inject {
		s.injGID.Store(0)
	}
	s.settle(g, r, err)
}

func (s *svStress) armInjection(rng *rand.Rand) {
	s.injCount.Store(0)
	s.injSticky.Store(rng.IntN(5) == 0)
	s.injAt.Store(int64(1 + rng.IntN(12)))
	s.injGID.Store(svGoID())
}

// settle records round r's outcome: err nil is applied; otherwise the
// live "!round" says whether it was.
func (s *svStress) settle(g *svGen, r int64, err error) {
	if err == nil {
		s.commits.Add(1)
		return
	}
	if !errors.Is(err, ErrClosed) && !errors.Is(err, vfs.ErrInjected) && g.db.failed == nil {
		s.fail("round %d: commit failed with an error not injected: %v", r, err)
	}
	s.failedCommits.Add(1)
	if g.db.failed != nil && !errors.Is(err, ErrClosed) {
		s.t.Logf("round %d: commit failed and the database refuses writes: %v", r, g.db.failed)
		s.needReopen.Store(true)
	}
	// Find out from the (next) database whether the round is in.
	// No pause point in here: the round must be settled before anyone
	// else writes one (quiesce gives up while the writer waits for a
	// reopen).
	for !s.stop.Load() {
		g2 := s.cur.Load()
		if g2.closed.Load() || g2 == g && s.needReopen.Load() {
			time.Sleep(time.Millisecond)
			continue
		}
		v, gerr := g2.db.Get([]byte(svRoundKey))
		if errors.Is(gerr, ErrClosed) {
			continue
		}
		if gerr != nil {
			s.fail("round %d: reading the round key after a failed commit: %v", r, gerr)
			return
		}
		got := svParseRound(v)
		switch {
		case got == r:
			s.t.Logf("round %d: commit returned %v but is applied", r, err)
			if !errors.Is(err, ErrClosed) {
				s.fail("round %d: commit returned %v but its writes are in the database", r, err)
			}
		case got < r:
			s.model.remove(r)
		default:
			s.fail("round %d: the database holds round %d", r, got)
		}
		return
	}
}

func (s *svStress) updateRound(g *svGen, rng *rand.Rand, r int64, mayInject bool) {
	db := g.db
	rollback := rng.IntN(10) == 0
	inject := mayInject && s.cfg.inject && !rollback && rng.IntN(6) == 0
	errRollback := errors.New("rollback")
	committedTo := int64(math.MaxInt64) // the tree as of the last applied round
	var ops []svOp
	added := false
	fn := func(tx *Tx) error {
		over := map[int]svEntry{}
		n := 1 + rng.IntN(20)
		for i := 0; i < n; i++ {
			ki := 1 + rng.IntN(svKeys)
			switch rng.IntN(6) {
			case 0: // a read, checked against the model and the writes so far
				v, err := tx.Get([]byte(svKey(ki)))
				e, ok := s.model.at(ki, committedTo)
				if o, w := over[ki]; w {
					e, ok = o, !o.del
				}
				s.checkGet("update tx", ki, v, err, e, ok, r)
			case 1:
				ops = append(ops, svOp{ki: ki, del: true})
				over[ki] = svEntry{round: r, del: true}
				if err := tx.Delete([]byte(svKey(ki))); err != nil {
					return err
				}
			case 2: // a short scan of the transaction's view
				if rng.IntN(3) != 0 {
					continue
				}
				lo := 1 + rng.IntN(svKeys)
				it, err := tx.NewIter(&IterOptions{LowerBound: []byte(svKey(lo))})
				if err != nil {
					return err
				}
				rows := s.model.rows(committedTo, lo, min(lo+60, svKeys+1), over)
				j := 0
				for it.First(); it.Valid() && j < 40; it.Next() {
					if j >= len(rows) {
						break
					}
					want := rows[j]
					if string(it.Key()) != want.key || !bytes.Equal(it.Value(), want.value()) {
						s.fail("update tx iterator row %d: %q = %.40q, want %q = %.40q", j, it.Key(), it.Value(), want.key, want.value())
						break
					}
					j++
				}
				if err := it.Error(); err != nil {
					s.fail("update tx iterator: %v", err)
				}
				it.Close()
			default:
				size := svSize(rng)
				ops = append(ops, svOp{ki: ki, size: size})
				over[ki] = svEntry{round: r, size: int32(size)}
				if err := tx.Set([]byte(svKey(ki)), svValue(nil, ki, r, size)); err != nil {
					return err
				}
			}
		}
		ops = append(ops, svOp{ki: 0})
		if err := tx.Set([]byte(svRoundKey), svValue(nil, 0, r, 0)); err != nil {
			return err
		}
		if rollback {
			return errRollback
		}
		s.model.tentative(r, ops)
		added = true
		if inject {
			s.armInjection(rng)
		}
		return nil
	}
	err := db.Update(fn)
	if inject {
		s.injGID.Store(0)
	}
	if errors.Is(err, errRollback) {
		s.rollbacks.Add(1)
		return
	}
	if !added {
		// fn did not get to the end: nothing committed.
		if err == nil {
			s.fail("round %d: update returned nil without its writes", r)
		} else if !errors.Is(err, ErrClosed) && db.failed == nil {
			s.fail("round %d: update failed: %v", r, err)
		}
		return
	}
	s.settle(g, r, err)
}

func (s *svStress) checkGet(what string, ki int, v []byte, err error, e svEntry, ok bool, R int64) {
	s.checks.Add(1)
	switch {
	case !ok:
		if !errors.Is(err, ErrNotFound) {
			s.fail("%s (round %d): Get(%s) = %.40q, %v; want not found", what, R, svKey(ki), v, err)
		}
	case err != nil:
		s.fail("%s (round %d): Get(%s): %v; want round %d's value", what, R, svKey(ki), err, e.round)
	default:
		if want := svValue(nil, ki, e.round, int(e.size)); !bytes.Equal(v, want) {
			s.fail("%s (round %d): Get(%s) = %.40q (round %d, %d bytes); want round %d's (%d bytes)", what, R, svKey(ki), v, svParseRound(v), len(v), e.round, len(want))
		}
	}
}

// closeIter closes a registered iterator. Unless STRESS_CLOSE_DURING_CLOSE
// is set, not while DB.Close runs: that hung Close before the fix that
// TestIteratorClosedWhileCloseWaits tests.
func (s *svStress) closeIter(it *Iterator) error {
	if os.Getenv("STRESS_CLOSE_DURING_CLOSE") == "" {
		s.closeGate.RLock()
		defer s.closeGate.RUnlock()
	}
	return it.Close()
}

// ---------------------------------------------------------------- checkpointer

func (s *svStress) checkpointer(rng *rand.Rand) {
	for !s.stop.Load() {
		g := s.waitGen(func() {})
		if g == nil {
			return
		}
		time.Sleep(time.Duration(rng.IntN(20000)) * time.Microsecond)
		err := g.db.Checkpoint()
		if err != nil && !errors.Is(err, ErrClosed) && g.db.failed == nil {
			s.fail("checkpoint: %v", err)
		}
	}
}

// ---------------------------------------------------------------- readers

type svHeld struct {
	g      *svGen
	snap   *Snapshot
	it     *Iterator
	R      int64
	rows   []svRow // iterator: within its bounds
	lo, hi string  // iterator bounds ("" none)
	pos    int     // iterator: index into rows, -1 unpositioned
	parent *svHeld // an iterator's snapshot, if any
	dead   bool
	inTx   bool // a View's iterator: the View holds the database open
}

type svReader struct {
	s    *svStress
	id   int
	rng  *rand.Rand
	held []*svHeld
}

func (s *svStress) reader(rng *rand.Rand, id int) {
	rd := &svReader{s: s, id: id, rng: rng}
	defer rd.releaseAll()
	for !s.stop.Load() {
		g := s.waitGen(rd.releaseAll)
		if g == nil {
			return
		}
		rd.dropStale(g)
		rd.step(g)
	}
}

func (rd *svReader) releaseAll() {
	for _, h := range rd.held {
		rd.closeHeld(h)
	}
	rd.held = nil
}

func (rd *svReader) closeHeld(h *svHeld) {
	s := rd.s
	var err error
	if h.it != nil {
		err = s.closeIter(h.it)
	} else {
		err = h.snap.Close()
	}
	if err != nil {
		s.fail("reader %d: Close of a held %s: %v", rd.id, h.kind(), err)
	}
}

func (h *svHeld) kind() string {
	if h.it != nil {
		return "iterator"
	}
	return "snapshot"
}

// dropStale checks and closes what belongs to a closed database.
func (rd *svReader) dropStale(g *svGen) {
	keep := rd.held[:0]
	for _, h := range rd.held {
		if h.g == g && !h.dead {
			keep = append(keep, h)
			continue
		}
		if h.g != g {
			rd.checkClosed(h)
		}
		rd.closeHeld(h)
	}
	rd.held = keep
}

// checkClosed: every call on a snapshot or iterator of a closed database
// returns ErrClosed.
func (rd *svReader) checkClosed(h *svHeld) {
	s := rd.s
	s.closedChecks.Add(1)
	if h.it != nil {
		it := h.it
		if it.Valid() {
			s.fail("reader %d: an iterator of a closed database is valid", rd.id)
		}
		for i, ok := range []bool{it.Next(), it.Prev(), it.SeekGE([]byte("k01000")), it.SeekLT([]byte("k02000")), it.First(), it.Last()} {
			if ok {
				s.fail("reader %d: move %d of an iterator of a closed database returned true", rd.id, i)
			}
		}
		if it.Key() != nil || it.Value() != nil {
			s.fail("reader %d: an iterator of a closed database returns a key or value", rd.id)
		}
		if err := it.Error(); !errors.Is(err, ErrClosed) {
			s.fail("reader %d: an iterator of a closed database: Error() = %v, want ErrClosed", rd.id, err)
		}
		return
	}
	if v, err := h.snap.Get([]byte("k00001")); !errors.Is(err, ErrClosed) {
		s.fail("reader %d: Get on a snapshot of a closed database: %.20q, %v", rd.id, v, err)
	}
	if it, err := h.snap.NewIter(nil); !errors.Is(err, ErrClosed) {
		s.fail("reader %d: NewIter on a snapshot of a closed database: %v", rd.id, err)
		if it != nil {
			it.Close()
		}
	}
}

func (rd *svReader) step(g *svGen) {
	s, rng := rd.s, rd.rng
	iters := 0
	for _, h := range rd.held {
		if h.it != nil {
			iters++
		}
	}
	switch k := rng.IntN(100); {
	case k < 8 && len(rd.held) < 4:
		rd.openSnapshot(g)
	case k < 16 && iters < 2 && len(rd.held) < 4:
		rd.openDBIter(g)
	case k < 24 && iters < 2 && len(rd.held) < 4:
		rd.openSnapIter(g)
	case k < 30:
		rd.view(g)
	case k < 36:
		rd.liveGets(g)
	case k < 38 && s.cfg.pinMany:
		rd.pinMany(g)
	case k < 45 && len(rd.held) > 0:
		i := rng.IntN(len(rd.held))
		h := rd.held[i]
		rd.closeHeld(h)
		rd.held = append(rd.held[:i], rd.held[i+1:]...)
	case len(rd.held) > 0:
		h := rd.held[rng.IntN(len(rd.held))]
		if h.it != nil {
			rd.moveIter(h, 1+rng.IntN(40))
		} else {
			rd.useSnapshot(h)
		}
	}
	if rng.IntN(5) == 0 {
		time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
	} else if rng.IntN(3) == 0 {
		runtime.Gosched()
	}
	_ = s
}

// closedErr: the database is closed (or failed): stop using it.
func closedErr(err error) bool { return errors.Is(err, ErrClosed) }

func (rd *svReader) roundOf(what string, v []byte, err error) (int64, bool) {
	if err != nil {
		if !closedErr(err) && !rd.brokenOK(err) {
			rd.s.fail("reader %d: %s: reading the round key: %v", rd.id, what, err)
		}
		return 0, false
	}
	R := svParseRound(v)
	if R <= 0 || !bytes.Equal(v, svValue(nil, 0, R, 0)) {
		rd.s.fail("reader %d: %s: round key value %q", rd.id, what, v)
		return 0, false
	}
	return R, true
}

// brokenOK: the database failed a commit it could not undo (it refuses
// reads until reopened).
func (rd *svReader) brokenOK(err error) bool {
	g := rd.s.cur.Load()
	return g.db.failed != nil && err != nil
}

func (rd *svReader) openSnapshot(g *svGen) {
	snap, err := g.db.NewSnapshot()
	if err != nil {
		if !closedErr(err) && !rd.brokenOK(err) {
			rd.s.fail("reader %d: NewSnapshot: %v", rd.id, err)
		}
		return
	}
	rd.s.snapsTaken.Add(1)
	v, err := snap.Get([]byte(svRoundKey))
	R, ok := rd.roundOf("snapshot", v, err)
	if !ok {
		snap.Close()
		return
	}
	rd.held = append(rd.held, &svHeld{g: g, snap: snap, R: R, pos: -1})
}

func (rd *svReader) openDBIter(g *svGen) {
	it, err := g.db.NewIter(nil)
	if err != nil {
		if !closedErr(err) && !rd.brokenOK(err) {
			rd.s.fail("reader %d: NewIter: %v", rd.id, err)
		}
		return
	}
	rd.s.itersTaken.Add(1)
	h := &svHeld{g: g, it: it, pos: -1}
	if !it.First() {
		if err := it.Error(); !closedErr(err) {
			rd.s.fail("reader %d: a new iterator's First: %v", rd.id, err)
		}
		it.Close()
		return
	}
	k, v, ok := rd.readKV(h)
	if !ok {
		it.Close()
		return
	}
	if string(k) != svRoundKey {
		rd.s.fail("reader %d: a new iterator's first key is %q", rd.id, k)
		it.Close()
		return
	}
	R, ok := rd.roundOf("db iterator", v, nil)
	if !ok {
		it.Close()
		return
	}
	h.R = R
	h.rows = rd.s.model.rows(R, 0, svKeys+1, nil)
	h.pos = 0
	rd.held = append(rd.held, h)
}

func (rd *svReader) randBound() string {
	if rd.rng.IntN(2) == 0 {
		return ""
	}
	b := svKey(rd.rng.IntN(svKeys + 1))
	if rd.rng.IntN(3) == 0 {
		b += "5" // between two keys
	}
	return b
}

func (rd *svReader) openSnapIter(g *svGen) {
	var snaps []*svHeld
	for _, h := range rd.held {
		if h.it == nil && h.g == g {
			snaps = append(snaps, h)
		}
	}
	if len(snaps) == 0 {
		return
	}
	p := snaps[rd.rng.IntN(len(snaps))]
	lo, hi := rd.randBound(), rd.randBound()
	if lo != "" && hi != "" && lo > hi {
		lo, hi = hi, lo
	}
	var opts *IterOptions
	if lo != "" || hi != "" {
		opts = &IterOptions{}
		if lo != "" {
			opts.LowerBound = []byte(lo)
		}
		if hi != "" {
			opts.UpperBound = []byte(hi)
		}
	}
	it, err := p.snap.NewIter(opts)
	if err != nil {
		if !closedErr(err) {
			rd.s.fail("reader %d: Snapshot.NewIter: %v", rd.id, err)
		}
		return
	}
	rd.s.itersTaken.Add(1)
	all := rd.s.model.rows(p.R, 0, svKeys+1, nil)
	rows := all[:0:0]
	for _, r := range all {
		if (lo == "" || r.key >= lo) && (hi == "" || r.key < hi) {
			rows = append(rows, r)
		}
	}
	h := &svHeld{g: g, it: it, R: p.R, rows: rows, lo: lo, hi: hi, pos: -1, parent: p}
	rd.held = append(rd.held, h)
	// Sometimes the snapshot goes first: the iterator keeps its version.
	if rd.rng.IntN(4) == 0 {
		for i, x := range rd.held {
			if x == p {
				rd.closeHeld(p)
				rd.held = append(rd.held[:i], rd.held[i+1:]...)
				break
			}
		}
	}
}

// readKV reads the iterator's current key and value (copies), holding the
// close gate: the slices are pool memory until DB.Close.
func (rd *svReader) readKV(h *svHeld) (k, v []byte, ok bool) {
	if !h.inTx { // Close waits for a View: the gate would deadlock
		rd.s.closeGate.RLock()
		defer rd.s.closeGate.RUnlock()
	}
	if !h.it.Valid() {
		return nil, nil, false
	}
	k = bytes.Clone(h.it.Key())
	v = h.it.Value()
	if v == nil {
		if err := h.it.Error(); err != nil {
			if !closedErr(err) {
				rd.s.fail("reader %d: iterator Value at %q: %v", rd.id, k, err)
			}
			return nil, nil, false
		}
	}
	return k, bytes.Clone(v), true
}

// checkPos compares the iterator with the model at h.pos after a move that
// returned ok.
func (rd *svReader) checkPos(h *svHeld, ok bool, move string) {
	s := rd.s
	s.checks.Add(1)
	want := h.pos >= 0 && h.pos < len(h.rows)
	if !ok {
		if err := h.it.Error(); err != nil {
			if closedErr(err) || h.g.closed.Load() {
				h.dead = true
				return
			}
			s.fail("reader %d: iterator (round %d) %s: error %v", rd.id, h.R, move, err)
			h.dead = true
			return
		}
		if h.it.Valid() {
			s.fail("reader %d: iterator (round %d) %s returned false but Valid is true", rd.id, h.R, move)
		}
		if want {
			s.fail("reader %d: iterator (round %d, bounds [%q, %q)) %s: not valid, want row %d %q (of %d)", rd.id, h.R, h.lo, h.hi, move, h.pos, h.rows[h.pos].key, len(h.rows))
			h.dead = true
		}
		h.pos = -1
		return
	}
	k, v, valid := rd.readKV(h)
	if !valid {
		if h.g.closed.Load() || s.cur.Load() != h.g {
			h.dead = true
			return
		}
		// Closed between the move and the read.
		if err := h.it.Error(); closedErr(err) {
			h.dead = true
			return
		}
		s.fail("reader %d: iterator (round %d) %s returned true but is not valid: %v", rd.id, h.R, move, h.it.Error())
		h.dead = true
		return
	}
	if !want {
		s.fail("reader %d: iterator (round %d, bounds [%q, %q)) %s: at %q (round %d), want the end (pos %d of %d)", rd.id, h.R, h.lo, h.hi, move, k, svParseRound(v), h.pos, len(h.rows))
		h.dead = true
		return
	}
	row := h.rows[h.pos]
	if string(k) != row.key {
		s.fail("reader %d: iterator (round %d, bounds [%q, %q)) %s: key %q, want %q (row %d of %d)", rd.id, h.R, h.lo, h.hi, move, k, row.key, h.pos, len(h.rows))
		h.dead = true
		return
	}
	if wantV := row.value(); !bytes.Equal(v, wantV) {
		s.fail("reader %d: iterator (round %d) %s: %s = %.40q (round %d, %d bytes), want round %d's (%d bytes)", rd.id, h.R, move, k, v, svParseRound(v), len(v), row.round, len(wantV))
		h.dead = true
	}
}

func (rd *svReader) seekKey() string {
	switch rd.rng.IntN(10) {
	case 0:
		return "!"
	case 1:
		return "z"
	case 2:
		return svRoundKey
	}
	k := svKey(1 + rd.rng.IntN(svKeys))
	if rd.rng.IntN(3) == 0 {
		k += "5"
	}
	return k
}

func (rd *svReader) moveIter(h *svHeld, steps int) {
	rng := rd.rng
	for i := 0; i < steps && !h.dead; i++ {
		var ok bool
		var move string
		switch k := rng.IntN(100); {
		case h.pos < 0 || k < 8: // seeks
			switch rng.IntN(4) {
			case 0:
				key := rd.seekKey()
				move = "SeekGE(" + key + ")"
				ok = h.it.SeekGE([]byte(key))
				if h.lo != "" && key < h.lo {
					key = h.lo
				}
				h.pos = sort.Search(len(h.rows), func(i int) bool { return h.rows[i].key >= key })
			case 1:
				key := rd.seekKey()
				move = "SeekLT(" + key + ")"
				ok = h.it.SeekLT([]byte(key))
				if h.hi != "" && key > h.hi {
					key = h.hi
				}
				h.pos = sort.Search(len(h.rows), func(i int) bool { return h.rows[i].key >= key }) - 1
			case 2:
				move = "First"
				ok = h.it.First()
				h.pos = 0
			default:
				move = "Last"
				ok = h.it.Last()
				h.pos = len(h.rows) - 1
			}
		case k < 75:
			move = "Next"
			ok = h.it.Next()
			h.pos++
		default:
			move = "Prev"
			ok = h.it.Prev()
			h.pos--
		}
		rd.checkPos(h, ok, move)
		if rng.IntN(20) == 0 {
			time.Sleep(time.Duration(rng.IntN(1000)) * time.Microsecond) // commits run under the held leaf
		}
	}
}

// pinMany opens many iterators of one snapshot, each on its own leaf,
// lets commits run, then checks them all, moving each both ways.
func (rd *svReader) pinMany(g *svGen) {
	s, rng := rd.s, rd.rng
	snap, err := g.db.NewSnapshot()
	if err != nil {
		if !closedErr(err) && !rd.brokenOK(err) {
			s.fail("reader %d: NewSnapshot: %v", rd.id, err)
		}
		return
	}
	defer snap.Close()
	v, err := snap.Get([]byte(svRoundKey))
	R, ok := rd.roundOf("pinMany", v, err)
	if !ok {
		return
	}
	rows := s.model.rows(R, 0, svKeys+1, nil)
	var hs []*svHeld
	defer func() {
		for _, h := range hs {
			if err := s.closeIter(h.it); err != nil {
				s.fail("reader %d: pinMany Close: %v", rd.id, err)
			}
		}
	}()
	n := 4 + rng.IntN(12)
	for i := 0; i < n; i++ {
		it, err := snap.NewIter(nil)
		if err != nil {
			if !closedErr(err) {
				s.fail("reader %d: pinMany NewIter: %v", rd.id, err)
			}
			return
		}
		s.itersTaken.Add(1)
		h := &svHeld{g: g, it: it, R: R, rows: rows, pos: -1}
		hs = append(hs, h)
		key := svKey(1 + (i*svKeys/n+rng.IntN(svKeys/n))%svKeys)
		h.pos = sort.Search(len(rows), func(i int) bool { return rows[i].key >= key })
		rd.checkPos(h, it.SeekGE([]byte(key)), "pinMany SeekGE("+key+")")
	}
	time.Sleep(time.Duration(2+rng.IntN(20)) * time.Millisecond) // commits run under the pinned leaves
	for _, h := range hs {
		rd.moveIter(h, 5+rng.IntN(80))
	}
}

func (rd *svReader) useSnapshot(h *svHeld) {
	s, rng := rd.s, rd.rng
	switch rng.IntN(3) {
	case 0, 1: // point reads
		for i := 0; i < 1+rng.IntN(30); i++ {
			ki := rng.IntN(svKeys + 1)
			v, err := h.snap.Get([]byte(svKey(ki)))
			if closedErr(err) {
				h.dead = true
				return
			}
			e, ok := s.model.at(ki, h.R)
			s.checkGet(fmt.Sprintf("reader %d snapshot", rd.id), ki, v, err, e, ok, h.R)
		}
	default: // a whole scan, either way, through a new iterator
		it, err := h.snap.NewIter(nil)
		if err != nil {
			if closedErr(err) {
				h.dead = true
			} else {
				s.fail("reader %d: Snapshot.NewIter: %v", rd.id, err)
			}
			return
		}
		s.itersTaken.Add(1)
		sh := &svHeld{g: h.g, it: it, R: h.R, rows: s.model.rows(h.R, 0, svKeys+1, nil)}
		if rng.IntN(2) == 0 {
			sh.pos = 0
			rd.checkPos(sh, it.First(), "scan First")
			for !sh.dead && sh.pos >= 0 {
				sh.pos++
				rd.checkPos(sh, it.Next(), "scan Next")
			}
		} else {
			sh.pos = len(sh.rows) - 1
			rd.checkPos(sh, it.Last(), "scan Last")
			for !sh.dead && sh.pos >= 0 {
				sh.pos--
				rd.checkPos(sh, it.Prev(), "scan Prev")
			}
		}
		if err := s.closeIter(it); err != nil {
			s.fail("reader %d: scan iterator Close: %v", rd.id, err)
		}
		if sh.dead && h.g.closed.Load() {
			h.dead = true
		}
	}
}

func (rd *svReader) view(g *svGen) {
	s, rng := rd.s, rd.rng
	err := g.db.View(func(tx *Tx) error {
		s.views.Add(1)
		v, err := tx.Get([]byte(svRoundKey))
		R, ok := rd.roundOf("view", v, err)
		if !ok {
			return nil
		}
		for i := 0; i < 1+rng.IntN(10); i++ {
			ki := rng.IntN(svKeys + 1)
			v, err := tx.Get([]byte(svKey(ki)))
			e, ok := s.model.at(ki, R)
			s.checkGet(fmt.Sprintf("reader %d view", rd.id), ki, v, err, e, ok, R)
		}
		if rng.IntN(2) == 0 {
			time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond) // commits run
		}
		it, err := tx.NewIter(nil)
		if err != nil {
			s.fail("reader %d: view NewIter: %v", rd.id, err)
			return nil
		}
		h := &svHeld{g: g, it: it, R: R, rows: s.model.rows(R, 0, svKeys+1, nil), pos: -1, inTx: true}
		rd.moveIter(h, 1+rng.IntN(60))
		if rng.IntN(2) == 0 {
			time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
			rd.moveIter(h, 1+rng.IntN(60))
		}
		if rng.IntN(2) == 0 {
			it.Close() // else the transaction's end does
		}
		return nil
	})
	if err != nil && !closedErr(err) && !rd.brokenOK(err) {
		s.fail("reader %d: View: %v", rd.id, err)
	}
}

// liveGets: a point read of the current version returns a value of a round
// between the rounds read before and after it.
func (rd *svReader) liveGets(g *svGen) {
	s, rng := rd.s, rd.rng
	round := func() (int64, bool) {
		v, err := g.db.Get([]byte(svRoundKey))
		if err != nil {
			if !closedErr(err) && !rd.brokenOK(err) {
				s.fail("reader %d: live Get of the round key: %v", rd.id, err)
			}
			return 0, false
		}
		return svParseRound(v), true
	}
	r1, ok := round()
	if !ok {
		return
	}
	type got struct {
		ki  int
		v   []byte
		err error
	}
	var gots []got
	for i := 0; i < 1+rng.IntN(10); i++ {
		ki := 1 + rng.IntN(svKeys)
		v, err := g.db.Get([]byte(svKey(ki)))
		if closedErr(err) || (err != nil && rd.brokenOK(err)) {
			return
		}
		gots = append(gots, got{ki, v, err})
	}
	r2, ok := round()
	if !ok {
		return
	}
	for _, x := range gots {
		s.checks.Add(1)
		match := false
		for R := r1; R <= r2 && !match; R++ {
			e, present := s.model.at(x.ki, R)
			if !present {
				match = errors.Is(x.err, ErrNotFound)
			} else {
				match = x.err == nil && bytes.Equal(x.v, svValue(nil, x.ki, e.round, int(e.size)))
			}
		}
		if !match {
			s.fail("reader %d: live Get(%s) = %.30q (round %d), %v: no round in [%d, %d] has it", rd.id, svKey(x.ki), x.v, svParseRound(x.v), x.err, r1, r2)
		}
	}
}

// ---------------------------------------------------------------- controller

// quiesce stops every worker (they close what they hold), commits once and
// checks that no snapshot is registered, no version is left, and the
// database equals the model.
func (s *svStress) quiesce(rng *rand.Rand) {
	if !s.pause.stopWorld(func() bool { return s.needReopen.Load() || s.stop.Load() }) {
		return
	}
	defer s.pause.resume()
	if s.stop.Load() {
		return
	}
	s.quiesces.Add(1)
	g := s.cur.Load()
	db := g.db
	if db.failed != nil || s.needReopen.Load() {
		return // the controller reopens next
	}
	db.mu.RLock()
	nsnaps, iters := len(db.snaps), db.iters.newest != nil
	db.mu.RUnlock()
	if nsnaps != 0 || iters {
		s.fail("quiesce: nothing is open, but %d snapshot versions and iterators %v are registered", nsnaps, iters)
	}
	v0 := db.tree.Versions()
	if v0 > 0 {
		s.versionsSeen.Add(1)
	}
	db.mu.RLock()
	before := fmt.Sprintf("txid %d, pendingFresh %s, pendingVersions %s, retired %d", db.txid, svPending(db.pendingFresh), svPending(db.pendingVersions), len(db.retired))
	db.mu.RUnlock()
	s.writeRoundKind(g, rng, false, 0) // a few keys in a batch: a commit
	if db.failed != nil {
		return
	}
	if err := db.applyDeferred(); err != nil { // a deferred commit is published by the applier
		s.fail("quiesce: applyDeferred: %v", err)
	}
	// A background checkpoint (not parked) may be freeing pages it took
	// from the lists before the commit: wait for it, and keep the next
	// one out while looking.
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	if n := db.tree.Versions(); n != 0 {
		db.mu.RLock()
		after := fmt.Sprintf("txid %d, pendingFresh %s, pendingVersions %s, retired %d, snaps %v, oldest %d", db.txid, svPending(db.pendingFresh), svPending(db.pendingVersions), len(db.retired), db.snaps, db.oldestReadLocked())
		db.mu.RUnlock()
		s.fail("quiesce (%s): %d versions kept (%d before the commit) with no snapshot or iterator open; before: %s; after: %s; table: %s", s.cfg.name, n, v0, before, after, svVersionTable(db.tree))
	}
	s.verifyAll(g, "quiesce")
	// A checkpoint with nothing open frees every replaced page and
	// version: the store then holds only the tree's pages.
	s.failFree.Store(false)
	if err := db.checkpointLocked(); err != nil { // ckptMu held
		s.fail("quiesce: checkpoint: %v", err)
	}
	s.checkLeaks(g, "quiesce")
	s.failFree.Store(s.cfg.failFrees)
}

// checkLeaks: no frees pending, and every page of the store is the meta
// page or reachable from the tree.
func (s *svStress) checkLeaks(g *svGen, what string) {
	db := g.db
	if n := db.Stats().PendingFreePages; n != 0 {
		s.fail("%s: %d frees still pending with nothing open after a checkpoint", what, n)
		return
	}
	db.mu.RLock()
	nfresh := len(db.pendingFresh) + len(db.pendingVersions)
	root := db.root
	db.mu.RUnlock()
	if nfresh != 0 {
		s.fail("%s: %d lists of replaced pages not freed with nothing open", what, nfresh)
	}
	if n := db.tree.Versions(); n != 0 {
		s.fail("%s: %d versions left", what, n)
	}
	live := map[btree.PageID]bool{0: true}
	if err := db.tree.Walk(root, func(id btree.PageID) { live[id] = true }); err != nil {
		s.fail("%s: walk: %v", what, err)
		return
	}
	var leaked []pagestore.PageID
	if err := db.store.ForEachPage(func(id pagestore.PageID) error {
		if !live[id] {
			leaked = append(leaked, id)
		}
		return nil
	}); err != nil {
		s.fail("%s: ForEachPage: %v", what, err)
	}
	if len(leaked) > 0 {
		s.fail("%s: %d pages of the store are not in the tree (leaked): %v", what, len(leaked), leaked[:min(len(leaked), 20)])
	}
}

// verifyAll scans the database and compares it with the model at its round.
func (s *svStress) verifyAll(g *svGen, what string) {
	v, err := g.db.Get([]byte(svRoundKey))
	if err != nil {
		s.fail("%s: round key: %v", what, err)
		return
	}
	R := svParseRound(v)
	rows := s.model.rows(R, 0, svKeys+1, nil)
	it, err := g.db.NewIter(nil)
	if err != nil {
		s.fail("%s: NewIter: %v", what, err)
		return
	}
	defer it.Close()
	i := 0
	for it.First(); it.Valid(); it.Next() {
		if i >= len(rows) {
			s.fail("%s (round %d): extra key %q", what, R, it.Key())
			return
		}
		if string(it.Key()) != rows[i].key || !bytes.Equal(it.Value(), rows[i].value()) {
			s.fail("%s (round %d): row %d: %q = %.30q (round %d), want %q (round %d)", what, R, i, it.Key(), it.Value(), svParseRound(it.Value()), rows[i].key, rows[i].round)
			return
		}
		i++
	}
	if err := it.Error(); err != nil {
		s.fail("%s: scan: %v", what, err)
	}
	if i != len(rows) {
		s.fail("%s (round %d): %d rows, want %d", what, R, i, len(rows))
	}
}

// closeReopen closes the database under the workers and opens it again.
func (s *svStress) closeReopen(rng *rand.Rand, why string) {
	s.closeGate.Lock()
	defer s.closeGate.Unlock()
	g := s.cur.Load()
	failed := g.db.failed != nil
	s.versionsMade.Add(g.db.Stats().SnapshotVersions)
	closeDone := make(chan error, 1)
	go func() { closeDone <- g.db.Close() }()
	var err error
	select {
	case err = <-closeDone:
	case <-time.After(60 * time.Second):
		buf := make([]byte, 8<<20)
		n := runtime.Stack(buf, true)
		s.t.Logf("DB.Close hangs (60 s):\n%s", buf[:n])
		s.fail("DB.Close (%s) did not return within 60 s", why)
		s.stop.Store(true)
		s.t.FailNow() // the workers are stuck too
	}
	g.closed.Store(true)
	s.closesDone.Add(1)
	if err != nil && !failed {
		s.fail("close (%s): %v", why, err)
	}
	// Every call on the closed database returns ErrClosed.
	db := g.db
	if _, err := db.NewSnapshot(); !errors.Is(err, ErrClosed) {
		s.fail("NewSnapshot after Close: %v", err)
	}
	if _, err := db.NewIter(nil); !errors.Is(err, ErrClosed) {
		s.fail("NewIter after Close: %v", err)
	}
	if _, err := db.Get([]byte("k00001")); !errors.Is(err, ErrClosed) {
		s.fail("Get after Close: %v", err)
	}
	if err := db.View(func(*Tx) error { return nil }); !errors.Is(err, ErrClosed) {
		s.fail("View after Close: %v", err)
	}
	if err := db.Checkpoint(); !errors.Is(err, ErrClosed) {
		s.fail("Checkpoint after Close: %v", err)
	}
	if err := db.Close(); !errors.Is(err, ErrClosed) {
		s.fail("second Close: %v", err)
	}
	db2 := s.open()
	g2 := &svGen{db: db2, id: g.id + 1}
	s.verifyAll(g2, "reopened ("+why+")")
	s.checkLeaks(g2, "reopened ("+why+")")
	s.needReopen.Store(false)
	s.cur.Store(g2)
	_ = rng
}

func svPending(l []pendingFree) string {
	var b strings.Builder
	for _, p := range l {
		fmt.Fprintf(&b, "[txid %d: %d pages]", p.txid, len(p.ids))
	}
	return b.String()
}

// svVersionTable dumps the tree's version table (read by reflection; only
// while no commit runs).
func svVersionTable(t *btree.Tree) string {
	vt := reflect.ValueOf(t).Elem().FieldByName("versions")
	of := vt.FieldByName("of")
	var b strings.Builder
	it := of.MapRange()
	n := 0
	for it.Next() {
		if n++; n > 30 {
			b.WriteString(" ...")
			break
		}
		fmt.Fprintf(&b, "page %d:", it.Key().Uint())
		vs := it.Value()
		for i := 0; i < vs.Len(); i++ {
			fmt.Fprintf(&b, " (txid %d, until %d, copy %d)", vs.Index(i).Field(0).Uint(), vs.Index(i).Field(1).Uint(), vs.Index(i).Field(2).Uint())
		}
		b.WriteString("; ")
	}
	fmt.Fprintf(&b, " [%d pages with versions]", of.Len())
	return b.String()
}

package strata

import (
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// The metamorphic test runs one random operation sequence — sets, deletes,
// batches, Update transactions (some aborted), View transactions,
// snapshots held across later writes, checkpoints and reopens, iterators
// (bounded, forward and backward, seeking, some held open across writes) —
// against a map model and against the database under many option sets:
// page sizes, codecs, cache sizes from the pool's minimum to 32 MiB,
// fixed and automatic compressed shares, fill factors and sync modes. Each
// run records a transcript of every result (reads, iterator positions);
// every transcript must equal the model's. Options change how pages are
// laid out, compressed, cached, evicted and written, never what a read
// returns.

const (
	mmKeys = 600
	mmOps  = 1500
)

type mmKind int

const (
	mmSet mmKind = iota
	mmDelete
	mmBatch
	mmUpdate
	mmView
	mmGet
	mmHas
	mmSnapOpen
	mmSnapGet
	mmSnapClose
	mmScan
	mmIterOpen
	mmIterStep
	mmIterClose
	mmCheckpoint
	mmSync
	mmReopen
)

func (k mmKind) String() string {
	return [...]string{"set", "delete", "batch", "update", "view", "get", "has", "snapshot", "snapshot-get",
		"snapshot-close", "scan", "iter-open", "iter-step", "iter-close", "checkpoint", "sync", "reopen"}[k]
}

// mmWrite is a write of a batch, or a step of a transaction: set, delete
// or (transactions only) get, or iterator moves over the transaction's
// view ('i').
type mmWrite struct {
	op    byte // 's', 'd', 'g', 'i'
	key   string
	val   string
	moves []mmMove
}

// mmMove is an iterator move: 'F'irst, 'L'ast, 'G' SeekGE, 'T' SeekLT,
// 'N'ext, 'P'rev; 'f' and 'b' are whole scans forward (First, Next...) and
// backward (Last, Prev...).
type mmMove struct {
	m   byte
	key string
}

type mmOp struct {
	kind   mmKind
	key    string
	val    string
	writes []mmWrite
	sync   int  // commit options: 0 nil, 1 Sync, 2 NoSync
	abort  bool // Update returns an error
	slot   int  // snapshot or held iterator (index into the open ones); -1: the current state
	lower  string
	upper  string
	moves  []mmMove
}

func mmKey(i int) string {
	// Keys of varying length and shared prefixes: every fifth key is long.
	if i%5 == 0 {
		return fmt.Sprintf("k%04d/%s", i, strings.Repeat("p", i%47))
	}
	return fmt.Sprintf("k%04d", i)
}

// mmGenerate makes the operation sequence. It depends on the seed only:
// which snapshot or iterator an operation uses is decided from how many
// are open, which the sequence itself determines.
func mmGenerate(seed uint64) []mmOp {
	rng := rand.New(rand.NewPCG(seed, 0x6d6d))
	key := func() string { return mmKey(rng.IntN(mmKeys)) }
	// Hot keys get most writes, so values are overwritten many times.
	wkey := func() string {
		if rng.IntN(3) == 0 {
			return mmKey(rng.IntN(60) * 10)
		}
		return key()
	}
	seekKey := func() string {
		switch rng.IntN(4) {
		case 0:
			return key() + "0" // between keys
		case 1:
			return fmt.Sprintf("k%03d", rng.IntN(mmKeys/10)) // a prefix
		case 2:
			return []string{"a", "k", "l", "k9999"}[rng.IntN(4)] // outside the keys
		}
		return key()
	}
	value := func(i int) string {
		if rng.IntN(20) == 0 {
			return ""
		}
		n := rng.IntN(450)
		if rng.IntN(25) == 0 {
			// Overflow pages at every page size (a quarter page inline).
			n = 4000 + rng.IntN(40000)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "v%d:", i)
		for b.Len() < n {
			if rng.IntN(2) == 0 {
				b.WriteString(strings.Repeat(string(rune('a'+rng.IntN(26))), 1+rng.IntN(40)))
			} else {
				for j := 0; j < 1+rng.IntN(20); j++ {
					b.WriteByte(byte(33 + rng.IntN(90)))
				}
			}
		}
		return b.String()
	}
	bounds := func() (lo, hi string) {
		switch rng.IntN(6) {
		case 0:
			return "", ""
		case 1:
			return key(), ""
		case 2:
			return "", key()
		case 3:
			return key(), key() // possibly empty or inverted
		}
		i := rng.IntN(mmKeys)
		return mmKey(i), mmKey(min(mmKeys-1, i+1+rng.IntN(80)))
	}
	moves := func(n int) []mmMove {
		var ms []mmMove
		for range n {
			switch r := rng.IntN(10); {
			case r < 1:
				ms = append(ms, mmMove{m: 'F'})
			case r < 2:
				ms = append(ms, mmMove{m: 'L'})
			case r < 3:
				ms = append(ms, mmMove{m: 'G', key: seekKey()})
			case r < 4:
				ms = append(ms, mmMove{m: 'T', key: seekKey()})
			case r < 7:
				ms = append(ms, mmMove{m: 'N'})
			default:
				ms = append(ms, mmMove{m: 'P'})
			}
		}
		return ms
	}
	var ops []mmOp
	// The open snapshots and held iterators, by id; an iterator over a
	// snapshot records the snapshot's id, and a snapshot is not closed
	// while an iterator over it is open.
	var snaps, iters []int
	nextID := 0
	iterOver := func(id int) bool { return slices.Contains(iters, id) }
	aborted := false
	for i := 0; len(ops) < mmOps; i++ {
		var op mmOp
		switch r := rng.IntN(100); {
		case r < 25:
			op = mmOp{kind: mmSet, key: wkey(), val: value(i), sync: rng.IntN(3)}
		case r < 32:
			op = mmOp{kind: mmDelete, key: wkey(), sync: rng.IntN(3)}
		case r < 42:
			op = mmOp{kind: mmBatch, sync: rng.IntN(3)}
			for range 1 + rng.IntN(30) {
				if rng.IntN(4) == 0 {
					op.writes = append(op.writes, mmWrite{op: 'd', key: wkey()})
				} else {
					op.writes = append(op.writes, mmWrite{op: 's', key: wkey(), val: value(i)})
				}
			}
		case r < 48:
			// The first transaction aborts, then one in four.
			op = mmOp{kind: mmUpdate, abort: !aborted || rng.IntN(4) == 0}
			aborted = true
			for range 1 + rng.IntN(8) {
				k := wkey()
				switch rng.IntN(4) {
				case 3:
					op.writes = append(op.writes, mmWrite{op: 'i', moves: moves(1 + rng.IntN(12))})
				case 0:
					op.writes = append(op.writes, mmWrite{op: 'g', key: k})
				case 1:
					op.writes = append(op.writes, mmWrite{op: 's', key: k, val: value(i)}, mmWrite{op: 'g', key: k})
				default:
					op.writes = append(op.writes, mmWrite{op: 'd', key: k}, mmWrite{op: 'g', key: k})
				}
			}
		case r < 50:
			op = mmOp{kind: mmView}
			for range 1 + rng.IntN(5) {
				if rng.IntN(3) == 0 {
					op.writes = append(op.writes, mmWrite{op: 'i', moves: moves(1 + rng.IntN(12))})
				} else {
					op.writes = append(op.writes, mmWrite{op: 'g', key: key()})
				}
			}
		case r < 60:
			op = mmOp{kind: mmGet, key: key()}
		case r < 62:
			op = mmOp{kind: mmHas, key: key()}
		case r < 65:
			if len(snaps) == 8 {
				continue
			}
			op = mmOp{kind: mmSnapOpen}
			nextID++
			snaps = append(snaps, nextID)
		case r < 69:
			if len(snaps) == 0 {
				continue
			}
			op = mmOp{kind: mmSnapGet, slot: rng.IntN(len(snaps)), key: key()}
		case r < 71:
			if len(snaps) == 0 {
				continue
			}
			op = mmOp{kind: mmSnapClose, slot: rng.IntN(len(snaps))}
			if iterOver(snaps[op.slot]) {
				continue
			}
			snaps = slices.Delete(snaps, op.slot, op.slot+1)
		case r < 80:
			op = mmOp{kind: mmScan, slot: -1}
			if len(snaps) > 0 && rng.IntN(3) == 0 {
				op.slot = rng.IntN(len(snaps))
			}
			op.lower, op.upper = bounds()
			switch rng.IntN(3) {
			case 0:
				op.moves = []mmMove{{m: 'f'}}
			case 1:
				op.moves = []mmMove{{m: 'b'}}
			default:
				op.moves = moves(1 + rng.IntN(25))
			}
		case r < 83:
			if len(iters) == 6 {
				continue
			}
			op = mmOp{kind: mmIterOpen, slot: -1}
			src := 0
			if len(snaps) > 0 && rng.IntN(3) == 0 {
				op.slot = rng.IntN(len(snaps))
				src = snaps[op.slot]
			}
			op.lower, op.upper = bounds()
			op.moves = moves(1 + rng.IntN(4))
			iters = append(iters, src)
		case r < 89:
			if len(iters) == 0 {
				continue
			}
			op = mmOp{kind: mmIterStep, slot: rng.IntN(len(iters)), moves: moves(1 + rng.IntN(10))}
		case r < 91:
			if len(iters) == 0 {
				continue
			}
			op = mmOp{kind: mmIterClose, slot: rng.IntN(len(iters))}
			iters = slices.Delete(iters, op.slot, op.slot+1)
		case r < 92:
			op = mmOp{kind: mmCheckpoint}
		case r < 96:
			op = mmOp{kind: mmSync}
		case r < 97:
			// Reopen closes every snapshot and iterator first.
			op = mmOp{kind: mmReopen}
			snaps, iters = nil, nil
		default:
			op = mmOp{kind: mmGet, key: wkey()}
		}
		ops = append(ops, op)
	}
	return ops
}

// mmResult renders a read: absent, or the value's length, CRC and start.
func mmResult(v string, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%d/%08x/%.12s", len(v), crc32.ChecksumIEEE([]byte(v)), v)
}

// mmIter is the iterator interface both the database and the model run.
type mmIter interface {
	First() bool
	Last() bool
	SeekGE([]byte) bool
	SeekLT([]byte) bool
	Next() bool
	Prev() bool
	Key() []byte
	Value() []byte
}

// mmMoves runs moves on it and renders the positions.
func mmMoves(it mmIter, moves []mmMove) string {
	var b strings.Builder
	pos := func(ok bool) {
		if ok {
			fmt.Fprintf(&b, " %s=%s", it.Key(), mmResult(string(it.Value()), true))
		} else {
			b.WriteString(" .")
		}
	}
	for _, m := range moves {
		b.WriteString(" " + string(m.m))
		switch m.m {
		case 'F':
			pos(it.First())
		case 'L':
			pos(it.Last())
		case 'G':
			b.WriteString(m.key)
			pos(it.SeekGE([]byte(m.key)))
		case 'T':
			b.WriteString(m.key)
			pos(it.SeekLT([]byte(m.key)))
		case 'N':
			pos(it.Next())
		case 'P':
			pos(it.Prev())
		case 'f':
			for ok := it.First(); ok; ok = it.Next() {
				pos(true)
			}
		case 'b':
			for ok := it.Last(); ok; ok = it.Prev() {
				pos(true)
			}
		}
	}
	return b.String()
}

// mmModelIter iterates over a frozen sorted copy of a model state, with the
// database iterator's bound rules.
type mmModelIter struct {
	keys, vals   []string
	lower, upper string // "": open
	i            int
	valid        bool
}

func newModelIter(state map[string]string, lower, upper string) *mmModelIter {
	it := &mmModelIter{lower: lower, upper: upper}
	for k := range state {
		it.keys = append(it.keys, k)
	}
	sort.Strings(it.keys)
	for _, k := range it.keys {
		it.vals = append(it.vals, state[k])
	}
	return it
}

func (it *mmModelIter) settle(i int) bool {
	it.i = i
	it.valid = i >= 0 && i < len(it.keys) &&
		(it.lower == "" || it.keys[i] >= it.lower) && (it.upper == "" || it.keys[i] < it.upper)
	return it.valid
}

func (it *mmModelIter) ge(k string) int { return sort.SearchStrings(it.keys, k) }
func (it *mmModelIter) lt(k string) int { return sort.SearchStrings(it.keys, k) - 1 }

func (it *mmModelIter) First() bool {
	if it.lower != "" {
		return it.settle(it.ge(it.lower))
	}
	return it.settle(0)
}

func (it *mmModelIter) Last() bool {
	if it.upper != "" {
		return it.settle(it.lt(it.upper))
	}
	return it.settle(len(it.keys) - 1)
}

func (it *mmModelIter) SeekGE(k []byte) bool {
	s := string(k)
	if it.lower != "" && s < it.lower {
		s = it.lower
	}
	return it.settle(it.ge(s))
}

func (it *mmModelIter) SeekLT(k []byte) bool {
	s := string(k)
	if it.upper != "" && s > it.upper {
		s = it.upper
	}
	return it.settle(it.lt(s))
}

func (it *mmModelIter) Next() bool { return it.valid && it.settle(it.i+1) }
func (it *mmModelIter) Prev() bool { return it.valid && it.settle(it.i-1) }

func (it *mmModelIter) Key() []byte {
	if !it.valid {
		return nil
	}
	return []byte(it.keys[it.i])
}

func (it *mmModelIter) Value() []byte {
	if !it.valid {
		return nil
	}
	return []byte(it.vals[it.i])
}

// mmRunModel runs ops against a map and returns the transcript.
func mmRunModel(ops []mmOp) []string {
	state := map[string]string{}
	var snaps []map[string]string
	var iters []*mmModelIter
	var tr []string
	apply := func(m map[string]string, ws []mmWrite) {
		for _, w := range ws {
			switch w.op {
			case 's':
				m[w.key] = w.val
			case 'd':
				delete(m, w.key)
			}
		}
	}
	for _, op := range ops {
		var line string
		switch op.kind {
		case mmSet:
			state[op.key] = op.val
		case mmDelete:
			delete(state, op.key)
		case mmBatch:
			apply(state, op.writes)
		case mmUpdate, mmView:
			work := maps(state)
			var b strings.Builder
			for _, w := range op.writes {
				apply(work, []mmWrite{w})
				switch w.op {
				case 'g':
					v, ok := work[w.key]
					b.WriteString(" " + mmResult(v, ok))
				case 'i':
					b.WriteString(" [" + mmMoves(newModelIter(work, "", ""), w.moves) + "]")
				}
			}
			if op.kind == mmUpdate && !op.abort {
				state = work
			}
			line = b.String()
		case mmGet:
			v, ok := state[op.key]
			line = mmResult(v, ok)
		case mmHas:
			_, ok := state[op.key]
			line = fmt.Sprint(ok)
		case mmSnapOpen:
			snaps = append(snaps, maps(state))
		case mmSnapGet:
			v, ok := snaps[op.slot][op.key]
			line = mmResult(v, ok)
		case mmSnapClose:
			snaps = slices.Delete(snaps, op.slot, op.slot+1)
		case mmScan, mmIterOpen:
			src := state
			if op.slot >= 0 {
				src = snaps[op.slot]
			}
			it := newModelIter(src, op.lower, op.upper)
			line = mmMoves(it, op.moves)
			if op.kind == mmIterOpen {
				iters = append(iters, it)
			}
		case mmIterStep:
			line = mmMoves(iters[op.slot], op.moves)
		case mmIterClose:
			iters = slices.Delete(iters, op.slot, op.slot+1)
		case mmReopen:
			snaps, iters = nil, nil
		}
		tr = append(tr, line)
	}
	return tr
}

type mmRunStats struct {
	evictions, flushes, checkpoints, reopens int64
}

// mmRunDB runs ops against a database with options o on a fresh MemFS and
// returns the transcript.
func mmRunDB(t *testing.T, ops []mmOp, o Options) ([]string, mmRunStats) {
	o.fs = vfs.NewMem()
	var rs mmRunStats
	db, err := Open("db", &o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	var snaps []*Snapshot
	var iters []*Iterator
	var tr []string
	wopts := []*WriteOptions{nil, Sync, NoSync}
	bound := func(s string) []byte {
		if s == "" {
			return nil
		}
		return []byte(s)
	}
	read := func(v []byte, err error) string {
		if errors.Is(err, ErrNotFound) {
			return "-"
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return mmResult(string(v), true)
	}
	closeAll := func() {
		for _, it := range iters {
			if err := it.Close(); err != nil {
				t.Fatalf("iterator close: %v", err)
			}
		}
		for _, s := range snaps {
			if err := s.Close(); err != nil {
				t.Fatalf("snapshot close: %v", err)
			}
		}
		snaps, iters = nil, nil
		st := db.Stats()
		rs.evictions += st.Pool.Evictions
		rs.flushes += st.Pool.Flushes
		rs.checkpoints += st.Checkpoints
	}
	defer func() {
		closeAll()
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	errAbort := errors.New("abort")
	for i, op := range ops {
		fail := func(err error) {
			if err != nil {
				t.Fatalf("op %d (%v): %v", i, op.kind, err)
			}
		}
		var line string
		switch op.kind {
		case mmSet:
			if op.sync == 0 {
				fail(db.Set([]byte(op.key), []byte(op.val)))
			} else {
				b := db.NewBatch()
				fail(b.Set([]byte(op.key), []byte(op.val)))
				fail(b.Commit(wopts[op.sync]))
			}
		case mmDelete:
			if op.sync == 0 {
				fail(db.Delete([]byte(op.key)))
			} else {
				b := db.NewBatch()
				fail(b.Delete([]byte(op.key)))
				fail(b.Commit(wopts[op.sync]))
			}
		case mmBatch:
			b := db.NewBatch()
			for _, w := range op.writes {
				if w.op == 's' {
					fail(b.Set([]byte(w.key), []byte(w.val)))
				} else {
					fail(b.Delete([]byte(w.key)))
				}
			}
			if b.Len() != len(op.writes) {
				t.Fatalf("op %d: batch length %d, want %d", i, b.Len(), len(op.writes))
			}
			fail(b.Commit(wopts[op.sync]))
		case mmUpdate, mmView:
			// No t.Fatal inside fn: Update holds the writer lock.
			var b strings.Builder
			fn := func(tx *Tx) error {
				for _, w := range op.writes {
					var err error
					switch w.op {
					case 's':
						err = tx.Set([]byte(w.key), []byte(w.val))
					case 'd':
						err = tx.Delete([]byte(w.key))
					case 'g':
						var v []byte
						v, err = tx.Get([]byte(w.key))
						if errors.Is(err, ErrNotFound) {
							b.WriteString(" -")
							err = nil
						} else if err == nil {
							b.WriteString(" " + mmResult(string(v), true))
						}
					case 'i':
						var it *Iterator
						if it, err = tx.NewIter(nil); err == nil {
							b.WriteString(" [" + mmMoves(it, w.moves) + "]")
							err = errors.Join(it.Error(), it.Close())
						}
					}
					if err != nil {
						return err
					}
				}
				if op.abort && op.kind == mmUpdate {
					return errAbort
				}
				return nil
			}
			if op.kind == mmView {
				err = db.View(fn)
			} else {
				err = db.Update(fn)
			}
			if (op.abort && op.kind == mmUpdate && err != errAbort) || (!op.abort || op.kind == mmView) && err != nil {
				t.Fatalf("op %d: transaction (abort %v): %v", i, op.abort, err)
			}
			line = b.String()
		case mmGet:
			line = read(db.Get([]byte(op.key)))
		case mmHas:
			ok, err := db.Has([]byte(op.key))
			fail(err)
			line = fmt.Sprint(ok)
		case mmSnapOpen:
			s, err := db.NewSnapshot()
			fail(err)
			snaps = append(snaps, s)
		case mmSnapGet:
			line = read(snaps[op.slot].Get([]byte(op.key)))
		case mmSnapClose:
			fail(snaps[op.slot].Close())
			snaps = slices.Delete(snaps, op.slot, op.slot+1)
		case mmScan, mmIterOpen:
			io := &IterOptions{LowerBound: bound(op.lower), UpperBound: bound(op.upper)}
			var it *Iterator
			if op.slot >= 0 {
				it, err = snaps[op.slot].NewIter(io)
			} else {
				it, err = db.NewIter(io)
			}
			fail(err)
			line = mmMoves(it, op.moves)
			fail(it.Error())
			if op.kind == mmIterOpen {
				iters = append(iters, it)
			} else {
				fail(it.Close())
			}
		case mmIterStep:
			line = mmMoves(iters[op.slot], op.moves)
			fail(iters[op.slot].Error())
		case mmIterClose:
			fail(iters[op.slot].Close())
			iters = slices.Delete(iters, op.slot, op.slot+1)
		case mmCheckpoint:
			fail(db.Checkpoint())
		case mmSync:
			fail(db.Sync())
		case mmReopen:
			closeAll()
			fail(db.Close())
			rs.reopens++
			db, err = Open("db", &o)
			fail(err)
		}
		tr = append(tr, line)
	}
	return tr, rs
}

// mmOptionSets are the configurations; each must read exactly what the
// model reads. Pool minimum: Partitions × (8 pages + 64 KiB).
var mmOptionSets = []struct {
	name string
	o    Options
}{
	{"4k-none-256k-p2-R0-ff100-always", Options{PageSize: 4096, Codec: "none", CacheSize: 256 << 10, Partitions: 2, FixedShare: true, CompressedShare: 0, FillFactor: 100, Sync: SyncAlways}},
	{"4k-lz4-256k-p1-R.5-ff75-never", Options{PageSize: 4096, Codec: "lz4", CacheSize: 256 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.5, FillFactor: 75, Sync: SyncNever}},
	{"4k-zstd-320k-p1-auto-ff50-periodic", Options{PageSize: 4096, Codec: "zstd", CacheSize: 320 << 10, Partitions: 1, FillFactor: 50, Sync: SyncPeriodic}},
	{"4k-snappy-256k-p1-R.99-ff50-never", Options{PageSize: 4096, Codec: "snappy", CacheSize: 256 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0.99, FillFactor: 50, Sync: SyncNever}},
	{"4k-deflate-32m-auto-ff100-always", Options{PageSize: 4096, Codec: "deflate", CacheSize: 32 << 20, FillFactor: 100, Sync: SyncAlways}},
	{"16k-lz4-512k-p2-R.99-ff100-always", Options{PageSize: 16384, Codec: "lz4", CacheSize: 512 << 10, Partitions: 2, FixedShare: true, CompressedShare: 0.99, FillFactor: 100, Sync: SyncAlways}},
	{"16k-snappy-32m-auto.3-ff75-never", Options{PageSize: 16384, Codec: "snappy", CacheSize: 32 << 20, CompressedShare: 0.3, FillFactor: 75, Sync: SyncNever}},
	{"16k-lz4hc-256k-p1-R0-ff50-periodic", Options{PageSize: 16384, Codec: "lz4hc-9", CacheSize: 256 << 10, Partitions: 1, FixedShare: true, CompressedShare: 0, FillFactor: 50, Sync: SyncPeriodic}},
	{"64k-none-1m-p1-R.5-ff100-never", Options{PageSize: 65536, Codec: "none", CacheSize: 1 << 20, Partitions: 1, FixedShare: true, CompressedShare: 0.5, FillFactor: 100, Sync: SyncNever}},
	{"64k-zstd-32m-auto-ff50-periodic", Options{PageSize: 65536, Codec: "zstd", CacheSize: 32 << 20, FillFactor: 50, Sync: SyncPeriodic}},
}

func TestMetamorphic(t *testing.T) {
	seed := uint64(1)
	if s := os.Getenv("STRATA_METAMORPHIC_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	ops := mmGenerate(seed)
	want := mmRunModel(ops)
	kinds := map[mmKind]int{}
	for _, op := range ops {
		kinds[op.kind]++
	}
	t.Logf("seed %d: %d ops, %d updates, %d reopens, %d checkpoints", seed, len(ops), kinds[mmUpdate], kinds[mmReopen], kinds[mmCheckpoint])
	for _, c := range mmOptionSets {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, rs := mmRunDB(t, ops, c.o)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("op %d (%+v): transcript differs from the model's\n got:%s\nwant:%s", i, ops[i], got[i], want[i])
				}
			}
			t.Logf("evictions %d, page flushes %d, checkpoints %d, reopens %d", rs.evictions, rs.flushes, rs.checkpoints, rs.reopens)
			if c.o.CacheSize <= 1<<20 && rs.evictions == 0 {
				t.Errorf("a %d KiB cache evicted nothing: the sequence is too small to test eviction", c.o.CacheSize>>10)
			}
		})
	}
}

// TestIteratorOutlivesSnapshot closes a snapshot while an iterator over it
// is open, rewrites every key and checkpoints (so the snapshot's pages are
// freed and reused), then moves the iterator. Nothing documents that
// iterators must be closed before their snapshot; the iterator must still
// read the snapshot's state, or fail with ErrClosed — not return another
// version's data or read freed pages. (The metamorphic sequence found this;
// its generator now keeps snapshots open under their iterators.)
func TestIteratorOutlivesSnapshot(t *testing.T) {
	db, err := Open("db", memOptions(vfs.NewMem()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	write := func(tag string) {
		for i := 0; i < 300; i += 50 {
			b := db.NewBatch()
			for j := i; j < i+50; j++ {
				b.Set([]byte(fmt.Sprintf("k%03d", j)), []byte(fmt.Sprintf("%s-%d-%s", tag, j, strings.Repeat("x", 100))))
			}
			if err := b.Commit(nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	write("old")
	s, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	it, err := s.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if !it.First() || string(it.Key()) != "k000" {
		t.Fatalf("first: %q", it.Key())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	write("new1")
	write("new2")

	n, bad := 0, ""
	for ok := it.First(); ok; ok = it.Next() {
		want := fmt.Sprintf("k%03d=old-%d-", n, n)
		if got := string(it.Key()) + "=" + string(it.Value()); !strings.HasPrefix(got, want) && bad == "" {
			bad = fmt.Sprintf("entry %d is %.30q, want %q...", n, got, want)
		}
		n++
	}
	switch err := it.Error(); {
	case errors.Is(err, ErrClosed):
		// Refusing is fine.
	case err != nil:
		t.Fatalf("iterator over a closed snapshot, after its pages were freed and reused: %v (after %d entries)", err, n)
	case bad != "" || n != 300:
		t.Fatalf("iterator over a closed snapshot, after its pages were freed and reused: %s; %d entries, want 300 — "+
			"Snapshot.Close releases the version's pages while Snapshot.NewIter iterators still read them", bad, n)
	}
}

package server

// Key-space commands: DEL, EXISTS, SCAN, DBSIZE, FLUSHDB.
//
// SCAN walks the keys in key order. A Redis cursor is a 64-bit number (and
// clients parse it as one), while Strata's natural position is a key, so
// the server keeps a table from cursor numbers to the key where the next
// call resumes (cursorTable, locked inside, bounded in entries and bytes;
// the oldest cursors are dropped first and then answer "ERR invalid
// cursor"). Each call reads from its own snapshot starting at that key, so
// a full scan returns every key present from its start to its end exactly
// once, in order; a key added or removed meanwhile may or may not appear,
// as in Redis.

import (
	"bytes"
	"container/list"
	"errors"
	"strconv"
	"sync"

	"github.com/stratadb/strata"
)

func cmdDel(s *Server, r *reply, args [][]byte) {
	var n int64
	err := s.db.Update(func(tx *strata.Tx) error {
		n = 0
		for _, k := range args[1:] {
			_, found, err := txGet(tx, k)
			if errors.Is(err, strata.ErrEmptyKey) {
				continue
			}
			if err != nil {
				return err
			}
			if found {
				if err := tx.Delete(k); err != nil {
					return err
				}
				n++
			}
		}
		return nil
	})
	if err != nil {
		r.dbError(err)
		return
	}
	r.int(n)
}

func cmdExists(s *Server, r *reply, args [][]byte) {
	var n int64
	err := s.db.View(func(tx *strata.Tx) error {
		for _, k := range args[1:] {
			_, found, err := txGet(tx, k)
			if err != nil && !errors.Is(err, strata.ErrEmptyKey) {
				return err
			}
			if found {
				n++
			}
		}
		return nil
	})
	if err != nil {
		r.dbError(err)
		return
	}
	r.int(n)
}

// scanMaxCount bounds the keys one SCAN call examines, whatever COUNT says.
const scanMaxCount = 100000

func cmdScan(s *Server, r *reply, args [][]byte) {
	cursor, err := strconv.ParseUint(string(args[1]), 10, 64)
	if err != nil {
		r.err("ERR invalid cursor")
		return
	}
	count := 10
	var pattern []byte
	typeOK := true
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			r.err(errSyntax)
			return
		}
		switch v := args[i+1]; {
		case equalFold(args[i], "match"):
			pattern = v
		case equalFold(args[i], "count"):
			n, ok := parseInt64(v)
			if !ok {
				r.err(errNotInteger)
				return
			}
			if n < 1 {
				r.err(errSyntax)
				return
			}
			count = int(min(n, scanMaxCount))
		case equalFold(args[i], "type"):
			// Every Strata value is a string.
			typeOK = equalFold(v, "string")
		default:
			r.err(errSyntax)
			return
		}
	}
	var start []byte
	if cursor != 0 {
		var ok bool
		if start, ok = s.cursors.get(cursor); !ok {
			r.err("ERR invalid cursor")
			return
		}
	}
	opts := &strata.IterOptions{}
	// A pattern with a literal prefix bounds the walk to that prefix.
	prefix := globPrefix(pattern)
	if len(prefix) > 0 {
		opts.LowerBound = prefix
		opts.UpperBound = prefixEnd(prefix)
	}
	keys, next, err := s.scanFrom(opts, start, count, pattern, typeOK)
	if err != nil {
		r.dbError(err)
		return
	}
	// The reply is written after the iterator is closed: a slow reader
	// must not hold a snapshot (and the pages of its version) open.
	r.array(2)
	r.bulkString(strconv.FormatUint(next, 10))
	r.array(len(keys))
	for _, k := range keys {
		r.bulk(k)
	}
}

// scanFrom examines up to count keys from start (nil: the first) and
// returns those that match and the cursor of the next key (0 at the end).
func (s *Server) scanFrom(opts *strata.IterOptions, start []byte, count int, pattern []byte, typeOK bool) ([][]byte, uint64, error) {
	it, err := s.db.NewIter(opts)
	if err != nil {
		return nil, 0, err
	}
	defer it.Close()
	var valid bool
	if start != nil {
		valid = it.SeekGE(start)
	} else {
		valid = it.First()
	}
	var keys [][]byte
	for n := 0; valid && n < count; n++ {
		k := it.Key()
		if typeOK && (pattern == nil || globMatch(pattern, k)) {
			keys = append(keys, bytes.Clone(k))
		}
		valid = it.Next()
	}
	if err := it.Error(); err != nil {
		return nil, 0, err
	}
	next := uint64(0)
	if valid {
		next = s.cursors.put(bytes.Clone(it.Key()))
	}
	return keys, next, nil
}

// prefixEnd is the smallest key greater than every key with prefix p, or
// nil if there is none (p is all 0xff).
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// countKeys counts the keys (every leaf is read; values are not).
func countKeys(db *strata.DB) (int64, error) {
	it, err := db.NewIter(nil)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, it.Error()
}

func cmdDBSize(s *Server, r *reply, _ [][]byte) {
	n, err := countKeys(s.db)
	if err != nil {
		r.dbError(err)
		return
	}
	r.int(n)
}

// flushChunk is the keys FLUSHDB deletes per batch.
const flushChunk = 4096

func cmdFlushDB(s *Server, r *reply, args [][]byte) {
	if !s.cfg.EnableFlushDB {
		r.err("ERR FLUSHDB and FLUSHALL are disabled; start strata serve with --enable-flushdb to allow them")
		return
	}
	for _, a := range args[1:] {
		if !equalFold(a, "sync") && !equalFold(a, "async") {
			r.err(errSyntax)
			return
		}
	}
	// In batches of flushChunk keys: a key written by another client
	// while FLUSHDB runs may survive it.
	for {
		it, err := s.db.NewIter(nil)
		if err != nil {
			r.dbError(err)
			return
		}
		b := s.db.NewBatch()
		for ok := it.First(); ok && b.Len() < flushChunk; ok = it.Next() {
			if err := b.Delete(it.Key()); err != nil {
				it.Close()
				r.dbError(err)
				return
			}
		}
		err = it.Error()
		it.Close()
		if err != nil {
			r.dbError(err)
			return
		}
		if b.Len() == 0 {
			break
		}
		if err := b.Commit(nil); err != nil {
			r.dbError(err)
			return
		}
	}
	s.cursors.clear()
	r.ok()
}

// Bounds of the cursor table.
const (
	cursorTableEntries = 1 << 16
	cursorTableBytes   = 32 << 20
)

// cursorTable maps SCAN cursor numbers to resume keys, least recently
// used first out. Safe for concurrent use.
type cursorTable struct {
	mu         sync.Mutex
	maxEntries int
	maxBytes   int
	bytes      int
	next       uint64
	m          map[uint64]*list.Element
	lru        list.List // of *cursorEntry, most recent at the front
}

type cursorEntry struct {
	id  uint64
	key []byte
}

func newCursorTable(maxEntries, maxBytes int) *cursorTable {
	// Cursor numbers start at a random point, so a cursor from an earlier
	// run of the server is very unlikely to name a live one.
	return &cursorTable{maxEntries: maxEntries, maxBytes: maxBytes, next: randomUint64() >> 2, m: make(map[uint64]*list.Element)}
}

// put stores key and returns a new cursor for it (never 0).
func (t *cursorTable) put(key []byte) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	if t.next == 0 {
		t.next = 1
	}
	id := t.next
	t.m[id] = t.lru.PushFront(&cursorEntry{id: id, key: key})
	t.bytes += len(key)
	for len(t.m) > t.maxEntries || (t.bytes > t.maxBytes && len(t.m) > 1) {
		e := t.lru.Back()
		ce := e.Value.(*cursorEntry)
		t.lru.Remove(e)
		delete(t.m, ce.id)
		t.bytes -= len(ce.key)
	}
	return id
}

// get returns the resume key of cursor id. The entry stays, so a client
// may repeat a call.
func (t *cursorTable) get(id uint64) ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[id]
	if !ok {
		return nil, false
	}
	t.lru.MoveToFront(e)
	return e.Value.(*cursorEntry).key, true
}

func (t *cursorTable) clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m = make(map[uint64]*list.Element)
	t.lru.Init()
	t.bytes = 0
}

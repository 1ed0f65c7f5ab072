package server

// String commands. Plain reads and writes use DB.AppendValue (GET, into a
// buffer the connection keeps), DB.Get, DB.Set and batches;
// every command that reads a value to decide what to write (SET NX/XX/GET,
// GETSET, SETNX, INCR..., APPEND, DEL's count) runs in one DB.Update, which
// serializes it with every other writer, so it is atomic.

import (
	"errors"
	"math"
	"strconv"

	"github.com/stratadb/strata"
)

func cmdGet(s *Server, r *reply, args [][]byte) {
	v, err := s.db.AppendValue(r.cl.getBuf[:0], args[1])
	switch {
	case err == nil:
		s.keyspaceHits.Add(1)
		r.bulk(v) // copied into the connection's output buffer
		if cap(v) <= maxGetBuf {
			r.cl.getBuf = v[:0]
		}
	case errors.Is(err, strata.ErrNotFound):
		s.keyspaceMisses.Add(1)
		r.null()
	default:
		r.dbError(err)
	}
}

// txGet reads key in tx: (value, found, error).
func txGet(tx *strata.Tx, key []byte) ([]byte, bool, error) {
	v, err := tx.Get(key)
	if errors.Is(err, strata.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

func cmdSet(s *Server, r *reply, args [][]byte) {
	key, value := args[1], args[2]
	var nx, xx, get bool
	for i := 3; i < len(args); i++ {
		switch a := args[i]; {
		case equalFold(a, "nx") && !xx:
			nx = true
		case equalFold(a, "xx") && !nx:
			xx = true
		case equalFold(a, "get"):
			get = true
		case equalFold(a, "keepttl"):
			// Strata keys have no TTL to keep.
		case equalFold(a, "ex"), equalFold(a, "px"), equalFold(a, "exat"), equalFold(a, "pxat"):
			if i+1 >= len(args) {
				r.err(errSyntax)
				return
			}
			r.err("ERR key expiry (SET EX/PX/EXAT/PXAT) is not supported: Strata keys do not expire")
			return
		default:
			r.err(errSyntax)
			return
		}
	}
	if !nx && !xx && !get {
		if err := s.db.Set(key, value); err != nil {
			r.dbError(err)
			return
		}
		r.ok()
		return
	}
	var old []byte
	var found, written bool
	err := s.db.Update(func(tx *strata.Tx) error {
		var err error
		if old, found, err = txGet(tx, key); err != nil {
			return err
		}
		if (nx && found) || (xx && !found) {
			return nil
		}
		written = true
		return tx.Set(key, value)
	})
	switch {
	case err != nil:
		r.dbError(err)
	case get:
		r.nullOr(old, found)
	case written:
		r.ok()
	default:
		r.null()
	}
}

func cmdGetSet(s *Server, r *reply, args [][]byte) {
	var old []byte
	var found bool
	err := s.db.Update(func(tx *strata.Tx) error {
		var err error
		if old, found, err = txGet(tx, args[1]); err != nil {
			return err
		}
		return tx.Set(args[1], args[2])
	})
	if err != nil {
		r.dbError(err)
		return
	}
	r.nullOr(old, found)
}

func cmdSetNX(s *Server, r *reply, args [][]byte) {
	var set bool
	err := s.db.Update(func(tx *strata.Tx) error {
		_, found, err := txGet(tx, args[1])
		if err != nil || found {
			return err
		}
		set = true
		return tx.Set(args[1], args[2])
	})
	if err != nil {
		r.dbError(err)
		return
	}
	if set {
		r.int(1)
	} else {
		r.int(0)
	}
}

func cmdMGet(s *Server, r *reply, args [][]byte) {
	keys := args[1:]
	if len(keys) == 1 {
		r.array(1)
		cmdGet(s, r, args)
		return
	}
	// One snapshot for all keys, as Redis's MGET is atomic. The reply is
	// written as the values are read, so a large MGET flushes as it goes.
	r.array(len(keys))
	err := s.db.View(func(tx *strata.Tx) error {
		for _, k := range keys {
			v, found, err := txGet(tx, k)
			if err != nil && !errors.Is(err, strata.ErrEmptyKey) {
				return err
			}
			if found {
				s.keyspaceHits.Add(1)
			} else {
				s.keyspaceMisses.Add(1)
			}
			r.nullOr(v, found)
		}
		return nil
	})
	if err != nil {
		// The array header is out: the error takes the place of the
		// missing elements' first; close the connection so the client
		// does not read a reply of the wrong shape.
		r.dbError(err)
		r.closeConn()
	}
}

func cmdMSet(s *Server, r *reply, args [][]byte) {
	if len(args)%2 != 1 {
		r.err(errArity("mset"))
		return
	}
	b := s.db.NewBatch()
	for i := 1; i < len(args); i += 2 {
		if err := b.Set(args[i], args[i+1]); err != nil {
			r.dbError(err)
			return
		}
	}
	if err := b.Commit(nil); err != nil {
		r.dbError(err)
		return
	}
	r.ok()
}

func cmdIncr(s *Server, r *reply, args [][]byte) { incrBy(s, r, args[1], 1) }
func cmdDecr(s *Server, r *reply, args [][]byte) { incrBy(s, r, args[1], -1) }
func cmdIncrBy(s *Server, r *reply, args [][]byte) {
	n, ok := parseInt64(args[2])
	if !ok {
		r.err(errNotInteger)
		return
	}
	incrBy(s, r, args[1], n)
}

func cmdDecrBy(s *Server, r *reply, args [][]byte) {
	n, ok := parseInt64(args[2])
	if !ok {
		r.err(errNotInteger)
		return
	}
	if n == math.MinInt64 {
		r.err("ERR decrement would overflow")
		return
	}
	incrBy(s, r, args[1], -n)
}

// errReply is a reply decided inside a transaction (which it aborts).
type errReply string

func (e errReply) Error() string { return string(e) }

func incrBy(s *Server, r *reply, key []byte, delta int64) {
	var result int64
	err := s.db.Update(func(tx *strata.Tx) error {
		v, found, err := txGet(tx, key)
		if err != nil {
			return err
		}
		var cur int64
		if found {
			var ok bool
			if cur, ok = parseInt64(v); !ok {
				return errReply(errNotInteger)
			}
		}
		if (delta > 0 && cur > math.MaxInt64-delta) || (delta < 0 && cur < math.MinInt64-delta) {
			return errReply(errOverflow)
		}
		result = cur + delta
		return tx.Set(key, strconv.AppendInt(nil, result, 10))
	})
	var er errReply
	switch {
	case errors.As(err, &er):
		r.err(string(er))
	case err != nil:
		r.dbError(err)
	default:
		r.int(result)
	}
}

func cmdAppend(s *Server, r *reply, args [][]byte) {
	var n int
	err := s.db.Update(func(tx *strata.Tx) error {
		v, _, err := txGet(tx, args[1])
		if err != nil {
			return err
		}
		if len(v)+len(args[2]) > s.db.MaxValueSize() {
			return errReply(errTooBig)
		}
		nv := append(v, args[2]...)
		n = len(nv)
		return tx.Set(args[1], nv)
	})
	var er errReply
	switch {
	case errors.As(err, &er):
		r.err(string(er))
	case err != nil:
		r.dbError(err)
	default:
		r.int(int64(n))
	}
}

func cmdStrlen(s *Server, r *reply, args [][]byte) {
	v, err := s.db.Get(args[1])
	switch {
	case err == nil:
		r.int(int64(len(v)))
	case errors.Is(err, strata.ErrNotFound):
		r.int(0)
	default:
		r.dbError(err)
	}
}

// parseInt64 parses a decimal integer exactly as Redis's string2ll: an
// optional '-', no '+', no spaces, no leading zeros (but "0"), at most 20
// bytes, within int64.
func parseInt64(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := false
	p := b
	if p[0] == '-' {
		neg, p = true, p[1:]
		if len(p) == 0 {
			return 0, false
		}
	}
	if p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (math.MaxUint64-9)/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true // -(1<<63) wraps to MinInt64, as intended
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

package strata

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/stratadb/strata/internal/wal"
)

// Batch is a set of writes applied atomically: all or none, also across a
// crash. It is not safe for concurrent use.
//
// The writes are encoded as in the WAL record, in chunks: a chunk grows
// until it is full, then the next one starts (doubling up to batchChunk),
// so a large batch is never copied while it is built, and its record goes
// to the WAL without being copied either (wal.AppendChunks). A write never
// spans two chunks.
type Batch struct {
	db     *DB
	chunks [][]byte // encoded writes; chunks[used:] are spare, for Reset
	used   int      // chunks in use
	size   int      // encoded bytes in use
	n      int
	// sets and deletes count the writes by kind, for Stats.
	sets, deletes int
	// prefetchKeys is the commit's scratch list of keys (prefetch.go).
	prefetchKeys [][]byte
}

// batchChunk is the largest chunk a batch allocates (a write larger than
// that gets a chunk of its own size).
const batchChunk = 1 << 20

const (
	opSet    byte = 1
	opDelete byte = 2
)

// NewBatch returns an empty batch.
func (db *DB) NewBatch() *Batch { return &Batch{db: db} }

// errNoDB: a Batch not made by DB.NewBatch (its zero value).
var errNoDB = errors.New("strata: batch not made by DB.NewBatch")

// Set adds key = value to the batch. The batch keeps its own copy.
func (b *Batch) Set(key, value []byte) error {
	if b.db == nil {
		return errNoDB
	}
	if err := b.db.checkKV(key, value, true); err != nil {
		return err
	}
	if err := b.checkRoom(len(key) + len(value)); err != nil {
		return err
	}
	n := 1 + uvarintLen(len(key)) + len(key) + uvarintLen(len(value)) + len(value)
	c := b.room(n)
	c = append(c, opSet)
	c = binary.AppendUvarint(c, uint64(len(key)))
	c = append(c, key...)
	c = binary.AppendUvarint(c, uint64(len(value)))
	c = append(c, value...)
	b.chunks[b.used-1] = c
	b.size += n
	b.n++
	b.sets++
	return nil
}

// Delete adds the removal of key to the batch.
func (b *Batch) Delete(key []byte) error {
	if b.db == nil {
		return errNoDB
	}
	if err := b.db.checkKV(key, nil, false); err != nil {
		return err
	}
	if err := b.checkRoom(len(key)); err != nil {
		return err
	}
	n := 1 + uvarintLen(len(key)) + len(key)
	c := b.room(n)
	c = append(c, opDelete)
	c = binary.AppendUvarint(c, uint64(len(key)))
	c = append(c, key...)
	b.chunks[b.used-1] = c
	b.size += n
	b.n++
	b.deletes++
	return nil
}

// room returns the chunk the next write of n bytes goes to (the last in
// use), starting a new one if the current one cannot take it.
func (b *Batch) room(n int) []byte {
	if b.used > 0 {
		if c := b.chunks[b.used-1]; cap(c)-len(c) >= n {
			return c
		}
	}
	size := 256
	if b.used > 0 {
		size = min(2*cap(b.chunks[b.used-1]), batchChunk)
	}
	size = max(size, n)
	if b.used < len(b.chunks) && cap(b.chunks[b.used]) >= size {
		b.chunks[b.used] = b.chunks[b.used][:0] // a spare chunk from before Reset
	} else if b.used < len(b.chunks) {
		b.chunks[b.used] = make([]byte, 0, size)
	} else {
		b.chunks = append(b.chunks, make([]byte, 0, size))
	}
	b.used++
	return b.chunks[b.used-1]
}

// ops returns the encoded writes, chunk by chunk.
func (b *Batch) ops() [][]byte { return b.chunks[:b.used] }

// at returns the n bytes at offset off of chunk i (a value the overlay
// indexes).
func (b *Batch) at(i, off, n int) []byte { return b.chunks[i][off : off+n] }

// last is the position of the batch's last byte + 1: its chunk and the
// offset in it.
func (b *Batch) last() (int, int) { return b.used - 1, len(b.chunks[b.used-1]) }

func uvarintLen(n int) int {
	l := 1
	for x := uint64(n); x >= 0x80; x >>= 7 {
		l++
	}
	return l
}

// checkRoom refuses a write of n bytes of key and value that would make
// the encoded batch longer than one WAL record.
func (b *Batch) checkRoom(n int) error {
	const opOverhead = 1 + 2*binary.MaxVarintLen64
	if b.size+n+opOverhead > wal.MaxRecordSize {
		return fmt.Errorf("%w: %d bytes of writes, the limit is %d", ErrBatchTooLarge, b.size+n, wal.MaxRecordSize)
	}
	return nil
}

// Len is the number of writes in the batch.
func (b *Batch) Len() int { return b.n }

// Reset empties the batch for reuse (it keeps its chunks).
func (b *Batch) Reset() { b.used, b.size, b.n, b.sets, b.deletes = 0, 0, 0, 0, 0 }

// WriteOptions choose whether a commit waits for durability. Either way
// the commit queues its WAL record under the writer lock and waits, if it
// waits, after releasing it, so concurrent durable commits share fsyncs
// (group commit). A nil *WriteOptions means the database's SyncMode
// (Options.Sync) decides: the commit waits for its fsync under SyncAlways,
// and does not under SyncPeriodic and SyncNever.
type WriteOptions struct {
	// Sync true: the commit returns only once it is durable (its WAL
	// record, and so every earlier commit's, is fsynced), whatever the
	// database's SyncMode.
	//
	// Sync false: no fsync in the commit path, whatever the database's
	// SyncMode, as Pebble's NoSync: the commit returns once its WAL record
	// is queued for the background writer, without any I/O. The
	// database's SyncMode then says when the writer fsyncs the record (at
	// once under SyncAlways, within SyncInterval under SyncPeriodic, at
	// the next Sync, durable commit, Checkpoint or Close under SyncNever).
	// A crash, of the process or the machine, can lose such a commit and
	// the ones after it, but never part of a commit, and never a commit
	// before one that was acknowledged as durable.
	Sync bool
}

// Sync and NoSync are the two WriteOptions. Sync: wait for the commit to
// be durable. NoSync: do not wait, and do no fsync in the commit path, even
// if the database's SyncMode is SyncAlways.
var (
	Sync   = &WriteOptions{Sync: true}
	NoSync = &WriteOptions{Sync: false}
)

// Commit applies the batch atomically. opts says whether it waits for
// durability (see WriteOptions); nil means the database's SyncMode decides.
//
// If Commit fails because the database's files did (an I/O error, or the
// process or machine stopping meanwhile), the batch may or may not have
// reached the log: the database reopened after it holds the state before
// the batch or after it, never part of it.
func (b *Batch) Commit(opts *WriteOptions) error {
	if b.n == 0 {
		return nil
	}
	if err := b.db.commit(b, opts); err != nil {
		return err
	}
	b.db.st.batches.Add(1)
	return nil
}

var errBadBatch = errors.New("malformed batch record")

// decodeOps calls fn for each write of an encoded batch.
func decodeOps(ops []byte, fn func(op byte, key, value []byte) error) error {
	for len(ops) > 0 {
		op := ops[0]
		ops = ops[1:]
		klen, k := binary.Uvarint(ops)
		if k <= 0 || klen > uint64(len(ops)-k) {
			return errBadBatch
		}
		key := ops[k : k+int(klen)]
		ops = ops[k+int(klen):]
		var value []byte
		switch op {
		case opSet:
			vlen, k := binary.Uvarint(ops)
			if k <= 0 || vlen > uint64(len(ops)-k) {
				return errBadBatch
			}
			value = ops[k : k+int(vlen)]
			ops = ops[k+int(vlen):]
		case opDelete:
		default:
			return fmt.Errorf("%w: op %d", errBadBatch, op)
		}
		if err := fn(op, key, value); err != nil {
			return err
		}
	}
	return nil
}

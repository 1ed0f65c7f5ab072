package strata

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/stratadb/strata/internal/wal"
)

// Batch is a set of writes applied atomically: all or none, also across a
// crash. It is not safe for concurrent use.
type Batch struct {
	db  *DB
	ops []byte // encoded as in the WAL record
	n   int
	// sets and deletes count the writes by kind, for Stats.
	sets, deletes int
}

const (
	opSet    byte = 1
	opDelete byte = 2
)

// NewBatch returns an empty batch.
func (db *DB) NewBatch() *Batch { return &Batch{db: db} }

// Set adds key = value to the batch. The batch keeps its own copy.
func (b *Batch) Set(key, value []byte) error {
	if err := b.db.checkKV(key, value, true); err != nil {
		return err
	}
	if err := b.checkRoom(len(key) + len(value)); err != nil {
		return err
	}
	b.grow(1 + 2*binary.MaxVarintLen64 + len(key) + len(value))
	b.ops = append(b.ops, opSet)
	b.ops = binary.AppendUvarint(b.ops, uint64(len(key)))
	b.ops = append(b.ops, key...)
	b.ops = binary.AppendUvarint(b.ops, uint64(len(value)))
	b.ops = append(b.ops, value...)
	b.n++
	b.sets++
	return nil
}

// Delete adds the removal of key to the batch.
func (b *Batch) Delete(key []byte) error {
	if err := b.db.checkKV(key, nil, false); err != nil {
		return err
	}
	if err := b.checkRoom(len(key)); err != nil {
		return err
	}
	b.grow(1 + binary.MaxVarintLen64 + len(key))
	b.ops = append(b.ops, opDelete)
	b.ops = binary.AppendUvarint(b.ops, uint64(len(key)))
	b.ops = append(b.ops, key...)
	b.n++
	b.deletes++
	return nil
}

// grow makes room for n more bytes, doubling the buffer: append's growth
// (a quarter at a time for large slices) would copy a large batch about
// five times over while it is built.
func (b *Batch) grow(n int) {
	if cap(b.ops)-len(b.ops) >= n {
		return
	}
	ops := make([]byte, len(b.ops), max(2*cap(b.ops), len(b.ops)+n, 256))
	copy(ops, b.ops)
	b.ops = ops
}

// checkRoom refuses a write of n bytes of key and value that would make
// the encoded batch longer than one WAL record.
func (b *Batch) checkRoom(n int) error {
	const opOverhead = 1 + 2*binary.MaxVarintLen64
	if len(b.ops)+n+opOverhead > wal.MaxRecordSize {
		return fmt.Errorf("%w: %d bytes of writes, the limit is %d", ErrBatchTooLarge, len(b.ops)+n, wal.MaxRecordSize)
	}
	return nil
}

// Len is the number of writes in the batch.
func (b *Batch) Len() int { return b.n }

// Reset empties the batch for reuse.
func (b *Batch) Reset() { b.ops, b.n, b.sets, b.deletes = b.ops[:0], 0, 0, 0 }

// WriteOptions choose a commit's durability.
type WriteOptions struct {
	// Sync makes the commit return only once it is durable, whatever
	// the database's SyncMode.
	Sync bool
}

// Sync and NoSync are the two WriteOptions: with NoSync the commit is
// durable as the database's SyncMode says.
var (
	Sync   = &WriteOptions{Sync: true}
	NoSync = &WriteOptions{Sync: false}
)

// Commit applies the batch atomically. With opts nil the database's
// SyncMode decides durability.
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

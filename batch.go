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
	err error
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
	b.ops = append(b.ops, opSet)
	b.ops = binary.AppendUvarint(b.ops, uint64(len(key)))
	b.ops = append(b.ops, key...)
	b.ops = binary.AppendUvarint(b.ops, uint64(len(value)))
	b.ops = append(b.ops, value...)
	b.n++
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
	b.ops = append(b.ops, opDelete)
	b.ops = binary.AppendUvarint(b.ops, uint64(len(key)))
	b.ops = append(b.ops, key...)
	b.n++
	return nil
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
func (b *Batch) Reset() { b.ops, b.n = b.ops[:0], 0 }

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
func (b *Batch) Commit(opts *WriteOptions) error {
	if b.n == 0 {
		return nil
	}
	return b.db.commit(b.ops, opts, nil)
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

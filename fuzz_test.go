package strata

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// fuzzDB opens a small database on a MemFS for the fuzz targets: batches
// need one for their key and value limits, and the replay check needs a
// tree.
func fuzzDB(f *testing.F) *DB {
	db, err := Open("db", memOptions(vfs.NewMem()))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	return db
}

type fuzzOp struct {
	op         byte
	key, value []byte
}

// decodeAll returns the ops of an encoded batch, or decodeOps's error.
func decodeAll(data []byte) ([]fuzzOp, error) {
	var ops []fuzzOp
	err := decodeOps(data, func(op byte, key, value []byte) error {
		ops = append(ops, fuzzOp{op, key, value})
		return nil
	})
	return ops, err
}

// canonicalVarints reports whether every length in an accepted batch is a
// minimal uvarint, as binary.AppendUvarint writes it.
func canonicalVarints(data []byte) bool {
	for len(data) > 0 {
		op := data[0]
		data = data[1:]
		for field := 0; field < 1 || (field < 2 && op == opSet); field++ {
			n, k := binary.Uvarint(data)
			if k != len(binary.AppendUvarint(nil, n)) {
				return false
			}
			data = data[k+int(n):]
		}
	}
	return true
}

// FuzzDecodeOps feeds arbitrary bytes to decodeOps, the decoder of WAL batch
// records that recovery replays. It must never panic; what it accepts must
// be what Batch.Set and Batch.Delete write: re-encoding the decoded ops
// reproduces the input byte for byte.
//
// Two kinds of input decodeOps accepts that no Batch writes, which the
// WAL's checksums keep out of real logs: non-minimal varint lengths (for
// these the re-encoding must decode to the same ops), and ops a Batch
// refuses — empty keys, keys or values over the limits (for these the
// replay path, applyOps on a B+tree transaction, must fail rather than
// store them).
func FuzzDecodeOps(f *testing.F) {
	db := fuzzDB(f)
	seed := func(build func(b *Batch)) {
		b := db.NewBatch()
		build(b)
		f.Add(bytes.Join(b.ops(), nil))
	}
	seed(func(b *Batch) {})
	seed(func(b *Batch) { b.Set([]byte("k"), []byte("v")) })
	seed(func(b *Batch) { b.Set([]byte("k"), nil) })
	seed(func(b *Batch) { b.Delete([]byte("key")) })
	seed(func(b *Batch) {
		b.Set([]byte("a"), []byte("1"))
		b.Delete([]byte("b"))
		b.Set([]byte("a"), bytes.Repeat([]byte("x"), 200))
		b.Set(bytes.Repeat([]byte("k"), 130), []byte{0, 1, 2})
	})
	seed(func(b *Batch) {
		b.Set(make([]byte, db.MaxKeySize()), make([]byte, 20000)) // an overflow value
		b.Delete(make([]byte, db.MaxKeySize()))
	})
	f.Add([]byte{opSet, 0x80, 0x00, 0x00})                                           // non-minimal key length, empty key
	f.Add([]byte{opDelete, 0x81, 0x00, 'k'})                                         // non-minimal key length
	f.Add([]byte{opSet, 1, 'k', 0xff, 0xff, 0xff, 0x0f})                             // value longer than the input
	f.Add([]byte{3, 1, 'k'})                                                         // unknown op
	f.Add([]byte{opSet, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}) // overflowing varint

	f.Fuzz(func(t *testing.T, data []byte) {
		ops, err := decodeAll(data)
		if err != nil {
			if !errors.Is(err, errBadBatch) {
				t.Fatalf("decodeOps error %v does not wrap errBadBatch", err)
			}
			return
		}
		b := db.NewBatch()
		refused := false
		for _, op := range ops {
			switch op.op {
			case opSet:
				err = b.Set(op.key, op.value)
			case opDelete:
				err = b.Delete(op.key)
			default:
				t.Fatalf("decodeOps accepted op %d", op.op)
			}
			if err != nil {
				if !errors.Is(err, ErrEmptyKey) && !errors.Is(err, ErrKeyTooLarge) && !errors.Is(err, ErrValueTooLarge) && !errors.Is(err, ErrBatchTooLarge) {
					t.Fatalf("Batch refuses decoded op %d (key %d bytes, value %d bytes): %v", op.op, len(op.key), len(op.value), err)
				}
				refused = true
				break
			}
		}
		if refused {
			// Recovery must not store what a Batch refuses.
			db.writeMu.Lock()
			defer db.writeMu.Unlock()
			db.mu.RLock()
			tx := db.tree.Begin(db.root, db.txid+1, db.frozen, db.frozen)
			db.mu.RUnlock()
			err := applyOps(tx, data)
			db.abort(tx)
			if err == nil {
				t.Fatalf("replay accepts a record a Batch refuses: %q", data)
			}
			return
		}
		if b.Len() != len(ops) {
			t.Fatalf("batch has %d ops, decoded %d", b.Len(), len(ops))
		}
		if bytes.Equal(bytes.Join(b.ops(), nil), data) {
			return
		}
		if canonicalVarints(data) {
			t.Fatalf("re-encoding differs:\n in  %x\n out %x", data, bytes.Join(b.ops(), nil))
		}
		again, err := decodeAll(bytes.Join(b.ops(), nil))
		if err != nil {
			t.Fatalf("re-encoded batch does not decode: %v", err)
		}
		if len(again) != len(ops) {
			t.Fatalf("re-encoded batch has %d ops, want %d", len(again), len(ops))
		}
		for i := range ops {
			if again[i].op != ops[i].op || !bytes.Equal(again[i].key, ops[i].key) || !bytes.Equal(again[i].value, ops[i].value) {
				t.Fatalf("op %d changed in re-encoding: %+v, want %+v", i, again[i], ops[i])
			}
		}
	})
}

// FuzzOpenMeta feeds arbitrary pages to decodeMeta, which Open runs on page
// 0. It must never panic, and a page it accepts must be what meta.encode
// writes for the decoded fields. decodeMeta reads only the first metaSize
// bytes (the page checksum of the store covers the rest), so the property
// is checked on those; the rest of an accepted page is ignored, though the
// format says it is zero.
func FuzzOpenMeta(f *testing.F) {
	for _, m := range []meta{
		{pageSize: 4096},
		{pageSize: 4096, root: 7, txid: 12, lsn: 12},
		{pageSize: 16384, root: 1 << 40, txid: 1<<64 - 1, lsn: 3},
		{pageSize: 65536, root: 2, txid: 1, lsn: 0},
		{pageSize: 4096, root: 7, txid: 12, lsn: 12, clean: true},
	} {
		page := make([]byte, m.pageSize)
		m.encode(page)
		f.Add(page)
		f.Add(bytes.Clone(page[:metaSize])) // page size field mismatch
	}
	short := make([]byte, 64)
	(&meta{pageSize: 64}).encode(short)
	f.Add(short) // a page of the size it claims, smaller than any real one
	f.Add(short[:metaSize-1])
	f.Add([]byte("STRATADB"))
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, page []byte) {
		m, err := decodeMeta(page)
		if err != nil {
			return
		}
		if int(m.pageSize) != len(page) {
			t.Fatalf("accepted a %d-byte page that says %d-byte pages", len(page), m.pageSize)
		}
		again := make([]byte, len(page))
		m.encode(again)
		if !bytes.Equal(again[:metaSize], page[:metaSize]) {
			t.Fatalf("re-encoding differs:\n in  %x\n out %x", page[:metaSize], again[:metaSize])
		}
		if m2, err := decodeMeta(again); err != nil || m2 != m {
			t.Fatalf("re-encoded page decodes to %+v, %v; want %+v", m2, err, m)
		}
	})
}

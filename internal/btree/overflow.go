package btree

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/stratadb/strata/internal/bufferpool"
)

// Values longer than MaxInlineValueSize live out of line, in a chain of
// overflow pages; the leaf cell keeps the value's length and the first page
// of the chain. An overflow page (docs/FORMAT.md):
//
//	0  kind      uint8   kindOverflow
//	1  reserved  3 bytes zero
//	4  used      uint32  bytes of the value in this page
//	8  next      uint64  the next page of the chain, 0 in the last
//	16 txid      uint64  the transaction that wrote the page
//	24 data      used bytes, then zeros
//
// Chains are immutable like every committed page: a new value gets a new
// chain and the old chain is freed with the leaf version that referenced
// it, so snapshots keep reading the value they saw.

const (
	kindOverflow       uint8 = 3
	overflowHeaderSize       = 24
)

// MaxValueSize is the largest value a tree stores, inline or not. It keeps
// a value, with its key, inside one WAL record (64 MiB).
const MaxValueSize = 16 << 20

// overflowCapacity is the value bytes one overflow page holds.
func (t *Tree) overflowCapacity() int { return t.pageSize - overflowHeaderSize }

// chainLen is the number of pages a value of length bytes needs.
func (t *Tree) chainLen(length int) int {
	c := t.overflowCapacity()
	return (length + c - 1) / c
}

func checkOverflow(b []byte) error {
	if b[1] != 0 || b[2] != 0 || b[3] != 0 {
		return fmt.Errorf("%w: overflow page with reserved bytes set", ErrCorruptNode)
	}
	if used := binary.LittleEndian.Uint32(b[4:]); used == 0 || int(used) > len(b)-overflowHeaderSize {
		return fmt.Errorf("%w: overflow page holds %d bytes, page is %d", ErrCorruptNode, used, len(b))
	}
	return nil
}

// writeChain stores value in new overflow pages and returns the first.
// The pages belong to the transaction until it commits or aborts.
func (tx *Tx) writeChain(value []byte) (PageID, error) {
	n := tx.t.chainLen(len(value))
	ids := make([]PageID, n)
	for i := range ids {
		id, err := tx.t.pool.Allocate()
		if err != nil {
			return 0, err
		}
		ids[i] = id
		tx.created[id] = struct{}{}
	}
	capacity := tx.t.overflowCapacity()
	for i, id := range ids {
		pg, err := tx.t.pool.Create(id)
		if err != nil {
			return 0, err
		}
		b := pg.Data()
		clear(b)
		part := value[i*capacity : min(len(value), (i+1)*capacity)]
		b[0] = kindOverflow
		binary.LittleEndian.PutUint32(b[4:], uint32(len(part)))
		if i+1 < n {
			binary.LittleEndian.PutUint64(b[8:], uint64(ids[i+1]))
		}
		binary.LittleEndian.PutUint64(b[16:], tx.txid)
		copy(b[overflowHeaderSize:], part)
		pg.MarkDirty()
		pg.Release()
	}
	return ids[0], nil
}

var errChain = errors.New("overflow chain does not match its value's length")

// walkChain visits the pages of the chain of a value of length bytes
// starting at first, calling fn with each page's id and value bytes (valid
// during the call). The chain must hold exactly length bytes in the number
// of pages that needs: a loop, a short or a long chain is corruption.
func (t *Tree) walkChain(first PageID, length int, fn func(id PageID, part []byte)) error {
	if length > MaxValueSize {
		return fmt.Errorf("btree: value at page %d: %w: length %d", first, ErrCorruptNode, length)
	}
	id, left := first, length
	for pages := t.chainLen(length); pages > 0; pages-- {
		if id == 0 {
			return fmt.Errorf("btree: value at page %d: %w: %w (ends early)", first, ErrCorruptNode, errChain)
		}
		pg, err := t.pool.Get(id, bufferpool.Shared)
		if err != nil {
			return err
		}
		b := pg.Data()
		if b[0] != kindOverflow {
			pg.Release()
			return fmt.Errorf("btree: page %d: %w: kind %d in an overflow chain", id, ErrCorruptNode, b[0])
		}
		used := int(binary.LittleEndian.Uint32(b[4:]))
		next := PageID(binary.LittleEndian.Uint64(b[8:]))
		if used > left || (pages > 1 && used != t.overflowCapacity()) {
			pg.Release()
			return fmt.Errorf("btree: page %d: %w: %w", id, ErrCorruptNode, errChain)
		}
		fn(id, b[overflowHeaderSize:overflowHeaderSize+used])
		pg.Release()
		left -= used
		if pages == 1 && (next != 0 || left != 0) {
			return fmt.Errorf("btree: page %d: %w: %w (too long)", id, ErrCorruptNode, errChain)
		}
		id = next
	}
	return nil
}

// readValue appends the value of a leaf cell to dst, following its
// overflow chain if it has one.
func (t *Tree) readValue(dst, v []byte, overflow bool, length int) ([]byte, error) {
	if !overflow {
		return append(dst, v...), nil
	}
	first := PageID(binary.LittleEndian.Uint64(v))
	if length > MaxValueSize {
		return dst, fmt.Errorf("btree: value at page %d: %w: length %d", first, ErrCorruptNode, length)
	}
	dst = slices.Grow(dst, length)
	err := t.walkChain(first, length, func(_ PageID, part []byte) { dst = append(dst, part...) })
	return dst, err
}

// dropChain is called when a transaction replaces or deletes a cell whose
// value is in overflow pages (v is the cell's reference): the chain's pages
// are freed with the old version (or at once if this transaction wrote
// them).
func (tx *Tx) dropChain(v []byte, length int) error {
	return tx.t.walkChain(PageID(binary.LittleEndian.Uint64(v)), length, func(id PageID, _ []byte) {
		tx.replaced(id)
	})
}

package bench

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/stratadb/strata/internal/sysbench"
)

// Dataset produces the rows of a table: row id's key and value are a pure
// function of the seed, the id and a version, so loads, workers and
// checks can all regenerate any row without coordination. Implementations
// are safe for concurrent use and do not allocate when dst has room.
type Dataset interface {
	Name() string
	// AppendKey appends the key of row id to dst.
	AppendKey(dst []byte, id uint64) []byte
	// AppendValue appends the value of row id to dst. Version 0 is the
	// value the load writes; other versions are what updates write: a
	// full new value of the same shape, with fresh random content.
	AppendValue(dst []byte, id, version uint64) []byte
}

// Datasets lists the names accepted in RunSpec.Dataset.
var Datasets = []string{"sysbench", "events"}

// NewDataset returns the data set named name for a table of tableSize rows
// whose contents are fixed by seed.
func NewDataset(name string, seed uint64, tableSize int64) (Dataset, error) {
	if tableSize <= 0 {
		return nil, fmt.Errorf("bench: table size %d: want at least one row", tableSize)
	}
	switch name {
	case "sysbench":
		if tableSize > math.MaxUint32 {
			// sysbench's k is a 32-bit column drawn from [1, table size].
			return nil, fmt.Errorf("bench: table size %d: the sysbench data set holds at most %d rows", tableSize, uint64(math.MaxUint32))
		}
		return &sysbenchDataset{gen: sysbench.NewGenerator(seed, uint64(tableSize)), seed: seed}, nil
	case "events":
		return newEventsDataset(seed), nil
	}
	return nil, fmt.Errorf("bench: unknown dataset %q (known: %v)", name, Datasets)
}

// KeySize is the length of every key: an 8-byte big-endian row id, so that
// key order is id order and range scans walk consecutive rows.
const KeySize = 8

func appendKey(dst []byte, id uint64) []byte {
	return binary.BigEndian.AppendUint64(dst, id)
}

// sysbenchDataset holds sysbench's sbtest rows (id, k, c, pad), encoded by
// internal/sysbench (192 bytes: id, k, then c and pad at their CHAR widths).
type sysbenchDataset struct {
	gen  *sysbench.Generator
	seed uint64
}

func (d *sysbenchDataset) Name() string { return "sysbench" }

func (d *sysbenchDataset) AppendKey(dst []byte, id uint64) []byte { return appendKey(dst, id) }

// AppendValue: an updated version takes k and c from the generator's row
// of an unrelated id, as sysbench's updates write a new random k (index
// update) or c (non-index update); without a secondary index on k both
// are the same rewrite of one row in a key-value store, so versions change
// both.
func (d *sysbenchDataset) AppendValue(dst []byte, id, version uint64) []byte {
	var r sysbench.Row
	d.gen.Row(id, &r)
	if version != 0 {
		var other sysbench.Row
		d.gen.Row(mix64(id^mix64(version^d.seed)), &other)
		r.K, r.C = other.K, other.C
	}
	return r.Encode(dst)
}

// MeanRowBytes is the mean logical size (key and value) of the rows of data
// set name, from the first sample rows: what a data size is divided by to
// get a table size (strata bench sweep --param table-size with sizes given
// as multiples of the memory).
func MeanRowBytes(name string, seed uint64, sample int) (float64, error) {
	ds, err := NewDataset(name, seed, int64(max(sample, 1)))
	if err != nil {
		return 0, err
	}
	var k, v []byte
	total := 0
	for id := 0; id < sample; id++ {
		k, v = ds.AppendKey(k[:0], uint64(id)), ds.AppendValue(v[:0], uint64(id), 0)
		total += len(k) + len(v)
	}
	return float64(total) / float64(max(sample, 1)), nil
}

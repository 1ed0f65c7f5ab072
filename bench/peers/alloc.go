package peers

import (
	"io/fs"
	"path/filepath"
)

// AllocatedBytes is the space the files under dir occupy on the device
// (st_blocks where the system reports it), not their apparent size: Badger
// preallocates sparse value log and memtable files (2 GiB and
// 2×MemTableSize apparent), bbolt grows its file ahead of use, and Pebble
// preallocates and recycles WAL files, so apparent sizes misstate them.
func AllocatedBytes(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += fileAllocated(info)
		return nil
	})
	return total, err
}

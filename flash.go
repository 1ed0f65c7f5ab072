package strata

import (
	"encoding/binary"
	"fmt"

	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/flashcache"
)

// The flash cache's wiring (Options.FlashCache): it is opened after the
// page store and before the buffer pool, which sees the page store through
// it (flashcache.Store: misses try the flash first, writes and frees
// invalidate it, evicted clean pages are offered to it); it is closed
// after the pool, cleanly if the pool wrote back and synced every page.
// A database opened without a flash cache detaches the last one it had
// (its marker file goes), so that no flash file is trusted after pages
// changed without it. The cache is closed in the state of the final
// checkpoint and opened in the state of the meta page it finds (read from
// the page store itself), and it is warm only if they agree: a binary
// built before the flash cache, which leaves the marker, changes that
// state with every checkpoint.
//
// Lock rules: none of its own; openFlash and closePool run within Open and
// Close, alone.

// flashOptions are the flash cache's options for a store of pageSize
// pages in dir.
func (o *Options) flashOptions(pageSize int, dir string) flashcache.Options {
	fo := flashcache.Options{
		Path:     o.FlashCache.Path,
		Size:     o.FlashCache.Size,
		Format:   o.FlashCache.Format,
		FS:       o.flashFS,
		PageSize: pageSize,
		DBFS:     o.fs,
		DBDir:    dir,
		Logger:   o.Logger,
	}
	if fo.FS == nil {
		fo.FS = o.fs
	}
	// The queue, the write buffer and the readers scale with the cache
	// (their memory is part of it): a 32nd of it each at most, within
	// the flash cache's defaults.
	fo.QueueBytes = int(min(max(o.CacheSize/32, int64(8*pageSize)), flashcache.DefaultQueueBytes))
	fo.WriteUnit = int(min(max(o.CacheSize/32, int64(2*pageSize)), flashcache.DefaultWriteUnit)) &^ (4096 - 1)
	fo.Readers = int(min(max(o.CacheSize/int64(64*(pageSize+8192)), 4), flashcache.DefaultReaders))
	if o.flashTune != nil {
		o.flashTune(&fo)
	}
	return fo
}

// poolOptionsFor are the buffer pool's options for pageSize pages: the
// budget is CacheSize less the flash cache's memory.
func (o *Options) poolOptionsFor(pageSize int) bufferpool.Options {
	po := o.poolOptions()
	if o.FlashCache.Path != "" {
		po.CacheSize -= o.flashOptions(pageSize, "").MemoryBytes()
	}
	return po
}

// openFlash opens the flash cache, or detaches the last one. Both may
// sync the database's directory (the marker's entry), which makes every
// entry in it durable, the store's new segment files too: the store is
// synced first, so that none is durable before its header (a crash while
// a new database was being created left a segment file without a header,
// which the store then refused to open).
func (db *DB) openFlash() error {
	if err := db.store.Sync(); err != nil {
		return fmt.Errorf("strata: sync the page store: %w", err)
	}
	if db.opts.FlashCache.Path == "" {
		if err := flashcache.Detach(db.opts.fs, db.dir); err != nil {
			return fmt.Errorf("strata: %w", err)
		}
		return nil
	}
	fo := db.opts.flashOptions(db.store.PageSize(), db.dir)
	fo.DBState = db.storedState()
	if mem := fo.MemoryBytes(); mem > db.opts.CacheSize/2 {
		return fmt.Errorf("strata: a flash cache of %d bytes needs %d bytes of memory, over half the cache size %d", fo.Size, mem, db.opts.CacheSize)
	}
	fc, err := flashcache.Open(fo)
	if err != nil {
		return fmt.Errorf("strata: %w", err)
	}
	db.flash = fc
	return nil
}

// flashState is the flash cache's name for the database state of a
// checkpoint of transaction txid with the tree at root.
func flashState(txid, root uint64) flashcache.DBState {
	var s flashcache.DBState
	binary.LittleEndian.PutUint64(s[0:], txid+1) // never the zero (unknown) state
	binary.LittleEndian.PutUint64(s[8:], root)
	return s
}

// storedState is the state of the meta page in the page store, read from
// the store itself (the pool would read it through the flash cache): zero
// (unknown) for a new database or a meta page that cannot be read (Open
// then fails on it through the pool).
func (db *DB) storedState() flashcache.DBState {
	if db.store.Stats().LivePages == 0 {
		return flashcache.DBState{}
	}
	page := make([]byte, db.store.PageSize())
	if err := db.store.ReadPage(0, page); err != nil {
		return flashcache.DBState{}
	}
	m, err := decodeMeta(page)
	if err != nil {
		return flashcache.DBState{}
	}
	return flashState(m.txid, m.root)
}

// poolStore is the store the buffer pool sees.
func (db *DB) poolStore() bufferpool.Store {
	if db.flash == nil {
		return db.store
	}
	return flashcache.Wrap(db.store, db.flash)
}

// closePool closes the buffer pool, then the flash cache: cleanly (it
// stays warm) if the pool wrote back and synced every page, no commit
// failed half-way and the final checkpoint was written (db.flashState).
func (db *DB) closePool() error {
	err := db.pool.Close()
	if db.flash != nil {
		if ferr := db.flash.Close(err == nil && db.failed == nil, db.flashState); err == nil {
			err = ferr
		}
	}
	return err
}

// flashStats are the flash cache's statistics (zero without one).
func (db *DB) flashStats() flashcache.Stats {
	if db.flash == nil {
		return flashcache.Stats{}
	}
	return db.flash.Stats()
}

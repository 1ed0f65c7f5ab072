package strata

import (
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
// changed without it.
//
// Lock rules: none of its own; openFlash and closePool run within Open and
// Close, alone.

// flashOptions are the flash cache's options for a store of pageSize
// pages in dir.
func (o *Options) flashOptions(pageSize int, dir string) flashcache.Options {
	fo := flashcache.Options{
		Path:     o.FlashCache.Path,
		Size:     o.FlashCache.Size,
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

// poolStore is the store the buffer pool sees.
func (db *DB) poolStore() bufferpool.Store {
	if db.flash == nil {
		return db.store
	}
	return flashcache.Wrap(db.store, db.flash)
}

// closePool closes the buffer pool, then the flash cache: cleanly (it
// stays warm) if the pool wrote back and synced every page and no commit
// failed half-way.
func (db *DB) closePool() error {
	err := db.pool.Close()
	if db.flash != nil {
		if ferr := db.flash.Close(err == nil && db.failed == nil); err == nil {
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

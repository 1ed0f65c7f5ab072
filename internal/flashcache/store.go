package flashcache

import (
	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
)

// The store the buffer pool sees: the page store with the flash cache in
// front of its reads. A miss of the pool (ReadImage) tries the flash, then
// the page store; every write and free invalidates the page's image first
// (no I/O); the pool's evictions of clean pages are offered to the cache
// (bufferpool.EvictionSink). Everything else passes through.
//
// Lock rules: none of its own; see cache.go.

// Inner is what Store needs of the page store: bufferpool.Store, the
// image-returning write the pool uses, and the store's statistics.
type Inner interface {
	PageSize() int
	Codec() codec.Codec
	ReadImage(id pagestore.PageID, dst []byte) (pagestore.Image, error)
	WritePage(id pagestore.PageID, page []byte) (codec.ID, int, error)
	WritePageImage(id pagestore.PageID, page []byte, c codec.Codec, dst []byte) (pagestore.Image, error)
	Free(id pagestore.PageID) error
	Allocate() (pagestore.PageID, error)
	Release(id pagestore.PageID)
	Sync() error
	Stats() pagestore.Stats
	// WithDictionary returns the codec to compress with in place of c
	// (pagestore.Store.WithDictionary).
	WithDictionary(c codec.Codec) codec.Codec
}

// Store wraps a page store with a flash cache.
type Store struct {
	Inner
	c *Cache
}

// Wrap returns inner with c in front of its reads.
func Wrap(inner Inner, c *Cache) *Store { return &Store{Inner: inner, c: c} }

// Cache is the flash cache.
func (s *Store) Cache() *Cache { return s.c }

// ReadImage returns page id's image from the flash cache if it holds a
// valid one, else from the page store.
func (s *Store) ReadImage(id pagestore.PageID, dst []byte) (pagestore.Image, error) {
	if img, ok := s.c.Read(id, dst); ok {
		return img, nil
	}
	return s.Inner.ReadImage(id, dst)
}

// WritePage invalidates the page's cached image and writes it.
func (s *Store) WritePage(id pagestore.PageID, page []byte) (codec.ID, int, error) {
	s.c.Invalidate(id)
	return s.Inner.WritePage(id, page)
}

// WritePageImage invalidates the page's cached image and writes it.
func (s *Store) WritePageImage(id pagestore.PageID, page []byte, c codec.Codec, dst []byte) (pagestore.Image, error) {
	s.c.Invalidate(id)
	return s.Inner.WritePageImage(id, page, c, dst)
}

// Free invalidates the page's cached image and frees it.
func (s *Store) Free(id pagestore.PageID) error {
	s.c.Invalidate(id)
	return s.Inner.Free(id)
}

// WantsEvicted implements bufferpool.EvictionSink.
func (s *Store) WantsEvicted(id pagestore.PageID, n int) bool { return s.c.WantsEvicted(id, n) }

// OfferEvicted implements bufferpool.EvictionSink.
func (s *Store) OfferEvicted(id pagestore.PageID, c codec.ID, data []byte, frame bool) {
	s.c.OfferEvicted(id, c, data, frame)
}

package pagestore

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/vfs"
)

// PageID identifies a logical page.
type PageID uint64

// MaxPageID is the largest valid page id. The page map is a flat array of
// 12-byte entries, so ids must stay dense; 2^32-1 pages of 4 KiB is 16 TiB.
const MaxPageID = 1<<32 - 1

// Errors returned by the Store. Callers test for them with errors.Is.
var (
	// ErrNotFound: the page was never written or has been freed.
	ErrNotFound = errors.New("pagestore: page not found")
	// ErrCorrupt: stored bytes failed verification. The wrapping error
	// names the file and offset.
	ErrCorrupt = errors.New("pagestore: corrupt data")
	// ErrClosed: the store has been closed.
	ErrClosed = errors.New("pagestore: closed")
	// ErrPageSize: a store was opened with a page size other than the one
	// it was created with, or a buffer has the wrong length.
	ErrPageSize = errors.New("pagestore: page size mismatch")
)

const lockName = "LOCK"

// Image is a stored page image as read from disk, not decompressed: what the
// buffer pool keeps in its compressed tier.
type Image struct {
	Codec codec.ID // codec of Data; codec.None means Data is the raw page
	Seq   uint64   // sequence number of the record
	Data  []byte   // the stored bytes; aliases the caller's buffer
}

// Store is a compressed, log-structured page store. It is safe for
// concurrent use.
type Store struct {
	dir      string
	opts     Options
	fs       vfs.FS
	log      *slog.Logger
	codec    codec.Codec
	pageSize int
	lock     io.Closer

	// syncMu serializes Sync; ckptMu serializes checkpoints; cleanMu
	// serializes cleaning passes (each pass checkpoints, so it takes
	// cleanMu then ckptMu).
	syncMu  sync.Mutex
	ckptMu  sync.Mutex
	cleanMu sync.Mutex

	// mu guards everything below it. Readers hold it shared only to look
	// up a location and pin a segment; the disk read happens outside it.
	mu         sync.RWMutex
	closed     bool
	closing    bool  // Close is under way
	failed     error // sticky write-path error: the log's state on disk is unknown
	pmap       pageMap
	segs       map[uint32]*segment
	head       *segment
	buf        []byte // write buffer, BlockSize aligned; buf[0] is at file offset bufOff of head
	bufOff     int64
	bufLen     int
	nextSeq    uint64
	nextSegNum uint32
	dirDirty   bool     // a segment file was created since the last directory sync
	freeIDs    []PageID // ids to hand out again, each at most once (see isFree)
	isFree     bitset   // ids in freeIDs
	nextID     PageID
	sinceCkpt  int64 // log bytes appended since the last checkpoint
	ckptBytes  int64 // size of the checkpoint file

	direct       atomic.Bool
	directWarned bool      // guarded by mu
	scratch      sync.Pool // *[]byte, aligned read buffers
	compBufs     sync.Pool // *[]byte, compression buffers
	stats        counters

	bgStop chan struct{}
	bgKick chan struct{}
	bgDone chan struct{}
}

// Open opens the store in dir, creating it if it does not exist, and
// recovers it after a crash: it loads the last checkpoint and replays the
// log written after it, dropping a torn tail.
func Open(dir string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	fs := opts.FS
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pagestore: create %s: %w", dir, err)
	}
	lock, err := fs.Lock(filepath.Join(dir, lockName))
	if err != nil {
		return nil, fmt.Errorf("pagestore: lock %s: %w", dir, err)
	}
	s := &Store{
		dir:    dir,
		opts:   opts,
		fs:     fs,
		log:    opts.Logger,
		codec:  opts.Codec,
		lock:   lock,
		segs:   make(map[uint32]*segment),
		bgStop: make(chan struct{}),
		bgKick: make(chan struct{}, 1),
		bgDone: make(chan struct{}),
	}
	if err := s.recover(); err != nil {
		s.closeFiles()
		lock.Close()
		return nil, err
	}
	s.scratch.New = func() any {
		b := vfs.AlignedBuffer(s.pageSize + recordHeaderSize + 2*vfs.BlockSize)
		return &b
	}
	s.compBufs.New = func() any {
		b := make([]byte, 0, 2*s.pageSize+64)
		return &b
	}
	if opts.DisableBackground {
		close(s.bgDone)
	} else {
		go s.background()
	}
	return s, nil
}

// PageSize is the store's logical page size.
func (s *Store) PageSize() int { return s.pageSize }

// ForEachPage calls fn with the id of every page in the store, in
// increasing order. It works on a snapshot of the ids, so fn may call the
// store.
func (s *Store) ForEachPage(fn func(PageID) error) error {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	var ids []PageID
	for id, e := range s.pmap.entries {
		if e.present() {
			ids = append(ids, PageID(id))
		}
	}
	s.mu.RUnlock()
	for _, id := range ids {
		if err := fn(id); err != nil {
			return err
		}
	}
	return nil
}

// Codec is the codec new pages are written with.
func (s *Store) Codec() codec.Codec { return s.codec }

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// DirectIO reports whether segment files are read and written with direct I/O.
func (s *Store) DirectIO() bool { return s.direct.Load() }

// Allocate returns a page id that is not in use: a freed id if there is one,
// else the next id after the largest in use. The id is reserved only in
// memory; it becomes a page when WritePage is called with it.
func (s *Store) Allocate() (PageID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	for len(s.freeIDs) > 0 {
		id := s.freeIDs[len(s.freeIDs)-1]
		s.freeIDs = s.freeIDs[:len(s.freeIDs)-1]
		s.isFree.clear(uint64(id))
		if !s.pmap.get(id).present() {
			return id, nil
		}
	}
	if s.nextID > MaxPageID {
		return 0, fmt.Errorf("pagestore: page ids exhausted")
	}
	id := s.nextID
	s.nextID++
	return id, nil
}

// WritePage compresses page (exactly PageSize bytes) with the store's codec
// and appends it as the new version of page id. It is durable after the next
// Sync. It returns the codec the page was stored with (codec.None when
// compression did not save at least 1/8) and the stored length.
func (s *Store) WritePage(id PageID, page []byte) (codec.ID, int, error) {
	bp := s.compBufs.Get().(*[]byte)
	defer s.compBufs.Put(bp)
	img, err := s.WritePageImage(id, page, nil, (*bp)[:0])
	if cap(img.Data) > cap(*bp) {
		*bp = img.Data[:0]
	}
	if err != nil {
		return 0, 0, err
	}
	return img.Codec, len(img.Data), nil
}

// WritePageImage is WritePage with the codec chosen by the caller (nil: the
// store's) and the stored image returned: page is compressed into dst's
// storage, appended, and the image (Codec and Data, aliasing dst; Seq is not
// set) is what a later ReadImage of this version returns. The buffer pool keeps it
// as the page's compressed image, so demoting the page later compresses
// nothing. Pages of any codec are read back alike (the codec is per record).
func (s *Store) WritePageImage(id PageID, page []byte, c codec.Codec, dst []byte) (Image, error) {
	if len(page) != s.pageSize {
		return Image{}, fmt.Errorf("pagestore: write page %d: %w: got %d bytes, page size is %d", id, ErrPageSize, len(page), s.pageSize)
	}
	if id > MaxPageID {
		return Image{}, fmt.Errorf("pagestore: write page %d: id out of range", id)
	}
	if c == nil {
		c = s.codec
	}
	start := time.Now()
	img, used, err := codec.EncodePage(c, dst[:0], page)
	if err != nil {
		return Image{}, fmt.Errorf("pagestore: compress page %d with %s: %w", id, c, err)
	}
	if int(c.ID()) < len(s.stats.codec) && c.ID() != codec.None {
		s.stats.codec[c.ID()].compress(time.Since(start), len(page), len(img), used != codec.None)
	}
	if err := s.append(kindPage, id, used, img, uint32(len(page)), nil); err != nil {
		return Image{Data: img[:0]}, fmt.Errorf("pagestore: write page %d: %w", id, err)
	}
	s.stats.callerBytes.Add(int64(len(page)))
	s.stats.pagesWritten.Add(1)
	return Image{Codec: used, Data: img}, nil
}

// Release returns id, obtained from Allocate but never written, for reuse.
// It does nothing if the page exists.
func (s *Store) Release(id PageID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed && id < s.nextID && !s.pmap.get(id).present() {
		s.pushFreeID(id)
	}
}

// Free deletes page id. Reading it afterwards returns ErrNotFound. Like a
// write, the free is durable after the next Sync.
func (s *Store) Free(id PageID) error {
	s.mu.RLock()
	present := !s.closed && s.pmap.get(id).present()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if !present {
		return fmt.Errorf("pagestore: free page %d: %w", id, ErrNotFound)
	}
	if err := s.append(kindFree, id, codec.None, nil, 0, nil); err != nil {
		return fmt.Errorf("pagestore: free page %d: %w", id, err)
	}
	s.stats.pagesFreed.Add(1)
	return nil
}

// append adds one record to the log and points the page map at it. If
// expect is non-nil the record is a relocation by the cleaner, and it is
// appended only if the page still lives at *expect.
func (s *Store) append(kind uint8, id PageID, c codec.ID, payload []byte, rawLen uint32, expect *location) error {
	crc := payloadCRC(payload)
	recLen := recordHeaderSize + len(payload)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.failed != nil {
		return s.failed
	}
	if expect != nil && s.pmap.get(id) != *expect {
		return errStale
	}
	if kind == kindFree && !s.pmap.get(id).present() {
		return ErrNotFound
	}
	if s.head.size+int64(recLen) > s.opts.SegmentSize {
		if err := s.rollover(); err != nil {
			return s.fail(err)
		}
	}
	if s.bufLen+recLen > len(s.buf) {
		if err := s.flushBuffer(false); err != nil {
			return s.fail(err)
		}
	}
	off := s.head.size
	h := recordHeader{pageID: id, seq: s.nextSeq, rawLen: rawLen, storedLen: uint32(len(payload)), codec: c, kind: kind}
	s.nextSeq++
	rec := s.buf[s.bufLen : s.bufLen+recLen]
	encodeRecordHeader(rec, &h, crc)
	copy(rec[recordHeaderSize:], payload)
	s.bufLen += recLen
	s.head.size += int64(recLen)
	s.sinceCkpt += int64(recLen)

	var old location
	if kind == kindPage {
		old = s.pmap.set(id, location{seg: s.head.num, off: uint32(off), len: uint32(recLen)})
		s.head.live += int64(recLen)
		if id >= s.nextID {
			s.nextID = id + 1
		}
	} else {
		old = s.pmap.remove(id)
		s.pushFreeID(id)
	}
	if old.present() {
		s.segs[old.seg].live -= int64(old.len)
	}
	return nil
}

var errStale = errors.New("pagestore: page moved")

// pushFreeID makes id available to Allocate, once however often it is freed.
// Called with mu held.
func (s *Store) pushFreeID(id PageID) {
	if !s.isFree.get(uint64(id)) {
		s.isFree.set(uint64(id))
		s.freeIDs = append(s.freeIDs, id)
	}
}

// bitset is a growable set of small integers.
type bitset []uint64

func (b bitset) get(i uint64) bool { return i/64 < uint64(len(b)) && b[i/64]&(1<<(i%64)) != 0 }

func (b *bitset) set(i uint64) {
	for i/64 >= uint64(len(*b)) {
		*b = append(*b, 0)
	}
	(*b)[i/64] |= 1 << (i % 64)
}

func (b bitset) clear(i uint64) {
	if i/64 < uint64(len(b)) {
		b[i/64] &^= 1 << (i % 64)
	}
}

// fail records a write-path error. After a failed write or sync the state
// of the log on disk is unknown (an fsync error may have dropped dirty
// pages), so the store refuses further writes rather than risk acknowledging
// data it cannot make durable; reopening recovers to the last durable state.
// Called with mu held.
func (s *Store) fail(err error) error {
	if s.failed == nil {
		s.failed = fmt.Errorf("pagestore: store failed, reopen to recover: %w", err)
		s.log.Error("pagestore: write path failed; store is read-only until reopened", "dir", s.dir, "err", err)
	}
	return s.failed
}

// flushBuffer writes the buffer's whole blocks to the head segment. With pad
// it first zero-pads the partial last block, so the whole buffer is written
// and the next record starts on a fresh block. Called with mu held.
func (s *Store) flushBuffer(pad bool) error {
	n := s.bufLen &^ (vfs.BlockSize - 1)
	if pad && s.bufLen > n {
		n += vfs.BlockSize
		clear(s.buf[s.bufLen:n])
		s.bufLen = n
		s.head.size = s.bufOff + int64(n)
	}
	if n == 0 {
		return nil
	}
	if _, err := s.head.f.WriteAt(s.buf[:n], s.bufOff); err != nil {
		return fmt.Errorf("write segment %s at offset %d: %w", s.head.path, s.bufOff, err)
	}
	s.stats.fileBytes.Add(int64(n))
	rest := s.bufLen - n
	if rest > 0 {
		copy(s.buf, s.buf[n:s.bufLen])
	}
	s.bufLen = rest
	s.bufOff += int64(n)
	return nil
}

// rollover seals the head segment (padded, written and synced, so that
// every segment but the newest is wholly durable, which recovery relies on)
// and starts a new one. Called with mu held.
func (s *Store) rollover() error {
	if err := s.flushBuffer(true); err != nil {
		return err
	}
	if err := s.head.f.Sync(); err != nil {
		return fmt.Errorf("sync segment %s: %w", s.head.path, err)
	}
	return s.newHead()
}

// newHead creates the next segment file and makes it the head. Called with
// mu held (or during Open).
func (s *Store) newHead() error {
	num := s.nextSegNum
	if num == 0 || num == ^uint32(0) {
		return errors.New("segment numbers exhausted")
	}
	path := segmentPath(s.dir, num)
	f, err := s.fs.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644, vfs.OpenOptions{Direct: !s.opts.DisableDirectIO})
	if err != nil {
		return fmt.Errorf("create segment %s: %w", path, err)
	}
	s.nextSegNum++
	s.noteDirect(f)
	seg := &segment{num: num, path: path, f: f, size: segmentHeaderSize}
	seg.refs.Store(1)
	s.segs[num] = seg
	s.head = seg
	s.bufOff, s.bufLen = 0, segmentHeaderSize
	encodeSegmentHeader(s.buf, s.pageSize, num)
	s.dirDirty = true
	return nil
}

// noteDirect records whether direct I/O is in effect and says so once when
// the file system refused it.
func (s *Store) noteDirect(f vfs.File) {
	s.direct.Store(f.Direct())
	if !s.opts.DisableDirectIO && !f.Direct() && !s.directWarned {
		s.directWarned = true
		s.log.Warn("pagestore: file system refused direct I/O; using buffered I/O", "file", f.Name())
	}
}

// Sync makes every page written and freed before the call durable.
func (s *Store) Sync() error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.failed != nil {
		s.mu.Unlock()
		return s.failed
	}
	if err := s.flushBuffer(true); err != nil {
		err = s.fail(err)
		s.mu.Unlock()
		return err
	}
	head := s.head
	head.pin()
	dirDirty := s.dirDirty
	s.dirDirty = false
	s.mu.Unlock()
	defer head.unpin()

	// The fsync runs without mu so that reads and appends (to the part of
	// the buffer after the padded block) go on meanwhile.
	err := head.f.Sync()
	if err == nil && dirDirty {
		err = s.fs.SyncDir(s.dir)
	}
	if err != nil {
		s.mu.Lock()
		err = s.fail(fmt.Errorf("sync segment %s: %w", head.path, err))
		s.mu.Unlock()
		return err
	}
	s.stats.syncs.Add(1)
	return nil
}

// ReadPage reads page id into dst, which must be PageSize bytes, verifying
// its checksum and decompressing it.
func (s *Store) ReadPage(id PageID, dst []byte) error {
	if len(dst) != s.pageSize {
		return fmt.Errorf("pagestore: read page %d: %w: buffer of %d bytes, page size is %d", id, ErrPageSize, len(dst), s.pageSize)
	}
	sp := s.scratch.Get().(*[]byte)
	defer s.scratch.Put(sp)
	h, payload, loc, err := s.readRecord(id, *sp)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := codec.Decompress(h.codec, dst, payload); err != nil {
		return fmt.Errorf("pagestore: page %d: segment %s offset %d: %w: %w", id, segmentFileName(loc.seg), loc.off, ErrCorrupt, err)
	}
	s.stats.codec[h.codec].decompress(time.Since(start))
	return nil
}

// ReadImage returns page id's stored image without decompressing it. The
// image's Data is copied into dst (grown if too small).
func (s *Store) ReadImage(id PageID, dst []byte) (Image, error) {
	sp := s.scratch.Get().(*[]byte)
	defer s.scratch.Put(sp)
	h, payload, _, err := s.readRecord(id, *sp)
	if err != nil {
		return Image{}, err
	}
	return Image{Codec: h.codec, Seq: h.seq, Data: append(dst[:0], payload...)}, nil
}

// DecompressImage decodes img into dst (PageSize bytes), timing it like a
// read, for callers that keep images and decompress them later.
func (s *Store) DecompressImage(img Image, dst []byte) error {
	start := time.Now()
	if err := codec.Decompress(img.Codec, dst, img.Data); err != nil {
		return fmt.Errorf("pagestore: decompress image: %w: %w", ErrCorrupt, err)
	}
	s.stats.codec[img.Codec].decompress(time.Since(start))
	return nil
}

// readRecord finds page id's record, reads it into scratch and verifies it.
func (s *Store) readRecord(id PageID, scratch []byte) (recordHeader, []byte, location, error) {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return recordHeader{}, nil, location{}, ErrClosed
	}
	loc := s.pmap.get(id)
	if !loc.present() {
		s.mu.RUnlock()
		return recordHeader{}, nil, loc, fmt.Errorf("pagestore: read page %d: %w", id, ErrNotFound)
	}
	seg := s.segs[loc.seg]
	var rec []byte
	var err error
	start := time.Now()
	if seg == s.head && int64(loc.off)+int64(loc.len) > s.bufOff {
		// Some or all of the record is still in the write buffer. Copy
		// it out under the lock; this is rare (only the newest records).
		rec, err = s.readBuffered(loc, scratch)
		s.mu.RUnlock()
		s.stats.bufferReads.Add(1)
	} else {
		seg.pin()
		s.mu.RUnlock()
		rec, err = readAligned(seg.f, scratch, int64(loc.off), int(loc.len))
		seg.unpin()
		s.stats.diskRead(time.Since(start))
	}
	if err != nil {
		return recordHeader{}, nil, loc, fmt.Errorf("pagestore: read page %d: segment %s offset %d: %w", id, seg.path, loc.off, err)
	}
	h, payload, err := decodeRecord(rec, s.pageSize)
	if err == nil && (h.pageID != id || h.kind != kindPage) {
		err = fmt.Errorf("record belongs to page %d (kind %d)", h.pageID, h.kind)
	}
	if err != nil {
		return recordHeader{}, nil, loc, fmt.Errorf("pagestore: read page %d: segment %s offset %d: %w: %v", id, seg.path, loc.off, ErrCorrupt, err)
	}
	s.stats.pagesRead.Add(1)
	return h, payload, loc, nil
}

// readBuffered assembles a record that ends in the write buffer: the part
// before bufOff (if any) is on disk, the rest in the buffer. Called with mu
// held for reading.
func (s *Store) readBuffered(loc location, scratch []byte) ([]byte, error) {
	off, n := int64(loc.off), int64(loc.len)
	if off >= s.bufOff {
		rec := scratch[:n]
		copy(rec, s.buf[off-s.bufOff:off-s.bufOff+n])
		return rec, nil
	}
	// Straddling: bufOff is block aligned, so read [aligned(off), bufOff)
	// from the file and append the buffer's part right after it.
	start := off &^ (vfs.BlockSize - 1)
	onDisk := s.bufOff - start
	if _, err := s.head.f.ReadAt(scratch[:onDisk], start); err != nil {
		return nil, err
	}
	inBuf := off + n - s.bufOff
	copy(scratch[onDisk:onDisk+inBuf], s.buf[:inBuf])
	return scratch[off-start : off-start+n], nil
}

// Close stops the background work, writes a final checkpoint (so that the
// next Open replays nothing) and closes the files. Further calls, and calls
// concurrent with it, return ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed || s.closing {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closing = true
	s.mu.Unlock()
	select {
	case <-s.bgDone:
	default:
		close(s.bgStop)
		<-s.bgDone
	}
	err := s.checkpoint(true)
	// Wait for a cleaning pass or checkpoint started before Close.
	s.cleanMu.Lock()
	s.ckptMu.Lock()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.ckptMu.Unlock()
	s.cleanMu.Unlock()
	if cerr := s.closeFiles(); err == nil {
		err = cerr
	}
	if lerr := s.lock.Close(); err == nil && lerr != nil {
		err = fmt.Errorf("pagestore: release lock: %w", lerr)
	}
	return err
}

// closeFiles takes the segments out of the table under the lock and
// releases the table's references (a file closes when its last reader is
// done). It returns the first error closing a file.
func (s *Store) closeFiles() error {
	s.mu.Lock()
	segs := s.segs
	s.segs = make(map[uint32]*segment)
	s.head = nil
	s.mu.Unlock()
	var err error
	for _, seg := range segs {
		if e := seg.unpin(); err == nil && e != nil {
			err = fmt.Errorf("pagestore: close segment %s: %w", seg.path, e)
		}
	}
	return err
}

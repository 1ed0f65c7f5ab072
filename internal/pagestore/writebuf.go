package pagestore

import (
	"errors"
	"fmt"

	"github.com/stratadb/strata/internal/vfs"
)

// Write buffers: how appended records reach the segment files.
//
// Each stream's head segment has a current buffer that appends copy records
// into under Store.mu (a memcpy). When it is full, when the segment rolls
// over and when Sync runs, the buffer is sealed: moved, whole blocks only,
// to the pending queue, and the stream gets a fresh buffer (holding the
// partial last block, if any, so that no block is written twice). The
// goroutine that sealed it then writes the pending buffers, oldest first,
// up to its own, holding ioMu but not mu: appends and reads go on during
// the write. A buffer stays in the queue, readable, until its write is
// done; readers copy records not yet in the file out of the buffers.
//
// Order: ioMu makes the writes happen in seal order, so the bytes of a
// segment reach the file from front to back and a segment's last buffer is
// written and fsynced (sealing it for recovery: every segment but a
// stream's newest is whole) before any buffer sealed after it is written.
//
// Locks: the buffers' contents, the queue and the segments' written and
// synced fields are guarded by Store.mu; a pending buffer's bytes do not
// change, so the writer reads them without it.

// maxPendingBuffers bounds the sealed buffers waiting for I/O; an append
// that must seal one more waits (Store.ioDone). Sync may exceed it by one
// buffer per stream.
const maxPendingBuffers = 4

// maxSpareBuffers bounds the written buffers kept for reuse. A seal needs
// one fresh buffer, and the goroutine that sealed it writes it back before
// it seals again, so one spare serves a steady stream of seals; the extra
// buffers a burst of concurrent seals needed (up to maxPendingBuffers, of
// WriteBufferSize each, 1 MiB by default) are left to the collector rather
// than kept on the heap for the life of the store.
const maxSpareBuffers = 1

// wbuf holds the bytes of one segment from file offset off on.
type wbuf struct {
	seg   *segment
	id    uint64 // seal order, from 1; 0 while it is a stream's current buffer
	off   int64  // file offset of data[0]; block aligned
	n     int    // bytes of data in use
	data  []byte // BlockSize aligned, WriteBufferSize long
	final bool   // the segment's last buffer: fsync the segment after writing it
}

// stream is one head of the log: the segment appended to and its current
// buffer.
type stream struct {
	head *segment
	cur  *wbuf
}

// getBuffer returns an empty buffer for seg's bytes from off. Called with mu
// held.
func (s *Store) getBuffer(seg *segment, off int64) *wbuf {
	var b *wbuf
	if n := len(s.spareBufs); n > 0 {
		b = s.spareBufs[n-1]
		s.spareBufs = s.spareBufs[:n-1]
	} else {
		b = &wbuf{data: vfs.AlignedBuffer(s.opts.WriteBufferSize)}
	}
	*b = wbuf{seg: seg, off: off, data: b.data}
	return b
}

// sealBuffer moves the stream's current buffer to the pending queue and
// gives the stream a fresh one. With pad it zero-pads the partial last
// block first, so the next record starts on a fresh block (Sync, rollover);
// with final the segment is complete: it gets no fresh buffer, and the
// writer fsyncs the segment after the buffer. It returns the sealed buffer's
// id. Called with mu held.
func (s *Store) sealBuffer(streamID int, pad, final bool) uint64 {
	st := &s.streams[streamID]
	b, seg := st.cur, st.head
	if pad && b.n%vfs.BlockSize != 0 {
		n := (b.n + vfs.BlockSize - 1) &^ (vfs.BlockSize - 1)
		clear(b.data[b.n:n])
		seg.size += int64(n - b.n)
		b.n = n
	}
	whole := b.n &^ (vfs.BlockSize - 1)
	if final {
		seg.sealed = true
		st.cur = nil
	} else {
		next := s.getBuffer(seg, b.off+int64(whole))
		next.n = copy(next.data, b.data[whole:b.n])
		st.cur = next
	}
	b.n = whole
	b.final = final
	s.lastSealed++
	b.id = s.lastSealed
	s.pending = append(s.pending, b)
	return b.id
}

// writeSealed writes the pending buffers, oldest first, until the one with
// id upTo has been written (by this or another goroutine). It takes ioMu, and
// mu only between writes.
func (s *Store) writeSealed(upTo uint64) error {
	s.ioMu.Lock()
	defer s.ioMu.Unlock()
	for {
		s.mu.Lock()
		if s.lastIO >= upTo {
			s.mu.Unlock()
			return nil
		}
		if s.failed != nil || s.closed || len(s.pending) == 0 {
			err := s.failed
			if err == nil {
				err = ErrClosed
			}
			s.mu.Unlock()
			return err
		}
		b := s.pending[0]
		b.seg.pin()
		s.mu.Unlock()

		err := s.writeBuffer(b)
		b.seg.unpin()

		s.mu.Lock()
		if err != nil {
			err = s.fail(err)
			s.mu.Unlock()
			return err
		}
		copy(s.pending, s.pending[1:])
		s.pending[len(s.pending)-1] = nil
		s.pending = s.pending[:len(s.pending)-1]
		b.seg.written = b.off + int64(b.n)
		if b.final {
			b.seg.synced = b.seg.size
		}
		s.lastIO = b.id
		b.seg = nil
		if len(s.spareBufs) < maxSpareBuffers {
			s.spareBufs = append(s.spareBufs, b)
		}
		s.ioDone.Broadcast()
		s.mu.Unlock()
	}
}

// writeBuffer writes b to its segment file, and fsyncs the file if b is the
// segment's last buffer. Called with ioMu held, mu not held.
func (s *Store) writeBuffer(b *wbuf) error {
	seg := b.seg
	if b.n > 0 {
		if _, err := seg.f.WriteAt(b.data[:b.n], b.off); err != nil {
			return fmt.Errorf("write segment %s at offset %d: %w", seg.path, b.off, err)
		}
		s.stats.fileBytes.Add(int64(b.n))
	}
	if b.final {
		if err := seg.f.Sync(); err != nil {
			return fmt.Errorf("sync segment %s: %w", seg.path, err)
		}
	}
	return nil
}

// readBuffered copies the part of a record that is beyond seg.written
// (not yet in the file) out of the segment's pending buffers and its
// stream's current buffer into scratch, which is BlockSize aligned. If the
// record starts before written, the caller must then read the file's part,
// [fileFrom, seg.written at the call), into scratch[:onDisk]: readBuffered
// leaves that room. It returns the record's place in scratch. Called with mu
// held for reading.
func (s *Store) readBuffered(seg *segment, loc location, scratch []byte) (rec []byte, fileFrom int64, onDisk int, err error) {
	off, end := int64(loc.off), int64(loc.off)+int64(loc.len)
	base := off // file offset of scratch[0]
	if off < seg.written {
		// written is block aligned: the file's part is [aligned(off), written).
		base = off &^ (vfs.BlockSize - 1)
		onDisk = int(seg.written - base)
	}
	covered := max(off, seg.written)
	fill := func(b *wbuf) {
		lo, hi := max(b.off, covered), min(b.off+int64(b.n), end)
		if b.seg == seg && lo == covered && lo < hi {
			copy(scratch[lo-base:hi-base], b.data[lo-b.off:hi-b.off])
			covered = hi
		}
	}
	for _, b := range s.pending {
		fill(b)
	}
	if st := &s.streams[seg.stream]; st.head == seg && st.cur != nil {
		fill(st.cur)
	}
	if covered < end {
		return nil, 0, 0, errors.New("record not found in the write buffers")
	}
	return scratch[off-base : end-base], base, onDisk, nil
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
		err := s.failed
		s.mu.Unlock()
		return err
	}
	upTo := s.lastSealed
	type target struct {
		seg  *segment
		size int64
	}
	var heads []target
	for i := range s.streams {
		st := &s.streams[i]
		if st.head == nil || (st.cur.n == 0 && st.head.synced >= st.head.size) {
			continue
		}
		if st.cur.n > 0 {
			upTo = s.sealBuffer(i, true, false)
		}
		st.head.pin()
		heads = append(heads, target{st.head, st.head.size})
	}
	dirDirty := s.dirDirty
	s.dirDirty = false
	s.mu.Unlock()
	defer func() {
		for _, t := range heads {
			t.seg.unpin()
		}
	}()

	err := s.writeSealed(upTo)
	// The fsyncs run without ioMu, so that the next buffers are written
	// meanwhile. Segments sealed before the call were fsynced by
	// writeSealed.
	for _, t := range heads {
		if err != nil {
			break
		}
		if err = t.seg.f.Sync(); err != nil {
			err = fmt.Errorf("sync segment %s: %w", t.seg.path, err)
		}
	}
	if err == nil && dirDirty {
		if err = s.fs.SyncDir(s.dir); err != nil {
			err = fmt.Errorf("sync directory %s: %w", s.dir, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if errors.Is(err, ErrClosed) || s.failed != nil {
			return err
		}
		return s.fail(err)
	}
	for _, t := range heads {
		t.seg.synced = max(t.seg.synced, t.size)
	}
	s.stats.syncs.Add(1)
	return nil
}

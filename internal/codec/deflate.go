package codec

import (
	"bytes"
	"io"
	"sync"

	"github.com/klauspost/compress/zlib"
)

// deflateDefaultLevel is zlib's own default (Z_DEFAULT_COMPRESSION), which
// level 0 selects. In zlib, level 0 itself means "store uncompressed".
const deflateDefaultLevel = 6

// deflateWriter is a pooled zlib writer with the buffer it appends to. A
// zlib writer holds the deflate window and match tables, hundreds of KiB,
// so it is reused through Reset rather than rebuilt per page.
type deflateWriter struct {
	zw  *zlib.Writer
	out []byte
}

// Write appends p to w.out, making w the writer's destination.
func (w *deflateWriter) Write(p []byte) (int, error) {
	w.out = append(w.out, p...)
	return len(p), nil
}

// deflateWriters pools writers by level (1..9); a zlib writer's level is
// fixed when it is created.
var deflateWriters [10]sync.Pool // *deflateWriter

// compressDeflate compresses src as a zlib stream; level 0 means the default.
func compressDeflate(dst, src []byte, level int) ([]byte, error) {
	if level == 0 {
		level = deflateDefaultLevel
	}
	w, _ := deflateWriters[level].Get().(*deflateWriter)
	if w == nil {
		w = new(deflateWriter)
		zw, err := zlib.NewWriterLevel(w, level)
		if err != nil {
			return nil, err
		}
		w.zw = zw
	}
	w.out = dst[:0]
	w.zw.Reset(w)
	_, err := w.zw.Write(src)
	if err == nil {
		err = w.zw.Close()
	}
	out := w.out
	w.out = nil // do not keep the caller's buffer alive from the pool
	deflateWriters[level].Put(w)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// deflateReader is a pooled zlib reader and the source it reads from.
// bytes.Reader is an io.ByteReader, so the inflater reads exactly the bytes
// of the stream without wrapping them in a bufio.Reader of its own.
type deflateReader struct {
	zr    io.Reader // zlib reader, also a zlib.Resetter; nil until first use
	src   bytes.Reader
	probe [1]byte
}

var deflateReaders = sync.Pool{New: func() any { return new(deflateReader) }}

// decodeDeflate decodes a zlib stream into dst. The stream must hold exactly
// len(dst) bytes and end right there, with a valid Adler-32 trailer and
// nothing after it.
func decodeDeflate(dst, src []byte) error {
	r := deflateReaders.Get().(*deflateReader)
	err := r.decode(dst, src)
	r.src.Reset(nil) // do not keep the caller's image alive from the pool
	deflateReaders.Put(r)
	return err
}

func (r *deflateReader) decode(dst, src []byte) error {
	r.src.Reset(src)
	// The zlib reader parses the stream header as it is reset, so the
	// first one can only be created once there is a stream to read.
	if r.zr == nil {
		zr, err := zlib.NewReader(&r.src)
		if err != nil {
			return corrupt(Deflate, "%v", err)
		}
		r.zr = zr
	} else if err := r.zr.(zlib.Resetter).Reset(&r.src, nil); err != nil {
		return corrupt(Deflate, "%v", err)
	}
	if n, err := io.ReadFull(r.zr, dst); err != nil {
		return corrupt(Deflate, "after %d of %d bytes: %v", n, len(dst), err)
	}
	// The zlib reader checks the Adler-32 trailer only when it reaches
	// the end of the stream, which has to come now.
	switch n, err := r.zr.Read(r.probe[:]); {
	case n > 0:
		return corrupt(Deflate, "stream longer than %d bytes", len(dst))
	case err != io.EOF:
		return corrupt(Deflate, "at end of stream: %v", err)
	case r.src.Len() > 0:
		return corrupt(Deflate, "%d bytes after the stream", r.src.Len())
	}
	return nil
}

package server

import (
	"bytes"
	"strings"
	"testing"
)

// BenchmarkParseSetPipeline parses a pipeline of 16 SETs of 100-byte
// values (redis-benchmark -P 16 -d 100) from a reused reader: it should
// allocate nothing.
func BenchmarkParseSetPipeline(b *testing.B) {
	var in []byte
	for i := 0; i < 16; i++ {
		in = append(in, "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000001234\r\n$100\r\n"+strings.Repeat("x", 100)+"\r\n"...)
	}
	src := bytes.NewReader(in)
	rd := newRequestReader(src, Limits{}, func() bool { return false })
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(in)
		n := 0
		for {
			args, err := rd.next()
			if err != nil {
				b.Fatal(err)
			}
			if args == nil {
				if err := rd.fill(); err != nil {
					break
				}
				continue
			}
			n++
		}
		if n != 16 {
			b.Fatalf("%d commands", n)
		}
		rd.readErr = nil
	}
}

// BenchmarkParseInline parses an inline command line.
func BenchmarkParseInline(b *testing.B) {
	in := []byte("SET key:000000001234 \"a quoted value\\n\" 'and another'\r\n")
	src := bytes.NewReader(in)
	rd := newRequestReader(src, Limits{}, func() bool { return false })
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(in)
		for {
			args, err := rd.next()
			if err != nil {
				b.Fatal(err)
			}
			if args == nil {
				if rd.fill() != nil {
					break
				}
			}
		}
		rd.readErr = nil
	}
}

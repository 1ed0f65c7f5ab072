// Command dio times random O_DIRECT reads of 2,560 (512-byte aligned),
// 4,096 and 8,192 bytes from a file, 3,000 of each, twice in turn
// (docs/BENCHMARKS.md, thirty-fourth session: does reading only the
// 512-byte blocks a compressed page spans, instead of whole 4 KiB blocks,
// shorten a read?). Usage: go run . FILE (a file of a few hundred MB on
// the device to measure; run from this directory: its own module).
package main

import (
	"fmt"
	"math/rand"
	"os"
	"sort"
	"syscall"
	"time"
	"unsafe"
)

func main() {
	path := os.Args[1]
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECT, 0)
	if err != nil {
		panic(err)
	}
	st, _ := f.Stat()
	size := st.Size()
	raw := make([]byte, 1<<20)
	off := 4096 - int(uintptr(unsafe.Pointer(&raw[0]))&4095)
	buf := raw[off : off+65536]
	for round := 0; round < 2; round++ {
		for _, n := range []int{512 * 5, 4096, 8192, 512 * 5, 4096, 8192} {
			var lat []time.Duration
			for i := 0; i < 3000; i++ {
				align := int64(512)
				if n%4096 == 0 {
					align = 4096
				}
				o := rand.Int63n(size-int64(n)) / align * align
				t := time.Now()
				if _, err := f.ReadAt(buf[:n], o); err != nil {
					panic(err)
				}
				lat = append(lat, time.Since(t))
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			var sum time.Duration
			for _, l := range lat {
				sum += l
			}
			fmt.Printf("n=%5d mean=%v p50=%v p99=%v\n", n, sum/time.Duration(len(lat)), lat[len(lat)/2], lat[len(lat)*99/100])
		}
	}
}

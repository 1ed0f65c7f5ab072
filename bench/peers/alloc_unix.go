//go:build unix

package peers

import (
	"io/fs"
	"syscall"
)

func fileAllocated(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return info.Size()
}

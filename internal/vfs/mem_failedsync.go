package vfs

// What a failed File.Sync does to a MemFS file. Lock rules: every function
// here is called with the MemFS's mu held.
//
// On Linux, when fsync fails because the write-back of dirty pages failed
// (EIO), the kernel marks those pages clean anyway: they stay readable in
// this boot, but the next fsync has nothing to write for them and
// succeeds, and after a power loss the disk still holds whatever it held
// before. MemFS models this with the file's lost spans: the byte ranges
// that were dirty when a Sync failed and have not been written since.
// Reads see the current bytes; Sync makes durable, for the lost spans, the
// bytes that were durable before (zeros past the old durable size, where
// the disk has a hole); a crash image treats them as unchanged. Writing
// any byte of a page dirties the whole page again (lost bytes included),
// and a Sync then persists it.
//
// A test that fails a Sync to stand for a process that died before its
// fsync (which loses no page-cache data) says so with NotIssuedError: such
// a failure changes nothing.

import (
	"errors"
	"fmt"
	"slices"
)

// ErrNotIssued is wrapped by injected errors that stand for an operation
// the process never issued (it died, or was stopped, before the system
// call). A Sync failed with it leaves the file's dirty bytes dirty, as a
// process death does; any other failed Sync loses them (see MemFS).
var ErrNotIssued = errors.New("vfs: operation not issued")

// NotIssuedError returns an injected error, wrapping both ErrInjected and
// ErrNotIssued, for op on path: for injectors that model a process dying
// before op, not an I/O error.
func NotIssuedError(op Op, path string) error {
	return fmt.Errorf("%w: %w: %s %s", ErrInjected, ErrNotIssued, op, path)
}

// osPageSize is the unit in which the OS's cache tracks dirty data: a
// write to any byte of a page makes the whole page dirty again.
const osPageSize = 4096

// span is the byte range [lo, hi) of a file.
type span struct{ lo, hi int64 }

// loseDirty records a failed Sync: every byte that Sync would have written
// (those that differ from the durable contents, and all those past the
// durable size) joins the lost spans.
func (n *memNode) loseDirty() {
	data, dur := n.data, n.synced
	var dirty []span
	for i := 0; i < len(data); {
		if i < len(dur) && data[i] == dur[i] {
			i++
			continue
		}
		j := i + 1
		for j < len(data) && (j >= len(dur) || data[j] != dur[j]) {
			j++
		}
		dirty = append(dirty, span{int64(i), int64(j)})
		i = j
	}
	n.lost = mergeSpans(append(n.lost, dirty...))
}

// mergeSpans sorts spans and merges those that overlap or touch.
func mergeSpans(s []span) []span {
	slices.SortFunc(s, func(a, b span) int {
		switch {
		case a.lo < b.lo:
			return -1
		case a.lo > b.lo:
			return 1
		}
		return 0
	})
	out := s[:0]
	for _, x := range s {
		if x.lo >= x.hi {
			continue
		}
		if k := len(out) - 1; k >= 0 && x.lo <= out[k].hi {
			out[k].hi = max(out[k].hi, x.hi)
			continue
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// unlose removes [lo, hi) from the lost spans: those bytes were written
// again, or share a page with bytes written again (WriteAt passes whole
// pages), or were cut off by a truncation: dirty, or gone, like others.
func (n *memNode) unlose(lo, hi int64) {
	if len(n.lost) == 0 || lo >= hi {
		return
	}
	var out []span
	for _, x := range n.lost {
		if x.hi <= lo || x.lo >= hi {
			out = append(out, x)
			continue
		}
		if x.lo < lo {
			out = append(out, span{x.lo, lo})
		}
		if x.hi > hi {
			out = append(out, span{hi, x.hi})
		}
	}
	n.lost = out
}

// diskData returns the contents that a write-back now would leave on a
// disk holding dur: the current contents, except that lost bytes keep
// their value in dur (zero past its end). dur is the file's durable
// contents, or what a crash image keeps of them (a surviving truncation
// cuts them: bytes it freed do not come back). It is n.data itself when
// nothing is lost, a new slice otherwise.
func (n *memNode) diskData(dur []byte) []byte {
	if len(n.lost) == 0 {
		return n.data
	}
	out := slices.Clone(n.data)
	for _, x := range n.lost {
		for i := x.lo; i < x.hi && i < int64(len(out)); i++ {
			if i < int64(len(dur)) {
				out[i] = dur[i]
			} else {
				out[i] = 0
			}
		}
	}
	return out
}

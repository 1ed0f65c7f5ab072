package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// procIO is the process's storage I/O from /proc/self/io: read_bytes and
// write_bytes count what reached the block layer (page-cache hits and
// buffered writes never flushed do not count), which is the device
// traffic a benchmark wants, whatever mix of direct and buffered I/O the
// engine uses.
type procIO struct {
	readBytes, writeBytes int64
}

// readProcIO returns the counters, or an error where /proc/self/io is
// absent (not Linux, or a kernel without task I/O accounting).
func readProcIO() (procIO, error) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return procIO{}, fmt.Errorf("bench: device I/O unknown: %w", err)
	}
	return parseProcIO(b)
}

func parseProcIO(b []byte) (procIO, error) {
	var io procIO
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, value, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(name) {
		case "read_bytes":
			dst = &io.readBytes
		case "write_bytes":
			dst = &io.writeBytes
		default:
			continue
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
		if err != nil {
			return procIO{}, fmt.Errorf("bench: /proc/self/io: %s: %w", name, err)
		}
		*dst = n
		found++
	}
	if found != 2 {
		return procIO{}, errors.New("bench: /proc/self/io lacks read_bytes or write_bytes")
	}
	return io, nil
}

// dirSize is the space the regular files under dir occupy on the device
// (allocated blocks where the system reports them).
func dirSize(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		// An engine compacting in the background deletes files while
		// they are counted: a file gone is a file that takes no space.
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		total += allocatedSize(info)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("bench: size of %s: %w", dir, err)
	}
	return total, nil
}

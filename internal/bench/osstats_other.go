//go:build !unix

package bench

import (
	"errors"
	"os"
)

func peakRSS() (int64, error) {
	return 0, errors.New("bench: peak RSS unknown on this system")
}

func dropPageCache() error {
	return errors.New("bench: dropping the page cache is not supported on this system")
}

func allocatedSize(info os.FileInfo) int64 { return info.Size() }

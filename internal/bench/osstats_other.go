//go:build !unix

package bench

import (
	"errors"
	"os"
	"time"
)

func peakRSS() (int64, error) {
	return 0, errors.New("bench: peak RSS unknown on this system")
}

func processCPU() (user, sys time.Duration, err error) {
	return 0, 0, errors.New("bench: CPU time unknown on this system")
}

func dropPageCache() error {
	return errors.New("bench: dropping the page cache is not supported on this system")
}

func allocatedSize(info os.FileInfo) int64 { return info.Size() }

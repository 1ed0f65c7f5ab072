//go:build !unix

package vfs

import (
	"errors"
	"fmt"
	"io"
)

// lockFile is not implemented off Unix: pretending to lock would let two
// processes open one database.
func lockFile(name string) (io.Closer, error) {
	return nil, fmt.Errorf("vfs: lock %s: %w", name, errors.ErrUnsupported)
}

package main

// Guards for the commands that take a directory: the tools that measure
// write into directories of their own, never into a user's data, and the
// ones that read a database do not create one at a mistyped path.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// mustBeDatabase returns an error unless dir holds a Strata database (its
// CHECKPOINT file): Open would create a new, empty one at a mistyped path.
func mustBeDatabase(dir string) error {
	st, err := os.Stat(filepath.Join(dir, "CHECKPOINT"))
	if err == nil && !st.IsDir() {
		return nil
	}
	if _, derr := os.Stat(dir); derr != nil {
		return derr
	}
	return fmt.Errorf("%s is not a Strata database (no CHECKPOINT)", dir)
}

// mustBeNew returns an error unless dir does not exist or is empty: a
// command that loads benchmark data there would write into what it holds.
func mustBeNew(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s exists and is not empty: give a new or empty directory (this command loads data into it)", dir)
	}
	return nil
}

package strata

import (
	"github.com/stratadb/strata/internal/hooks"
	"github.com/stratadb/strata/internal/vfs"
)

func init() {
	hooks.SetFS = func(opts any, fs vfs.FS) { opts.(*Options).fs = fs }
}

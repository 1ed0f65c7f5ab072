package strata

import (
	"github.com/stratadb/strata/internal/flashcache"
	"github.com/stratadb/strata/internal/hooks"
	"github.com/stratadb/strata/internal/vfs"
)

func init() {
	hooks.SetFS = func(opts any, fs vfs.FS) { opts.(*Options).fs = fs }
	hooks.SetFlashFS = func(opts any, fs vfs.FS) { opts.(*Options).flashFS = fs }
	hooks.TuneFlash = func(opts any, fn func(*flashcache.Options)) { opts.(*Options).flashTune = fn }
	hooks.CheckpointEpoch = func(db any) uint64 { return db.(*DB).ckptEpoch.Load() }
}

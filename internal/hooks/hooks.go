// Package hooks lets Strata's own tools reach into the root package without
// widening its public API: the root package fills these variables in its
// init function, and internal packages (benchmarks, tools) call them.
package hooks

import (
	"github.com/stratadb/strata/internal/flashcache"
	"github.com/stratadb/strata/internal/vfs"
)

// SetFS replaces the file system of a *strata.Options (passed as any to
// avoid an import cycle). Benchmarks use it to run Strata on a simulated
// device (vfs.LatencyFS).
var SetFS func(opts any, fs vfs.FS)

// SetFlashFS replaces the file system of a *strata.Options's flash cache
// (benchmarks: a simulated flash device).
var SetFlashFS func(opts any, fs vfs.FS)

// TuneFlash sets a function that adjusts the flash cache's internal
// options (admission policy, write rate, ...) of a *strata.Options.
var TuneFlash func(opts any, fn func(*flashcache.Options))

// CheckpointEpoch returns a *strata.DB's checkpoint epoch: odd while a
// checkpoint runs, one more at its start and at its end. A benchmark reads
// it before and after a transaction to tell the transactions that
// overlapped a checkpoint from the others.
var CheckpointEpoch func(db any) uint64

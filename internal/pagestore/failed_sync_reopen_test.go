package pagestore

// A store reopened in the same boot after a failed fsync (its process
// restarted on the error) does not build on bytes that are only in the
// OS's cache: Linux marks the pages whose write-back failed clean, so
// recovery reads them back and its own fsync, without a new write,
// persists nothing (MemFS models this: a failed Sync loses its dirty
// bytes). Recovery writes what it replays again before syncing it
// (vfs.RewriteRange). Each test failed before that: the second session's
// checkpoint pointed at records a power loss then took.

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// eioOn fails every Sync of a file whose path ends in suffix with an
// injected I/O error (not vfs.ErrNotIssued: the kernel ran the fsync and
// it failed, so MemFS loses the file's dirty bytes).
func eioOn(suffix string) vfs.Injector {
	return func(op vfs.Op, path string) error {
		if op == vfs.OpSync && strings.HasSuffix(path, suffix) {
			return vfs.InjectedError(op, path)
		}
		return nil
	}
}

// bufferedOptions are testOptions with buffered segment files.
func bufferedOptions(t *testing.T, fs vfs.FS) Options {
	o := testOptions(fs, mustCodec(t, "none"))
	o.DisableDirectIO = true
	return o
}

// Segments written with direct I/O too: a file system may take O_DIRECT
// and still write through its cache (vfs.RewriteRange).
func TestReopenAfterFailedSegmentSync(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(map[bool]string{false: "buffered", true: "direct"}[direct], func(t *testing.T) {
			fs := vfs.NewMem()
			o := bufferedOptions(t, fs)
			o.DisableDirectIO = !direct
			storeWithFailedSync(t, fs, o, eioOn(".seg"))

			// The process restarts in the same boot: version 2 reads back
			// from the cache, and the new session checkpoints what it
			// recovered.
			s2, err := Open("db", o)
			if err != nil {
				t.Fatal(err)
			}
			for _, seg := range s2.segs {
				if seg.f.Direct() != direct {
					t.Fatalf("segment %s: Direct() %v", seg.path, !direct)
				}
			}
			buf := make([]byte, testPageSize)
			if err := s2.ReadPage(0, buf); err != nil || !bytes.Equal(buf, pageContent(0, 2, testPageSize)) {
				t.Fatalf("after the restart, page 0: %v", err)
			}
			if err := s2.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			killStore(t, s2)
			fs.Crash(vfs.CrashDropUnsynced, nil)

			s3, err := Open("db", o)
			if err != nil {
				t.Fatalf("open after a power loss that followed a successful checkpoint: %v", err)
			}
			defer s3.Close()
			for id := PageID(0); id < 3; id++ {
				if err := s3.ReadPage(id, buf); err != nil || !bytes.Equal(buf, pageContent(id, 2, testPageSize)) {
					t.Fatalf("page %d after the power loss: %v", id, err)
				}
			}
		})
	}
}

func TestReopenAfterFailedMapLogSync(t *testing.T) {
	fs := vfs.NewMem()
	// The cleaning pass's delta reaches the map log; its fsync fails.
	o := storeWithFailedCleaning(t, fs, bufferedOptions(t, fs), eioOn(mapLogName))

	// Recovery applies the delta (read back from the cache) and removes
	// the pass's victims; the new session's Sync makes the removals
	// durable.
	checkCleaningSurvivesPowerLoss(t, fs, o)
}

package strata

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

// segmentGateFS wraps a file system so that writes to page store segments
// (*.seg), or their reads if reads is set, wait at a gate while it is
// held: a device that has not yet answered. WAL writes and syncs pass.
type segmentGateFS struct {
	vfs.FS
	ioGate
	reads bool
}

func (g *segmentGateFS) OpenFile(name string, flag int, perm os.FileMode, o vfs.OpenOptions) (vfs.File, error) {
	f, err := g.FS.OpenFile(name, flag, perm, o)
	if err != nil || !strings.HasSuffix(name, ".seg") {
		return f, err
	}
	return &segmentGateFile{File: f, fs: g}, nil
}

type segmentGateFile struct {
	vfs.File
	fs *segmentGateFS
}

func (f *segmentGateFile) WriteAt(p []byte, off int64) (int, error) {
	if !f.fs.reads {
		f.fs.pass()
	}
	return f.File.WriteAt(p, off)
}

func (f *segmentGateFile) ReadAt(p []byte, off int64) (int, error) {
	if f.fs.reads {
		f.fs.pass()
	}
	return f.File.ReadAt(p, off)
}

// TestCommitsDuringCheckpoint: while a checkpoint's page writes wait on
// the device, commits (durable ones: each waits for its WAL fsync)
// complete and are readable. They used to wait for the whole checkpoint,
// which held the writer lock while it flushed. The checkpoint cannot finish
// while its writes are held, so the test counts completed commits instead
// of timing anything; the timeout only turns a hang into a failure.
func TestCommitsDuringCheckpoint(t *testing.T) {
	const rows, during = tableRows, 20
	db, gfs := gatedTable(t, false)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 3000; i++ { // dirty most leaves again
		if err := db.Set([]byte(fmt.Sprintf("k%06d", rng.IntN(rows))), []byte("again")); err != nil {
			t.Fatal(err)
		}
	}

	gfs.hold()
	ckptErr := make(chan error, 1)
	go func() { ckptErr <- db.Checkpoint() }()
	waitHeld(t, gfs, ckptErr, "the checkpoint") // it is writing

	var committed atomic.Int64
	commitErr := make(chan error, 1)
	go func() {
		for i := 0; i < during; i++ {
			if err := db.Set([]byte(fmt.Sprintf("k%06d", i)), []byte("during")); err != nil {
				commitErr <- err
				return
			}
			committed.Add(1)
		}
		commitErr <- nil
	}()
	gfs.completesWhileHeld(t, commitErr, func() string {
		return fmt.Sprintf("%d of %d commits completed in 10 s while the checkpoint's writes were held: commits wait for the checkpoint", committed.Load(), during)
	})
	for i := 0; i < during; i++ {
		k := fmt.Sprintf("k%06d", i)
		if v, err := db.Get([]byte(k)); err != nil || string(v) != "during" {
			t.Fatalf("%s, committed during the checkpoint: %q, %v", k, v, err)
		}
	}
	select {
	case err := <-ckptErr:
		t.Fatalf("the checkpoint finished (%v) while its writes were held", err)
	default:
	}

	gfs.release()
	if err := <-ckptErr; err != nil {
		t.Fatal(err)
	}
	if got := db.Stats().Checkpoints; got < 2 { // Open's and this one
		t.Fatalf("%d checkpoints counted", got)
	}
}

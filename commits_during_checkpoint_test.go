package strata

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
	const rows, during = 20000, 20
	mem := vfs.NewMem()
	opts := &Options{PageSize: 4096, CacheSize: 8 << 20, Partitions: 1, Codec: "lz4", CheckpointWAL: 1 << 40, CheckpointReplaced: -1, fs: mem}
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	for i := 0; i < rows; i++ { // some 500 leaves, all in the cache
		b.Set([]byte(fmt.Sprintf("k%06d", i)), make([]byte, 80))
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	gfs := &segmentGateFS{FS: mem}
	opts.fs = gfs
	if db, err = Open("db", opts); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer gfs.release() // before Close, on every path
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 3000; i++ { // dirty most leaves again
		if err := db.Set([]byte(fmt.Sprintf("k%06d", rng.IntN(rows))), []byte("again")); err != nil {
			t.Fatal(err)
		}
	}

	gfs.hold()
	ckptErr := make(chan error, 1)
	go func() { ckptErr <- db.Checkpoint() }()
	deadline := time.Now().Add(30 * time.Second)
	for gfs.held.Load() == 0 { // the checkpoint is writing
		select {
		case err := <-ckptErr:
			t.Fatalf("the checkpoint finished (%v) without writing a page", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the checkpoint wrote no page in 30 s")
		}
		time.Sleep(time.Millisecond)
	}

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
	select {
	case err := <-commitErr:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		gfs.release()
		t.Fatalf("%d of %d commits completed in 10 s while the checkpoint's writes were held: commits wait for the checkpoint", committed.Load(), during)
	}
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

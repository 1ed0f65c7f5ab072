package pagestore

import (
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"time"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

type slowSyncFS struct{ vfs.FS }
type slowSyncFile struct{ vfs.File }

func (f slowSyncFS) OpenFile(name string, flag int, perm os.FileMode, o vfs.OpenOptions) (vfs.File, error) {
	h, err := f.FS.OpenFile(name, flag, perm, o)
	if err != nil {
		return nil, err
	}
	return slowSyncFile{h}, nil
}
func (f slowSyncFile) Sync() error { time.Sleep(300 * time.Microsecond); return f.File.Sync() }

func TestTmpConcCrash(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CONCN"))
	if n == 0 {
		t.Skip()
	}
	fails := 0
	for it := 0; it < n; it++ {
		mem := vfs.NewMem()
		opts := testOptions(slowSyncFS{mem}, mustCodec(t, "none"))
		opts.DisableBackground = false
		opts.CleanerThreshold = 0.2
		opts.CheckpointBytes = 64 << 10
		s, err := Open("db", opts)
		if err != nil {
			t.Fatal(err)
		}
		mem.CrashAfterOps(50 + rand.IntN(1500))
		var wg sync.WaitGroup
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for r := 2; r < 200; r++ {
					for p := 0; p < 6; p++ {
						id := PageID(w*6 + p)
						if _, _, err := s.WritePage(id, pageContent(id, r, testPageSize)); err != nil {
							return
						}
					}
					if r%3 == 0 {
						if s.Sync() != nil {
							return
						}
					}
				}
			}(w)
		}
		wg.Wait()
		s.Close()
		after := mem.CrashedClone(vfs.CrashTorn, rand.New(rand.NewPCG(uint64(it), 1)))
		o2 := testOptions(after, nil)
		s2, err := Open("db", o2)
		if err != nil {
			t.Errorf("it %d: first recovery: %v", it, err)
			fails++
			continue
		}
		s2.WritePage(0, pageContent(0, 999, testPageSize))
		s2.Sync()
		after2 := after.CrashClone(vfs.CrashDropUnsynced, nil)
		s2.Close()
		s3, err := Open("db", testOptions(after2, nil))
		if err != nil {
			names, _ := after2.List("db")
			t.Errorf("it %d: second recovery: %v %v", it, err, names)
			fails++
			continue
		}
		s3.Close()
	}
	t.Logf("%d failures of %d", fails, n)
}

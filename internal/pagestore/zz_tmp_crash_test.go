package pagestore

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/stratadb/strata/internal/vfs"
)

func TestTmpCrashMore(t *testing.T) {
	lo, _ := strconv.Atoi(os.Getenv("SEEDLO"))
	hi, _ := strconv.Atoi(os.Getenv("SEEDHI"))
	if hi == 0 {
		t.Skip()
	}
	for seed := uint64(lo); seed <= uint64(hi); seed++ {
		dry := vfs.NewMem()
		crashWorkload(t, dry, seed, 250)
		total := dry.OpCount()
		for crashAt := 0; crashAt < total; crashAt += 1 + int(seed%3) {
			for _, mode := range []vfs.CrashMode{vfs.CrashDropUnsynced, vfs.CrashTorn} {
				fs := vfs.NewMem()
				fs.CrashAfterOps(crashAt)
				hist, durable := crashWorkload(t, fs, seed, 250)
				after := fs.CrashedClone(mode, rand.New(rand.NewPCG(seed, uint64(crashAt))))
				s, err := Open("db", testOptions(after, mustCodec(t, "zstd")))
				if err != nil {
					t.Fatalf("seed %d crash %d %v: recovery failed: %v", seed, crashAt, mode, err)
				}
				got := readAll(t, s)
				func() {
					defer func() {
						if r := recover(); r != nil {
							panic(fmt.Sprintf("seed %d crash %d %v: %v", seed, crashAt, mode, r))
						}
					}()
					checkPrefix(t, hist, durable, got)
				}()
				for id := PageID(0); id < 24; id += 3 {
					s.WritePage(id, pageContent(id, 1000+int(id), testPageSize))
				}
				if err := s.Sync(); err != nil {
					t.Fatal(err)
				}
				after2 := after.CrashClone(vfs.CrashDropUnsynced, nil)
				s.Close()
				s2, err := Open("db", testOptions(after2, nil))
				if err != nil {
					t.Fatalf("seed %d crash %d %v: second recovery failed: %v", seed, crashAt, mode, err)
				}
				s2.Close()
			}
		}
	}
}

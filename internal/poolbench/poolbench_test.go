package poolbench

import (
	"testing"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// The controller tests run the two scenarios of document 000 on simulated
// devices, starting from R = 0.5, and check where the automatic controller
// takes R. They measure no speed: only the direction R moves in, which
// follows from the measured T_disk_read and T_decom.

func TestControllerFastDeviceSlowCodec(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("simulated-device run with real codec costs: not under -short or -race")
	}
	// The data is twice the budget (256 pages of 16 KiB against a 2 MiB
	// cache). At eight times the budget (1,024 pages) frames alone beat
	// R = 0.42 by about 4% (miss ratios 0.88 and 0.87; the 6% image hits
	// at R = 0.42 cost more than the 1% of misses they spare): the
	// ghosts saw 10 frame hits against 30 image hits a decision, within
	// their noise, and R stayed at 0.36–0.43 in 2 of 12 runs beside four
	// busy loops on two cores (and once in CI). Twice the budget gives
	// frames alone 0.46 frame hits against R = 0.5's 0.23 (1.28× its
	// throughput): 43 of 44 such runs beside four busy loops took R to
	// 0.05 (docs/BENCHMARKS.md).
	//
	// Here T_decom (65–90 µs) is more than twice T_disk_read (26 µs) with
	// α about 0.37: document 000's model says frames alone win, so a
	// frames trial waits for no climb that wants R up and one clear win
	// keeps it (trial.go, framesByModel). Before that (the two wins in a
	// row asked of the frames arm everywhere, and a climb hovering in its
	// noise at R 0.4–0.6 holding the arm back) a 5 s run ended at R ≤ 0.25
	// in about one of three runs; with it, 15 of 16 did, and the one that
	// did not had its climb raise R past the steady window's drift for
	// the whole run. An 8 s warm-up leaves room for that; two runs, each
	// logged, for a host that stalls the first.
	//
	// The premise is the model's: a decompression costs more than the
	// reads it spares. On the NVMe preset (20 µs reads, 25 µs measured)
	// that held while deflate-6 took 65–90 µs here; on 2026-12-05 the
	// host decompressed in 49 µs, the model no longer said frames alone
	// win (0.37 × 49 against 1.25 × 0.63 × 25), the climb hovered at R
	// 0.66–0.68 wanting R up within its noise, which holds the frames arm
	// back, and the test failed every run for half an hour, at the
	// session's first commit too. A 10 µs device keeps the premise, with
	// its margin, on either host; what auto does where the model is
	// borderline is issue 9's open nvme + deflate case (docs/BENCHMARKS.md).
	sc := FastDeviceSlowCodec
	sc.Device.ReadLatency, sc.Device.WriteLatency = 10*time.Microsecond, 10*time.Microsecond
	ds, err := Build(sc, 256, 1)
	if err != nil {
		t.Fatal(err)
	}
	var res Result
	for attempt := 1; attempt <= 2; attempt++ {
		res, err = Run(ds, Config{CacheSize: 2 << 20, Share: -1, Threads: 1, Warmup: 8 * time.Second, Duration: time.Second, Partitions: 1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("run %d, %s: %v; trace %.2f; trials %d (kept %d; frames alone %d, kept %d), compressing %v", attempt, FastDeviceSlowCodec.Name, res, res.ShareTrace,
			res.Pool.ControllerTrials, res.Pool.TrialsKept, res.Pool.FramesTrials, res.Pool.FramesTrialsKept, res.Pool.Compressing)
		if res.Share <= 0.25 {
			return
		}
	}
	t.Fatalf("fast device + slow codec: R = %.2f in two runs, want ≤ 0.25 (T_disk %v, T_decom %v, T_comp %v)", res.Share, res.Pool.TDiskRead, res.Pool.TDecom, res.Pool.TComp)
}

func TestControllerSlowDeviceFastCodec(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("simulated-device run with real codec costs: not under -short or -race")
	}
	sc := SlowDeviceFastCodec
	// A 2 ms device instead of the HDD preset's 8 ms keeps the test short;
	// the ratio T_disk_read / T_decom is still in the thousands.
	sc.Device = vfs.Device{Name: "hdd-2ms", ReadLatency: 2 * time.Millisecond, WriteLatency: 2 * time.Millisecond, QueueDepth: 1}
	ds, err := Build(sc, 1024, 1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(ds, Config{CacheSize: 2 << 20, Share: -1, Threads: 1, Warmup: 6 * time.Second, Duration: time.Second, Partitions: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %v; trace %.2f", sc.Name, res, res.ShareTrace)
	if res.Share < 0.75 {
		t.Fatalf("slow device + fast codec: R = %.2f, want ≥ 0.75 (T_disk %v, T_decom %v)", res.Share, res.Pool.TDiskRead, res.Pool.TDecom)
	}
}

package vfs

import (
	"os"
	"sync"
	"testing"
	"time"
)

// parallelReads runs n concurrent 4 KiB reads on a LatencyFS over MemFS and
// returns how long they took together.
func parallelReads(t *testing.T, dev Device, n int) (time.Duration, *LatencyFS) {
	t.Helper()
	l := NewLatency(NewMem(), dev)
	f, err := l.OpenFile("f", os.O_RDWR|os.O_CREATE, 0o644, OpenOptions{})
	must(t, err)
	if _, err := f.WriteAt(make([]byte, BlockSize), 0); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.ReadAt(make([]byte, BlockSize), 0); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	return time.Since(start), l
}

func TestLatencyQueueDepth(t *testing.T) {
	const lat = 20 * time.Millisecond
	dev := Device{Name: "fake", ReadLatency: lat, QueueDepth: 1}
	took, l := parallelReads(t, dev, 4)
	if took < 4*lat {
		t.Fatalf("4 parallel reads at queue depth 1 took %v, want >= %v", took, 4*lat)
	}
	st := l.Stats()
	if st.Reads != 4 || st.Writes != 1 || st.ReadBytes != 4*BlockSize || st.WriteBytes != BlockSize {
		t.Fatalf("stats %+v", st)
	}
	if st.Service != 4*lat {
		t.Fatalf("service time %v, want %v", st.Service, 4*lat)
	}
	if st.Queued < 5*lat { // the waits are about 1+2+3 latencies
		t.Fatalf("queued time %v, want about %v", st.Queued, 6*lat)
	}

	dev.QueueDepth = 4
	took, _ = parallelReads(t, dev, 4)
	if took < lat || took >= 3*lat {
		t.Fatalf("4 parallel reads at queue depth 4 took %v, want about %v", took, lat)
	}
}

func TestLatencyBandwidthAndSync(t *testing.T) {
	dev := Device{Name: "fake", WriteBandwidth: 100e6, SyncLatency: 3 * time.Millisecond}
	l := NewLatency(NewMem(), dev)
	f, err := l.OpenFile("f", os.O_RDWR|os.O_CREATE, 0o644, OpenOptions{})
	must(t, err)
	start := time.Now()
	if _, err := f.WriteAt(make([]byte, 1e6), 0); err != nil { // 10 ms at 100 MB/s
		t.Fatal(err)
	}
	must(t, f.Sync())
	must(t, l.SyncDir("/"))
	if took := time.Since(start); took < 16*time.Millisecond {
		t.Fatalf("1 MB write + 2 syncs took %v, want >= 16ms", took)
	}
	if st := l.Stats(); st.Writes != 1 || st.Syncs != 2 || st.Service != 16*time.Millisecond {
		t.Fatalf("stats %+v", st)
	}
	if size, err := f.Size(); err != nil || size != 1e6 {
		t.Fatalf("size through the wrapper: %d, %v", size, err)
	}
}

func TestPreciseWait(t *testing.T) {
	for _, d := range []time.Duration{20 * time.Microsecond, 300 * time.Microsecond, 2 * time.Millisecond} {
		start := time.Now()
		preciseWait(d)
		took := time.Since(start)
		if took < d {
			t.Errorf("preciseWait(%v) returned after %v", d, took)
		}
		t.Logf("preciseWait(%v) took %v", d, took)
	}
}

func TestDeviceByName(t *testing.T) {
	for name, want := range map[string]Device{"hdd": HDD, "SSD": SATASSD, "nvme": NVMe} {
		got, err := DeviceByName(name)
		if err != nil || got != want {
			t.Errorf("DeviceByName(%q) = %+v, %v", name, got, err)
		}
	}
	if d, err := DeviceByName("none"); err != nil || d.ReadLatency != 0 || d.QueueDepth != 0 {
		t.Errorf("none: %+v, %v", d, err)
	}
	if _, err := DeviceByName("floppy"); err == nil {
		t.Error("unknown device accepted")
	}
}

package vfs

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Device describes a simulated storage device for NewLatency.
type Device struct {
	// Name labels results measured on the device, e.g. "hdd".
	Name string
	// ReadLatency, WriteLatency and SyncLatency are the fixed service times
	// of one random read, one write and one cache flush (File.Sync,
	// FS.SyncDir).
	ReadLatency, WriteLatency, SyncLatency time.Duration
	// ReadBandwidth and WriteBandwidth, in bytes per second, add
	// len/bandwidth to each read and write; 0 means unlimited.
	ReadBandwidth, WriteBandwidth float64
	// QueueDepth is how many requests the device serves at once; further
	// requests wait for a slot. 0 or less means unlimited.
	QueueDepth int
}

// Preset devices. The figures are round numbers typical of each class, not
// measurements of a particular model.
var (
	// HDD is a 7200 rpm disk: a seek and half a rotation per random
	// access, one request at a time.
	HDD = Device{Name: "hdd", ReadLatency: 8 * time.Millisecond, WriteLatency: 8 * time.Millisecond,
		SyncLatency: 10 * time.Millisecond, ReadBandwidth: 150e6, WriteBandwidth: 150e6, QueueDepth: 1}
	// SATASSD is a SATA flash drive (AHCI/NCQ, 32 commands in flight).
	SATASSD = Device{Name: "ssd", ReadLatency: 100 * time.Microsecond, WriteLatency: 50 * time.Microsecond,
		SyncLatency: time.Millisecond, ReadBandwidth: 500e6, WriteBandwidth: 500e6, QueueDepth: 32}
	// NVMe is a PCIe 3/4 NVMe flash drive.
	NVMe = Device{Name: "nvme", ReadLatency: 20 * time.Microsecond, WriteLatency: 20 * time.Microsecond,
		SyncLatency: 100 * time.Microsecond, ReadBandwidth: 2.5e9, WriteBandwidth: 2.5e9, QueueDepth: 64}
)

// DeviceByName returns the preset named "hdd", "ssd" (SATASSD), "nvme", or
// "none" (no delay at all), ignoring case.
func DeviceByName(name string) (Device, error) {
	switch strings.ToLower(name) {
	case "hdd":
		return HDD, nil
	case "ssd":
		return SATASSD, nil
	case "nvme":
		return NVMe, nil
	case "none":
		return Device{Name: "none"}, nil
	}
	return Device{}, fmt.Errorf("vfs: unknown device %q (want hdd, ssd, nvme or none)", name)
}

// LatencyFS wraps a file system so that its reads, writes and syncs take as
// long as on a Device. Results measured on it are simulated: they show how
// Strata's I/O pattern would fare on such a device, not how a real one
// behaves (no caches, no seek-distance effects, no write amplification,
// no background garbage collection). Label them as such.
//
// Each File.ReadAt, File.WriteAt, File.Sync and FS.SyncDir takes a slot in
// the device queue (QueueDepth slots; more concurrent requests wait, as on
// a real device), waits its service time (latency plus length/bandwidth),
// performs the operation on the wrapped file system, and frees the slot.
// Other operations pass straight through: their cost on a real device is
// mostly absorbed by the OS's metadata caches.
//
// The wait is precise to a few microseconds, not to the tens of
// microseconds to milliseconds that time.Sleep overshoots by (on Linux the
// Go runtime's timers round sub-millisecond sleeps up to a millisecond):
// the wait sleeps until shortly before the deadline, the margin calibrated
// once per process from time.Sleep's observed overshoot, then spins,
// yielding with runtime.Gosched, until the deadline. The trade-off is CPU:
// every request in service burns a core (shared with other goroutines)
// during its final margin, and the whole of a sub-margin latency such as
// the NVMe preset's. On a machine with few cores and a deep queue, that
// spinning can itself slow the workload being measured.
type LatencyFS struct {
	fs    FS
	dev   Device
	queue chan struct{} // nil when QueueDepth <= 0

	reads, writes, syncs      atomic.Int64
	readBytes, writeBytes     atomic.Int64
	serviceNanos, queuedNanos atomic.Int64
}

// NewLatency returns fs with dev's delays added; see LatencyFS.
func NewLatency(fs FS, dev Device) *LatencyFS {
	l := &LatencyFS{fs: fs, dev: dev}
	if dev.QueueDepth > 0 {
		l.queue = make(chan struct{}, dev.QueueDepth)
	}
	return l
}

// Device returns the simulated device.
func (l *LatencyFS) Device() Device { return l.dev }

// DeviceStats counts the requests a LatencyFS served.
type DeviceStats struct {
	Reads, Writes, Syncs  int64 // requests (Syncs includes SyncDir)
	ReadBytes, WriteBytes int64 // bytes requested
	// Service is the simulated device time: the sum of every request's
	// latency plus transfer time. Service divided by the elapsed time is
	// the device's average number of requests in service.
	Service time.Duration
	// Queued is the total time requests waited for a queue slot.
	Queued time.Duration
}

// Stats returns the counts so far.
func (l *LatencyFS) Stats() DeviceStats {
	return DeviceStats{
		Reads:      l.reads.Load(),
		Writes:     l.writes.Load(),
		Syncs:      l.syncs.Load(),
		ReadBytes:  l.readBytes.Load(),
		WriteBytes: l.writeBytes.Load(),
		Service:    time.Duration(l.serviceNanos.Load()),
		Queued:     time.Duration(l.queuedNanos.Load()),
	}
}

// serve runs op as a device request: it takes a queue slot, waits the
// service time of a transfer of n bytes at latency lat and bandwidth bw,
// runs op and frees the slot.
func (l *LatencyFS) serve(lat time.Duration, bw float64, n int, op func() error) error {
	if l.queue != nil {
		start := time.Now()
		l.queue <- struct{}{}
		defer func() { <-l.queue }()
		l.queuedNanos.Add(int64(time.Since(start)))
	}
	d := lat
	if bw > 0 && n > 0 {
		d += time.Duration(float64(n) / bw * float64(time.Second))
	}
	l.serviceNanos.Add(int64(d))
	preciseWait(d)
	return op()
}

// spinMargin is how long before a deadline preciseWait stops sleeping and
// starts spinning; see calibrate.
var (
	spinMargin     time.Duration
	spinMarginOnce sync.Once
)

// calibrate measures time.Sleep's overshoot and sets spinMargin to 1.25×
// the worst seen, within [100µs, 3ms]. It costs a few milliseconds, once.
func calibrate() {
	var worst time.Duration
	for range 5 {
		const d = 50 * time.Microsecond
		start := time.Now()
		time.Sleep(d)
		worst = max(worst, time.Since(start)-d)
	}
	spinMargin = min(max(worst+worst/4, 100*time.Microsecond), 3*time.Millisecond)
}

// preciseWait returns after d, give or take a few microseconds: it sleeps
// while the deadline is further than spinMargin and spins for the rest.
func preciseWait(d time.Duration) {
	if d <= 0 {
		return
	}
	spinMarginOnce.Do(calibrate)
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		if left > spinMargin {
			time.Sleep(left - spinMargin)
		}
		// Otherwise spin without yielding: runtime.Gosched would let another
		// goroutine run a whole CPU-bound step (a decompression, say) on this
		// P first and inflate the simulated latency by that much. Spinning
		// holds the P, so experiments should run at most GOMAXPROCS
		// goroutines that do I/O.

	}
}

// OpenFile implements FS.
func (l *LatencyFS) OpenFile(name string, flag int, perm os.FileMode, opts OpenOptions) (File, error) {
	f, err := l.fs.OpenFile(name, flag, perm, opts)
	if err != nil {
		return nil, err
	}
	return &latencyFile{File: f, l: l}, nil
}

// Remove implements FS.
func (l *LatencyFS) Remove(name string) error { return l.fs.Remove(name) }

// Rename implements FS.
func (l *LatencyFS) Rename(oldname, newname string) error { return l.fs.Rename(oldname, newname) }

// MkdirAll implements FS.
func (l *LatencyFS) MkdirAll(dir string, perm os.FileMode) error { return l.fs.MkdirAll(dir, perm) }

// List implements FS.
func (l *LatencyFS) List(dir string) ([]string, error) { return l.fs.List(dir) }

// Stat implements FS.
func (l *LatencyFS) Stat(name string) (os.FileInfo, error) { return l.fs.Stat(name) }

// SyncDir implements FS; it is a device request with the sync latency.
func (l *LatencyFS) SyncDir(dir string) error {
	l.syncs.Add(1)
	return l.serve(l.dev.SyncLatency, 0, 0, func() error { return l.fs.SyncDir(dir) })
}

// Lock implements FS.
func (l *LatencyFS) Lock(name string) (io.Closer, error) { return l.fs.Lock(name) }

// latencyFile delays the I/O of the file it wraps; the methods it does not
// override pass straight through.
type latencyFile struct {
	File
	l *LatencyFS
}

// ReadAt implements File.
func (f *latencyFile) ReadAt(p []byte, off int64) (n int, err error) {
	f.l.reads.Add(1)
	f.l.readBytes.Add(int64(len(p)))
	f.l.serve(f.l.dev.ReadLatency, f.l.dev.ReadBandwidth, len(p), func() error {
		n, err = f.File.ReadAt(p, off)
		return nil
	})
	return n, err
}

// WriteAt implements File.
func (f *latencyFile) WriteAt(p []byte, off int64) (n int, err error) {
	f.l.writes.Add(1)
	f.l.writeBytes.Add(int64(len(p)))
	f.l.serve(f.l.dev.WriteLatency, f.l.dev.WriteBandwidth, len(p), func() error {
		n, err = f.File.WriteAt(p, off)
		return nil
	})
	return n, err
}

// Sync implements File.
func (f *latencyFile) Sync() error {
	f.l.syncs.Add(1)
	return f.l.serve(f.l.dev.SyncLatency, 0, 0, f.File.Sync)
}

// StartWriteback passes through to the wrapped file (see Writebacker): it
// is advice about the OS page cache, not a device request of its own.
func (f *latencyFile) StartWriteback(off, n int64) error {
	return StartWriteback(f.File, off, n)
}

// DropWritten passes through to the wrapped file (see Writebacker).
func (f *latencyFile) DropWritten(off, n int64) error {
	return DropWritten(f.File, off, n)
}

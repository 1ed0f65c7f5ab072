// Package advise measures what a database's configuration choices cost on
// this machine and recommends one: `strata advise DIR`.
//
// It reads the database's files (pagestore.Inspect, read-only) and
// measures:
//
//   - the device: random reads of page images at their real offsets in the
//     segment files, with direct I/O (T_disk_read per read size);
//   - every codec on a sample of the database's own pages: compression
//     ratio, compression time (T_comp) and decompression time (T_decom);
//     other page sizes are estimated by cutting or joining the sampled
//     pages (labelled as estimates: the B+tree's pages at another size would
//     differ);
//
// then evaluates document 000's cost model (bufferpool.Model, exclusive
// tiers) for each codec, page size and cache size: the optimal R and the
// predicted time per page access, and recommends the configuration with
// the lowest predicted time. With the figures of a running server's
// controller (Stats from `strata serve`), it prints the model's prediction
// for the running configuration beside what the controller measured.
package advise

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/stratadb/strata"
	"github.com/stratadb/strata/internal/bufferpool"
	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/vfs"
)

// Options of a run.
type Options struct {
	Reads     int      // random device reads per read size (default 2000)
	Sample    int      // pages sampled for the codecs (default 200)
	CacheSize int64    // the cache size to advise for (default 64 MiB)
	Codecs    []string // default: every codec at a few levels
	Seed      uint64
	// Live is a running server's Stats (nil if none).
	Live *strata.Stats
}

// DefaultCodecs are the codecs and levels measured.
var DefaultCodecs = []string{"none", "lz4", "lz4hc-9", "snappy", "zstd-1", "zstd", "zstd-9", "deflate-1", "deflate", "deflate-9"}

// DeviceRead is the measured time of random reads of one size.
type DeviceRead struct {
	Bytes          int
	Mean, P50, P99 time.Duration
	Direct         bool
}

// CodecResult is one codec at one page size on the sample.
type CodecResult struct {
	Codec    string
	PageSize int
	Ratio    float64 // raw bytes / stored bytes (a page that does not shrink by 1/8 is stored raw)
	Comp     time.Duration
	Decom    time.Duration
	Estimate bool // page size other than the database's: pages cut or joined
}

// Prediction is the cost model at one configuration.
type Prediction struct {
	CodecResult
	CacheSize  int64
	DiskRead   time.Duration // T_disk_read for this codec's image size
	OptimalR   float64
	HitU, HitC float64
	TRead      time.Duration // predicted time per page access at OptimalR
}

// Result is a run's measurements and predictions.
type Result struct {
	Dir         string
	PageSize    int
	LivePages   int
	StoredBytes int64
	Device      []DeviceRead
	Codecs      []CodecResult
	Predictions []Prediction // sorted by TRead
	Best        Prediction
	Notes       []string
}

func (o Options) withDefaults() Options {
	if o.Reads <= 0 {
		o.Reads = 2000
	}
	if o.Sample <= 0 {
		o.Sample = 200
	}
	if o.CacheSize <= 0 {
		o.CacheSize = 64 << 20
	}
	if len(o.Codecs) == 0 {
		o.Codecs = DefaultCodecs
	}
	return o
}

// Run measures the database in dir.
func Run(dir string, o Options) (*Result, error) {
	o = o.withDefaults()
	in, err := pagestore.Inspect(vfs.Default, dir)
	if err != nil {
		return nil, fmt.Errorf("advise: %w", err)
	}
	defer in.Close()
	if !in.MapUsable {
		return nil, errors.New("advise: the checkpoint is unreadable; run strata check")
	}
	res := &Result{Dir: dir, PageSize: in.PageSize}
	ids := in.Pages()
	res.LivePages = len(ids)
	rng := rand.New(rand.NewPCG(o.Seed, 0xadd))
	// The sample: random pages other than the meta page.
	pool := slices.DeleteFunc(slices.Clone(ids), func(id pagestore.PageID) bool { return id == 0 })
	if len(pool) == 0 {
		return nil, errors.New("advise: the database holds no pages yet; load some data first")
	}
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	sample := make([][]byte, 0, o.Sample)
	for _, id := range pool[:min(o.Sample, len(pool))] {
		p := make([]byte, in.PageSize)
		if err := in.ReadPage(id, p); err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("page %d unreadable (%v): run strata check", id, err))
			continue
		}
		sample = append(sample, p)
	}
	for _, id := range ids {
		_, _, n := in.Record(id)
		res.StoredBytes += int64(n)
	}
	// Codecs at the database's page size and, estimated, at the others.
	for ps := pagestore.MinPageSize; ps <= pagestore.MaxPageSize; ps *= 2 {
		pages := resample(sample, in.PageSize, ps)
		if len(pages) == 0 {
			// Fewer sampled pages than one page of this size joins: no
			// estimate (a ratio of 0/0 made the device's read size
			// overflow, and advise panicked).
			continue
		}
		for _, name := range o.Codecs {
			cr, err := measureCodec(name, pages)
			if err != nil {
				return nil, err
			}
			cr.PageSize, cr.Estimate = ps, ps != in.PageSize
			res.Codecs = append(res.Codecs, cr)
		}
	}
	// The device: random reads of the sizes images take.
	sizes := map[int]bool{}
	for _, cr := range res.Codecs {
		sizes[imageReadSize(cr.PageSize, cr.Ratio)] = true
	}
	var sorted []int
	for n := range sizes {
		sorted = append(sorted, n)
	}
	sort.Ints(sorted)
	files := in.SegmentFiles()
	for _, n := range sorted {
		dr, err := measureReads(files, n, o.Reads, rng)
		if err != nil {
			return nil, err
		}
		res.Device = append(res.Device, dr)
	}
	if len(res.Device) > 0 && !res.Device[0].Direct {
		res.Notes = append(res.Notes, "the file system refused direct I/O: device reads may have been served by the OS page cache")
	}
	// The model for every codec, page size and R.
	logical := int64(len(ids)) * int64(in.PageSize)
	for _, cr := range res.Codecs {
		p := Predict(cr, o.CacheSize, logical, res.diskRead(imageReadSize(cr.PageSize, cr.Ratio)))
		res.Predictions = append(res.Predictions, p)
	}
	sort.SliceStable(res.Predictions, func(i, j int) bool { return res.Predictions[i].TRead < res.Predictions[j].TRead })
	res.Best = res.Predictions[0]
	return res, nil
}

// Predict evaluates the model for one codec result at one cache size: the
// optimal R and the time per page access there.
func Predict(cr CodecResult, cache, logical int64, disk time.Duration) Prediction {
	m := bufferpool.Model{Alpha: 1 / cr.Ratio, Beta: float64(cache) / float64(max(logical, 1)),
		TDecom: float64(cr.Decom), TDiskRead: float64(disk), Exclusive: true}
	if cr.Codec == "none" {
		m.TDecom = 0
	}
	r := m.OptimalShare()
	hc, hu := m.HitRatios(r)
	return Prediction{CodecResult: cr, CacheSize: cache, DiskRead: disk, OptimalR: r, HitU: hu, HitC: hc, TRead: time.Duration(m.TRead(r))}
}

// PredictAt is the model for the running configuration at share R.
func PredictAt(cr CodecResult, cache, logical int64, disk time.Duration, R float64) (hu, hc float64, t time.Duration) {
	m := bufferpool.Model{Alpha: 1 / cr.Ratio, Beta: float64(cache) / float64(max(logical, 1)),
		TDecom: float64(cr.Decom), TDiskRead: float64(disk), Exclusive: true}
	hc, hu = m.HitRatios(R)
	return hu, hc, time.Duration(m.TRead(R))
}

// LogicalBytes is the data size DS of the model.
func (r *Result) LogicalBytes() int64 { return int64(r.LivePages) * int64(r.PageSize) }

// Current returns the codec result of codec name at the database's page size.
func (r *Result) Current(name string) (CodecResult, bool) {
	for _, cr := range r.Codecs {
		if cr.Codec == name && cr.PageSize == r.PageSize {
			return cr, true
		}
	}
	return CodecResult{}, false
}

// DiskRead is the measured mean read time for an image of that codec result.
func (r *Result) DiskRead(cr CodecResult) time.Duration {
	return r.diskRead(imageReadSize(cr.PageSize, cr.Ratio))
}

func (r *Result) diskRead(n int) time.Duration {
	for _, d := range r.Device {
		if d.Bytes >= n {
			return d.Mean
		}
	}
	if len(r.Device) == 0 {
		return 0
	}
	return r.Device[len(r.Device)-1].Mean
}

// imageReadSize is what reading one image costs on the device: its
// compressed size plus a record header, in whole 4 KiB blocks (direct I/O),
// plus one block for an image that straddles a boundary on average.
func imageReadSize(pageSize int, ratio float64) int {
	n := int(float64(pageSize)/ratio) + 36
	blocks := (n + vfs.BlockSize - 1) / vfs.BlockSize
	return blocks * vfs.BlockSize
}

// resample cuts (smaller sizes) or joins (larger) the sampled pages into
// pages of size ps: an estimate of what pages of that size would hold.
func resample(sample [][]byte, have, ps int) [][]byte {
	if ps == have {
		return sample
	}
	var out [][]byte
	if ps < have {
		for _, p := range sample {
			for off := 0; off+ps <= have; off += ps {
				out = append(out, p[off:off+ps])
			}
		}
		return out
	}
	per := ps / have
	for i := 0; i+per <= len(sample); i += per {
		var b []byte
		for j := 0; j < per; j++ {
			b = append(b, sample[i+j]...)
		}
		out = append(out, b)
	}
	return out
}

// measureCodec compresses and decompresses every page with the codec.
func measureCodec(name string, pages [][]byte) (CodecResult, error) {
	c, err := codec.Parse(name)
	if err != nil {
		return CodecResult{}, fmt.Errorf("advise: %w", err)
	}
	cr := CodecResult{Codec: name}
	if len(pages) == 0 {
		return cr, nil
	}
	var raw, stored int64
	var comp, decom time.Duration
	buf := make([]byte, 0, 2*len(pages[0])+64)
	dst := make([]byte, len(pages[0]))
	const rounds = 3 // repeat for stable timings; keep the fastest round
	for round := 0; round < rounds; round++ {
		var rc, rd time.Duration
		var st int64
		for _, p := range pages {
			start := time.Now()
			out, used, err := codec.EncodePage(c, buf, p)
			rc += time.Since(start)
			if err != nil {
				return cr, fmt.Errorf("advise: %s: %w", name, err)
			}
			st += int64(len(out))
			start = time.Now()
			if err := codec.Decompress(used, dst, out); err != nil {
				return cr, fmt.Errorf("advise: %s: %w", name, err)
			}
			rd += time.Since(start)
			buf = out[:0]
		}
		if round == 0 || rc < comp {
			comp = rc
		}
		if round == 0 || rd < decom {
			decom = rd
		}
		stored = st
	}
	for _, p := range pages {
		raw += int64(len(p))
	}
	n := time.Duration(len(pages))
	cr.Ratio = float64(raw) / float64(stored)
	cr.Comp, cr.Decom = comp/n, decom/n
	return cr, nil
}

// measureReads times n random reads of size bytes at block-aligned offsets
// of the segment files, with direct I/O if the file system allows it.
func measureReads(files []vfs.File, size, n int, rng *rand.Rand) (DeviceRead, error) {
	dr := DeviceRead{Bytes: size}
	type target struct {
		f    vfs.File
		size int64
	}
	var targets []target
	for _, f := range files {
		df, err := vfs.Default.OpenFile(f.Name(), os.O_RDONLY, 0, vfs.OpenOptions{Direct: true})
		if errors.Is(err, os.ErrNotExist) {
			continue // removed by the store's cleaner (a running server)
		}
		if err != nil {
			return dr, fmt.Errorf("advise: %w", err)
		}
		defer df.Close()
		sz, err := df.Size()
		if err != nil {
			return dr, fmt.Errorf("advise: %w", err)
		}
		if sz >= int64(size) {
			targets = append(targets, target{df, sz})
			dr.Direct = df.Direct()
		}
	}
	if len(targets) == 0 {
		return dr, nil
	}
	buf := vfs.AlignedBuffer(size)
	times := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t := targets[rng.IntN(len(targets))]
		blocks := (t.size - int64(size)) / vfs.BlockSize
		off := rng.Int64N(blocks+1) * vfs.BlockSize
		start := time.Now()
		if _, err := t.f.ReadAt(buf, off); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				// A running server's store removed and is freeing this
				// segment (pagestore frees removed files from the end).
				continue
			}
			return dr, fmt.Errorf("advise: read %s at %d: %w", t.f.Name(), off, err)
		}
		times = append(times, time.Since(start))
	}
	if len(times) == 0 {
		return dr, nil
	}
	slices.Sort(times)
	var sum time.Duration
	for _, d := range times {
		sum += d
	}
	dr.Mean = sum / time.Duration(len(times))
	dr.P50 = times[len(times)/2]
	dr.P99 = times[len(times)*99/100]
	return dr, nil
}

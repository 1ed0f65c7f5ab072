package bufferpool

import (
	"math"
	"time"

	"github.com/stratadb/strata/internal/codec"
)

// Stats describe the pool. Counts are since New.
type Stats struct {
	CacheSize  int64
	Partitions int
	PageSize   int

	// Access outcomes: uncompressed hits (H_u), compressed hits (H_c) and
	// misses, and their ratios to all accesses.
	HitsUncompressed, HitsCompressed, Misses int64
	HitRatioU, HitRatioC, MissRatio          float64

	// Costs measured online: T_disk_read (store read of one image),
	// T_decom (decompression of one page), T_comp (compression of one
	// demoted page). Moving averages.
	TDiskRead, TDecom, TComp time.Duration
	// TDecomByCodec is T_decom per codec of the pages decompressed (a
	// store may hold pages of several codecs); TDecom is their mix.
	TDecomByCodec map[codec.ID]time.Duration

	// R: the applied compressed share, and the share the controller wants
	// (equal in auto mode; in fixed mode, what auto would choose).
	Share, TargetShare float64
	Auto               bool
	// The controller's last inputs: gains per equal memory, and ghost hits.
	GainUncompressed, GainCompressed float64 // nanoseconds saved per interval
	GhostHitsU, GhostHitsC           int64   // since New
	ControllerSteps                  int64

	// Memory.
	FrameBytes, ImageBytes, MetaBytes int64 // in use
	ResidentBytes                     int64 // frames and image pages backed by memory
	Frames, Images                    int64
	FrameTarget                       int64 // frames the uncompressed tier may hold
	ImageTargetBytes                  int64

	Evictions        int64 // frames evicted (demoted or dropped)
	Demotions        int64 // frames compressed into the compressed tier
	Promotions       int64 // images decompressed into frames (= compressed hits)
	ImageEvictions   int64
	DirtyPages       int64
	Flushes          int64 // pages written back by the page cleaners (in the background)
	FlushAllWrites   int64 // pages written back by FlushAll (checkpoints, Close)
	FreeBufferWaits  int64 // accesses that found no clean frame and waited
	FreeBufferWaited time.Duration
	LoadErrors       int64
}

// Stats returns a snapshot of the pool's statistics.
func (p *Pool) Stats() Stats {
	st := Stats{
		CacheSize:   p.opts.CacheSize,
		Partitions:  len(p.parts),
		PageSize:    p.pageSize,
		Share:       p.Share(),
		TargetShare: math.Float64frombits(p.target.Load()),
		Auto:        !p.fixed.Load(),
	}
	for _, pt := range p.parts {
		s := &pt.st
		st.HitsUncompressed += s.hitsU.Load()
		st.HitsCompressed += s.hitsC.Load()
		st.Misses += s.misses.Load()
		st.Evictions += s.evictFrames.Load()
		st.Demotions += s.demotions.Load()
		st.Promotions += s.promotions.Load()
		st.ImageEvictions += s.evictImages.Load()
		st.Flushes += s.flushes.Load()
		st.FlushAllWrites += s.checkpointWrites.Load()
		st.FreeBufferWaits += s.fbWaits.Load()
		st.FreeBufferWaited += time.Duration(s.fbWaitNanos.Load())
		st.LoadErrors += s.loadErrors.Load()
		st.GhostHitsU += s.totalGhostU.Load()
		st.GhostHitsC += s.totalGhostC.Load()
		st.DirtyPages += pt.dirty.Load()
		pt.mu.RLock()
		st.FrameBytes += int64(pt.framesUsed * pt.ps)
		st.ImageBytes += int64(pt.chunksUsed * chunkSize)
		st.MetaBytes += int64(pt.metaBytes())
		st.ResidentBytes += int64(pt.residentFrames*pt.ps + pt.residentPages*osPageSize)
		st.Frames += int64(pt.framesUsed)
		st.Images += int64(pt.images)
		st.FrameTarget += int64(pt.frameTarget)
		st.ImageTargetBytes += int64(pt.chunkTarget * chunkSize)
		pt.mu.RUnlock()
	}
	if total := st.HitsUncompressed + st.HitsCompressed + st.Misses; total > 0 {
		st.HitRatioU = float64(st.HitsUncompressed) / float64(total)
		st.HitRatioC = float64(st.HitsCompressed) / float64(total)
		st.MissRatio = float64(st.Misses) / float64(total)
	}
	c := &p.ctl
	c.mu.Lock()
	st.TDiskRead = time.Duration(c.tDisk.v)
	st.TDecom = time.Duration(c.tDecom.v)
	st.TComp = time.Duration(c.tComp.v)
	for i, e := range c.tDecomBy {
		if e.valid {
			if st.TDecomByCodec == nil {
				st.TDecomByCodec = make(map[codec.ID]time.Duration)
			}
			st.TDecomByCodec[codec.ID(i)] = time.Duration(e.v)
		}
	}
	st.GainUncompressed, st.GainCompressed = c.lastGainU, c.lastGainC
	st.ControllerSteps = c.adjustments
	c.mu.Unlock()
	return st
}

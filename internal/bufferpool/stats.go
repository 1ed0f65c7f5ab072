package bufferpool

import (
	"math"
	"time"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
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
	// demoted page). Moving averages, of which an interval's few
	// durations far beyond the others (a descheduled thread) are bounded
	// (timer.go).
	TDiskRead, TDecom, TComp time.Duration
	// TDecomByCodec is T_decom per codec of the pages decompressed (a
	// store may hold pages of several codecs); TDecom is their mix.
	TDecomByCodec map[codec.ID]time.Duration
	// TImageHit and TMiss are the whole times of an access that hit an
	// image and of one that missed, from the start of its load to its end:
	// the eviction it caused (a demotion's compression included), the
	// store read, decompression, verification and waits. Moving averages,
	// bounded as above.
	TImageHit, TMiss time.Duration
	// TimePerAccess is the controller's objective, measured: (image hits
	// × TImageHit + misses × TMiss) per access (image hits × T_decom +
	// compressing demotions × T_comp + misses × (T_disk_read + T_decom)
	// before there are whole times), a moving average over its intervals.
	TimePerAccess time.Duration

	// R: the applied compressed share, and the share the controller wants
	// (equal in auto mode; in fixed mode, what auto would choose).
	Share, TargetShare float64
	Auto               bool
	// Compressing: frames without an image are compressed when evicted
	// (the controller's gate; off when those compressions do not pay, and
	// from a frames trial's start until the gate brings them back after a
	// kept one's hold, or the trial goes back, lost or won a first time:
	// trial.go).
	Compressing bool
	// The controller's last inputs, in nanoseconds per decision: what a
	// tenth of the budget more would save in each tier, and what a tenth
	// less would cost (equal to the gain when the tier evicts; estimated
	// from its hits when it does not). Ghost hits are since New.
	GainUncompressed, GainCompressed float64
	LossUncompressed, LossCompressed float64
	GhostHitsU, GhostHitsC           int64
	ControllerSteps                  int64
	// ControllerJumps are the steps that lowered R at once by more than
	// a hill-climb step, predicted from the depth of image hits below the
	// frames (a hot set the frames would hold if they were larger). In
	// auto mode each is measured as a trial (counted in ControllerTrials
	// too); JumpsKept are those the measurement kept.
	ControllerJumps, JumpsKept int64
	// MissProbes are the store reads the controller made to measure a
	// miss while nothing missed (probe.go).
	MissProbes int64
	// ControllerTrials are the times the controller left its regime to
	// measure another (trial.go), far-view jumps included (jump.go);
	// TrialsKept those that kept it (JumpsKept included).
	// FramesTrials and FramesTrialsKept count those of them that
	// measured frames alone (R = MinShare, no compressing demotion).
	ControllerTrials, TrialsKept   int64
	FramesTrials, FramesTrialsKept int64

	// Document 000's model (equation 9, exclusive tiers) with the measured
	// T_decom and T_disk_read, α and β from the store's sizes and the
	// budget (zero when the store does not report its sizes): its optimum
	// R and its T_read at the current R, to compare with the controller's
	// R and TimePerAccess.
	ModelShare float64
	ModelTRead time.Duration

	// InnerPages are the cached pages marked inner (Page.MarkInner); in
	// auto mode R stays at or below ShareCeiling, which leaves the frames
	// 1.5× their bytes. In fixed mode nothing applies the ceiling, and
	// TargetShare (what auto would want) is at most it.
	InnerPages   int64
	ShareCeiling float64

	// Memory.
	FrameBytes, ImageBytes, MetaBytes int64 // in use
	// ResidentBytes: frames and image pages backed by memory (free frames
	// kept for reuse and partly used image pages included). ResidentBytes
	// + MetaBytes never exceeds CacheSize.
	ResidentBytes int64
	Frames        int64 // pages in frames
	Images        int64 // pages held only as an image
	// RedundantImages are images of pages that are also in a frame
	// (unmodified since read or written back): their demotion is free.
	RedundantImages  int64
	FrameTarget      int64 // frames the uncompressed tier keeps under pressure: (1 − R) of the memory
	ImageTargetBytes int64 // what the images keep under pressure: R of the memory

	Evictions int64 // frames evicted (demoted or dropped)
	Demotions int64 // frames moved to the compressed tier
	// FreeDemotions are the demotions that compressed nothing: the page
	// kept the image it was read from, written as, or promoted from.
	FreeDemotions int64
	// LiteralDemotions are the demotions (counted in Demotions) that
	// compressed their page as a frame of literals (demote_coding.go).
	LiteralDemotions int64
	Promotions       int64 // images decompressed into frames (= compressed hits)
	// KeptImages counts images kept by pages read from the store or
	// written back (redundant copies made by a memcpy).
	KeptImages         int64
	ImageEvictions     int64 // images of pages not in a frame dropped
	RedundantEvictions int64 // redundant images dropped
	MovedPieces        int64 // image pieces moved to give OS pages of the image arena back
	// Discards are the pages Discard dropped from memory (replaced pages
	// no reader needs, still in the store).
	Discards int64
	// Read-ahead (ReadAhead): the store reads it made, the pages it kept
	// as images, the accesses those served (compressed hits, counted in
	// HitsCompressed too) and the pages evicted before any use.
	ReadAheadReads, ReadAheadPages int64
	ReadAheadHits, ReadAheadUnused int64
	DirtyPages                     int64
	Flushes                        int64 // pages written back by the page cleaners (in the background)
	// HotSkips: the times the page cleaners passed over a dirty page
	// because it was a hot inner page (protected from eviction) while no
	// reader waited for a clean frame.
	HotSkips         int64
	FlushAllWrites   int64 // pages written back by FlushAll (checkpoints, Close)
	FreeBufferWaits  int64 // accesses that found no clean frame and waited
	FreeBufferWaited time.Duration
	LoadErrors       int64
}

// storeStats is a store that reports its sizes (pagestore.Store), for the
// model's α and β.
type storeStats interface {
	Stats() pagestore.Stats
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
		Compressing: p.compressing.Load(),
	}
	st.LiteralDemotions = p.coding.coded.Load()
	var avail int64
	for _, pt := range p.parts {
		s := &pt.st
		st.HitsUncompressed += s.hitsU.Load()
		st.HitsCompressed += s.hitsC.Load()
		st.Misses += s.misses.Load()
		st.Evictions += s.evictFrames.Load()
		st.Demotions += s.demotions.Load()
		st.FreeDemotions += s.freeDemotions.Load()
		st.Promotions += s.promotions.Load()
		st.KeptImages += s.keptImages.Load()
		st.ImageEvictions += s.evictImages.Load()
		st.RedundantEvictions += s.evictRedundant.Load()
		st.MovedPieces += s.movedPieces.Load()
		st.Discards += s.discards.Load()
		st.ReadAheadReads += s.raReads.Load()
		st.ReadAheadPages += s.raPages.Load()
		st.ReadAheadHits += s.raHits.Load()
		st.ReadAheadUnused += s.raUnused.Load()
		st.Flushes += s.flushes.Load()
		st.HotSkips += s.hotSkips.Load()
		st.FlushAllWrites += s.checkpointWrites.Load()
		st.FreeBufferWaits += s.fbWaits.Load()
		st.FreeBufferWaited += time.Duration(s.fbWaitNanos.Load())
		st.LoadErrors += s.loadErrors.Load()
		st.GhostHitsU += s.totalGhostU.Load()
		st.GhostHitsC += s.totalGhostC.Load()
		st.DirtyPages += pt.dirty.Load()
		st.InnerPages += pt.innerPages.Load()
		pt.mu.RLock()
		st.FrameBytes += int64(pt.framesUsed * pt.ps)
		st.ImageBytes += int64(pt.imageUsed())
		st.MetaBytes += int64(pt.metaBytes())
		st.ResidentBytes += int64(pt.resident())
		st.Frames += int64(pt.framesUsed)
		st.Images += int64(pt.images)
		st.RedundantImages += int64(pt.redundant)
		st.FrameTarget += int64((pt.avail - pt.imageShare) / pt.ps)
		st.ImageTargetBytes += int64(pt.imageShare)
		avail += int64(pt.avail)
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
	st.TimePerAccess = time.Duration(c.timePerAccess.v)
	st.TImageHit, st.TMiss = time.Duration(c.tHitC.v), time.Duration(c.tMiss.v)
	for i, e := range c.tDecomBy {
		if e.valid {
			if st.TDecomByCodec == nil {
				st.TDecomByCodec = make(map[codec.ID]time.Duration)
			}
			st.TDecomByCodec[codec.ID(i)] = time.Duration(e.v)
		}
	}
	st.GainUncompressed, st.GainCompressed = c.lastGainU, c.lastGainC
	st.LossUncompressed, st.LossCompressed = c.lastLossU, c.lastLossC
	st.ControllerSteps = c.adjustments
	st.ControllerJumps, st.JumpsKept = c.jumps, c.trial.arms[armJump].kept
	st.MissProbes = c.probe.n
	st.ShareCeiling = c.ceiling
	st.ControllerTrials = c.trial.tried()
	for _, a := range c.trial.arms {
		st.TrialsKept += a.kept
	}
	st.FramesTrials, st.FramesTrialsKept = c.trial.arms[armFrames].tried, c.trial.arms[armFrames].kept
	c.mu.Unlock()
	if m, ok := p.model(st, avail); ok {
		st.ModelShare = m.OptimalShare()
		st.ModelTRead = time.Duration(m.TRead(st.Share))
	}
	return st
}

// model is document 000's model for this pool: α and β from the store's
// sizes, the measured T_decom and T_disk_read, exclusive tiers.
func (p *Pool) model(st Stats, avail int64) (Model, bool) {
	ss, ok := p.store.(storeStats)
	if !ok || st.TDecom == 0 || st.TDiskRead == 0 {
		return Model{}, false
	}
	s := ss.Stats()
	if s.LogicalBytes <= 0 || s.StoredBytes <= 0 {
		return Model{}, false
	}
	return Model{
		Alpha:     math.Min(1, float64(s.StoredBytes)/float64(s.LogicalBytes)),
		Beta:      float64(avail) / float64(s.LogicalBytes),
		TDecom:    float64(st.TDecom),
		TDiskRead: float64(st.TDiskRead),
		Exclusive: true,
	}, true
}

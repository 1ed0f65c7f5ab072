package bufferpool

import "math"

// Model is the cost model of document 000 (docs/SEEDS.md, equations 6–10):
// the expected time of one page read as a function of R, the compressed
// tier's share of the buffer pool.
//
//	H_c = R·β·r                    (7)  compressed hits
//	H_u = (1−R)·α·β·r = (1−R)·β    (8)  uncompressed hits (α·r = 1)
//	T_read = (1−H_u)·T_decom + (1−H_c−H_u)·T_disk_read     (6, 9)
//
// with α = PS_com/PS (compressed page size over page size), β = BS/DS
// (buffer size over data size) and r = 1/α the compression ratio.
type Model struct {
	Alpha     float64 // PS_com / PS, in (0, 1]
	Beta      float64 // buffer size / uncompressed data size
	TDecom    float64 // seconds (or any unit, the same for both)
	TDiskRead float64
	// InnoDB keeps every uncompressed page's compressed copy too, so
	// compressed frames can never be outnumbered: R ≥ α/(1+α) (10).
	// Strata's tiers are exclusive, which removes that constraint.
	Exclusive bool
}

// HitRatios returns H_c and H_u at share R, capped so that H_c + H_u ≤ 1
// (the cache cannot hit more than every page).
func (m Model) HitRatios(R float64) (hc, hu float64) {
	r := 1 / m.Alpha
	hc = R * m.Beta * r
	hu = (1 - R) * m.Alpha * m.Beta * r
	if hu > 1 {
		hu = 1
	}
	if hc+hu > 1 {
		hc = 1 - hu
	}
	return hc, hu
}

// TRead is equation 9: the expected time of one page access at share R.
func (m Model) TRead(R float64) float64 {
	hc, hu := m.HitRatios(R)
	return (1-hu)*m.TDecom + (1-hc-hu)*m.TDiskRead
}

// MinShare is the smallest R the constraints allow: α/(1+α) for InnoDB's
// inclusive tiers, 0 for exclusive ones.
func (m Model) MinShare() float64 {
	if m.Exclusive {
		return 0
	}
	return m.Alpha / (1 + m.Alpha)
}

// OptimalShare returns the R in [MinShare, 1] that minimises TRead, found
// on a fine grid (T_read is piecewise linear in R, so the grid contains the
// optimum's neighbourhood to within the grid step).
func (m Model) OptimalShare() float64 {
	lo := m.MinShare()
	best, bestT := lo, math.Inf(1)
	const steps = 10000
	for i := 0; i <= steps; i++ {
		R := lo + (1-lo)*float64(i)/steps
		if t := m.TRead(R); t < bestT-1e-15 {
			best, bestT = R, t
		}
	}
	return best
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratadb/strata"
	"github.com/stratadb/strata/internal/advise"
	"github.com/stratadb/strata/internal/codec"
)

func newAdviseCommand() *cobra.Command {
	var o advise.Options
	var cache, addr, password, current string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "advise DIR",
		Short: "measure the device and the codecs on a database's pages; recommend a configuration",
		Long: `Measure, on this machine and the database in DIR (read-only):
  - random reads of page images in its segment files with direct I/O
    (T_disk_read per read size);
  - each codec's compression ratio, T_comp and T_decom on a sample of its
    own pages (other page sizes: estimated by cutting or joining them);
then evaluate document 000's cost model (exclusive tiers) for every codec,
page size and cache size, and recommend the configuration with the lowest
predicted time per page access, with its optimal R.

With --addr of a strata serve running on this database, the model's
prediction for the running configuration is printed beside what the
buffer pool's controller measures (H_u, H_c, T_disk_read, T_decom, R).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cache != "" {
				n, err := parseSize(cache)
				if err != nil {
					return fmt.Errorf("--cache: %w", err)
				}
				o.CacheSize = n
			}
			if addr != "" {
				st, err := remoteStats(cmd.Context(), addr, password)
				if err != nil {
					return err
				}
				o.Live = &st
				if cache == "" {
					o.CacheSize = st.Pool.CacheSize
				}
			}
			if o.CacheSize == 0 {
				o.CacheSize = 64 << 20 // Open's default, as the help says
			}
			res, err := advise.Run(args[0], o)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			writeAdvice(cmd.OutOrStdout(), res, o, current)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&o.Reads, "reads", 2000, "random device reads per read size")
	fl.IntVar(&o.Sample, "sample", 200, "pages sampled for the codec measurements")
	fl.StringVar(&cache, "cache", "", "cache size to advise for (default: the server's with --addr, else 64MiB)")
	fl.StringVar(&current, "codec", "zstd", "the codec the database uses now (for the comparison; zstd is Open's default)")
	fl.StringVar(&addr, "addr", "", "a strata serve running on this database: compare with its controller's measurements")
	fl.StringVar(&password, "password", "", "its --requirepass")
	fl.BoolVar(&asJSON, "json", false, "print the measurements and predictions as JSON")
	return cmd
}

func usStr(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/1e3) }

func writeAdvice(w io.Writer, r *advise.Result, o advise.Options, current string) {
	fmt.Fprintf(w, "%s: %d pages of %s, %s stored (r = %.2f)\n\n", r.Dir, r.LivePages, formatSize(int64(r.PageSize)),
		formatSize(r.StoredBytes), float64(r.LogicalBytes())/float64(max(r.StoredBytes, 1)))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "Device: random reads in the segment files")
	fmt.Fprintln(tw, "bytes\tmean µs\tp50 µs\tp99 µs\tdirect I/O\t")
	for _, d := range r.Device {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%v\t\n", d.Bytes, usStr(d.Mean), usStr(d.P50), usStr(d.P99), d.Direct)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nModel (document 000, eq. 9, exclusive tiers) at a %s cache, data %s; best first\n", formatSize(o.CacheSize), formatSize(r.LogicalBytes()))
	fmt.Fprintln(tw, "codec\tpage\tratio\tT_comp µs\tT_decom µs\tT_disk_read µs\toptimal R\tH_u\tH_c\tpredicted T_read µs\t")
	for i, p := range r.Predictions {
		if i == 15 {
			break
		}
		est := ""
		if p.Estimate {
			est = " (est.)"
		}
		fmt.Fprintf(tw, "%s\t%s%s\t%.2f\t%s\t%s\t%s\t%.2f\t%.3f\t%.3f\t%s\t\n", p.Codec, formatSize(int64(p.PageSize)), est, p.Ratio,
			usStr(p.Comp), usStr(p.Decom), usStr(p.DiskRead), p.OptimalR, p.HitU, p.HitC, usStr(p.TRead))
	}
	tw.Flush()
	// Cache sizes for the best configuration.
	b := r.Best
	fmt.Fprintf(w, "\nCache size for %s, %s pages (model, optimal R at each size)\n", b.Codec, formatSize(int64(b.PageSize)))
	fmt.Fprintln(tw, "cache\toptimal R\tH_u\tH_c\tpredicted T_read µs\t")
	compressed := int64(float64(r.LogicalBytes()) / b.Ratio)
	for _, c := range []int64{o.CacheSize / 2, o.CacheSize, 2 * o.CacheSize, 4 * o.CacheSize, compressed, r.LogicalBytes()} {
		if c <= 0 {
			continue
		}
		p := advise.Predict(b.CodecResult, c, r.LogicalBytes(), b.DiskRead)
		fmt.Fprintf(tw, "%s\t%.2f\t%.3f\t%.3f\t%s\t\n", formatSize(c), p.OptimalR, p.HitU, p.HitC, usStr(p.TRead))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nRecommendation: codec %s, %s pages, R = %.2f (or auto) at %s of cache: predicted %s µs per page access.\n",
		b.Codec, formatSize(int64(b.PageSize)), b.OptimalR, formatSize(o.CacheSize), usStr(b.TRead))
	fmt.Fprintf(w, "With the whole compressed data in cache (%s) no access would read the device.\n", formatSize(compressed))
	if b.PageSize != r.PageSize {
		fmt.Fprintf(w, "The page size of an existing database cannot change: it applies to a new one (strata serve --page-size on an empty directory).\n")
	}
	if cur, ok := r.Current(current); ok {
		p := advise.Predict(cur, o.CacheSize, r.LogicalBytes(), r.DiskRead(cur))
		fmt.Fprintf(w, "The codec given as current (--codec %s; pass the database's if it is not): %s pages, predicted %s µs at R = %.2f.\n", current, formatSize(int64(r.PageSize)), usStr(p.TRead), p.OptimalR)
		if st := o.Live; st != nil {
			writeLiveComparison(w, cur, r, st)
		}
	}
	if o.Live == nil {
		fmt.Fprintln(w, "\n(No controller figures: pass --addr of a strata serve running on this database to compare.)")
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// writeLiveComparison puts the model's prediction at the server's current
// R beside what its controller measured.
func writeLiveComparison(w io.Writer, cur advise.CodecResult, r *advise.Result, st *strata.Stats) {
	p := st.Pool
	disk := r.DiskRead(cur)
	hu, hc, t := advise.PredictAt(cur, p.CacheSize, r.LogicalBytes(), disk, p.Share)
	measuredDecom := p.TDecom
	id := codec.ID(codecID(cur.Codec))
	if d, ok := p.TDecomByCodec[codec.ZstdDict]; ok && id == codec.Zstd {
		// The store compresses with its dictionary: what its pages cost.
		measuredDecom = d
	} else if d, ok := p.TDecomByCodec[id]; ok {
		measuredDecom = d
	}
	measuredT := time.Duration((1-p.HitRatioU)*float64(measuredDecom) + p.MissRatio*float64(p.TDiskRead))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\nThe running server (R = %.2f, target %.2f, auto %v), model vs its controller:\n", p.Share, p.TargetShare, p.Auto)
	fmt.Fprintln(tw, "\tH_u\tH_c\tmiss\tT_disk_read µs\tT_decom µs\tT_comp µs\tT_read µs\t")
	fmt.Fprintf(tw, "model\t%.3f\t%.3f\t%.3f\t%s\t%s\t%s\t%s\t\n", hu, hc, 1-hu-hc, usStr(disk), usStr(cur.Decom), usStr(cur.Comp), usStr(t))
	fmt.Fprintf(tw, "measured\t%.3f\t%.3f\t%.3f\t%s\t%s\t%s\t%s\t\n", p.HitRatioU, p.HitRatioC, p.MissRatio, usStr(p.TDiskRead), usStr(p.TDecom), usStr(p.TComp), usStr(measuredT))
	tw.Flush()
}

func codecID(name string) uint8 {
	c, err := codec.Parse(name)
	if err != nil {
		return 0
	}
	return uint8(c.ID())
}

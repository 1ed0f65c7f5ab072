package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/sysbench"
	"github.com/stratadb/strata/internal/vfs"
)

type demoFlags struct {
	rows       uint64
	codecs     string
	pageSize   int
	fillFactor int
	dir        string
	noDirect   bool
	reads      int
	seed       uint64
}

func newDemoCommand() *cobra.Command {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Load sysbench-style rows into the page store and report space and speed per codec",
		Long: `demo generates sysbench OLTP rows (id, k, c char(120), pad char(60)), packs
them into pages at the given fill factor, writes the pages to a page store
once per codec, reads pages back at random, and prints a table: compression
ratio r, stored and physical size, the size the same compressed pages would
take if each were padded to 4 KiB, and write/read throughput.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd.OutOrStdout(), f) },
	}
	fl := cmd.Flags()
	fl.Uint64Var(&f.rows, "rows", 1_000_000, "sysbench rows to load")
	fl.StringVar(&f.codecs, "codec", "none,lz4,lz4-9,zstd-1,zstd-3,zstd-9,deflate-6,snappy", "comma-separated codecs to compare")
	fl.IntVar(&f.pageSize, "page-size", pagestore.DefaultPageSize, "page size in bytes (power of two, 4096..65536)")
	fl.IntVar(&f.fillFactor, "fill-factor", 100, "percent of each page filled with rows (10..100); the rest is zero")
	fl.StringVar(&f.dir, "dir", "", "directory for the stores (default: a temporary directory, removed afterwards)")
	fl.BoolVar(&f.noDirect, "no-direct-io", false, "use buffered instead of direct I/O")
	fl.IntVar(&f.reads, "reads", 20000, "random page reads to time per codec")
	fl.Uint64Var(&f.seed, "seed", 1, "data generator seed")
	return cmd
}

type demoResult struct {
	codec                      string
	st                         pagestore.Stats
	padded4K                   int64
	writeTime, readTime        time.Duration
	reads                      int
	meanDecompress, meanDiskRd time.Duration
}

func runDemo(out io.Writer, f demoFlags) error {
	dir := f.dir
	if dir == "" {
		d, err := os.MkdirTemp(".", "strata-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	var results []demoResult
	for i, name := range strings.Split(f.codecs, ",") {
		c, err := codec.Parse(strings.TrimSpace(name))
		if err != nil {
			return err
		}
		path := fmt.Sprintf("%s/%d-%s", dir, i, c)
		if err := mustBeNew(path); err != nil {
			return err
		}
		r, err := demoOne(path, c, f)
		if err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
		results = append(results, r)
	}
	mib := func(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }
	fmt.Fprintf(out, "%d sysbench rows, %d-byte pages, fill factor %d%%, direct I/O %v\n\n",
		f.rows, f.pageSize, f.fillFactor, len(results) > 0 && results[0].st.DirectIO)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "codec\tpages\tlogical MiB\tstored MiB\tr\tphysical MiB\tphys/stored\tpadded-4K MiB\t4K waste\twrite MB/s\tread MB/s\tT_decom µs\tT_disk_read µs\t")
	for _, r := range results {
		st := r.st
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.2f\t%s\t%.3f\t%s\t%.1f%%\t%.0f\t%.0f\t%.1f\t%.1f\t\n",
			r.codec, st.LivePages, mib(st.LogicalBytes), mib(st.StoredBytes), st.CompressionRatio,
			mib(st.PhysicalBytes), float64(st.PhysicalBytes)/float64(st.StoredBytes),
			mib(r.padded4K), 100*float64(r.padded4K-st.StoredBytes)/float64(st.StoredBytes),
			float64(st.LogicalBytes)/r.writeTime.Seconds()/1e6,
			float64(r.reads*st.PageSize)/r.readTime.Seconds()/1e6,
			float64(r.meanDecompress.Nanoseconds())/1e3, float64(r.meanDiskRd.Nanoseconds())/1e3)
	}
	tw.Flush()
	fmt.Fprintln(out, "\nr = logical/stored; phys/stored = segment and checkpoint bytes over compressed payload bytes;")
	fmt.Fprintln(out, "padded-4K = the same compressed pages if each occupied whole 4 KiB blocks (InnoDB/file-system compression).")
	return nil
}

func demoOne(dir string, c codec.Codec, f demoFlags) (demoResult, error) {
	res := demoResult{codec: c.String()}
	s, err := pagestore.Open(dir, pagestore.Options{
		PageSize:        f.pageSize,
		Codec:           c,
		DisableDirectIO: f.noDirect,
	})
	if err != nil {
		return res, err
	}
	start := time.Now()
	var pages uint64
	err = sysbench.Pages(f.seed, f.rows, f.pageSize, f.fillFactor, func(pageNo uint64, page []byte) error {
		_, stored, err := s.WritePage(pagestore.PageID(pageNo), page)
		res.padded4K += int64(stored+vfs.BlockSize-1) &^ (vfs.BlockSize - 1)
		pages++
		return err
	})
	if err == nil {
		err = s.Sync()
	}
	res.writeTime = time.Since(start)
	if err != nil {
		s.Close()
		return res, err
	}
	// Reopen so that reads come from the files, not the write buffer.
	if err := s.Close(); err != nil {
		return res, err
	}
	if s, err = pagestore.Open(dir, pagestore.Options{Codec: c, DisableDirectIO: f.noDirect}); err != nil {
		return res, err
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(f.seed, 99))
	buf := make([]byte, f.pageSize)
	start = time.Now()
	for i := 0; i < f.reads && pages > 0; i++ {
		if err := s.ReadPage(pagestore.PageID(rng.Uint64N(pages)), buf); err != nil {
			return res, err
		}
		res.reads++
	}
	res.readTime = time.Since(start)
	res.st = s.Stats()
	res.meanDiskRd = res.st.MeanDiskRead()
	for _, cs := range res.st.Codecs {
		dict := c.ID() == codec.Zstd && cs.Codec == codec.ZstdDict // zstd pages written with the store's dictionary
		if cs.Codec == c.ID() || dict || (cs.Decompressions > 0 && res.meanDecompress == 0) {
			res.meanDecompress = cs.MeanDecompress()
		}
	}
	return res, nil
}

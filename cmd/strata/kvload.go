package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratadb/strata"
	"github.com/stratadb/strata/internal/pagestore"
	"github.com/stratadb/strata/internal/sysbench"
)

type kvLoadFlags struct {
	rows        int
	codecs      string
	fillFactors string
	dir         string
	pageSize    int
}

func newKVLoadCommand() *cobra.Command {
	var f kvLoadFlags
	cmd := &cobra.Command{
		Use:   "kv-load",
		Short: "Load sysbench rows into a Strata database and report logical and physical size",
		Long: `kv-load inserts sysbench rows (8-byte big-endian id → k, c, pad) in id order
through the public API, once per codec and fill factor, checkpoints, and
prints the B+tree's logical size (pages × page size), the stored size of
its compressed pages (with record headers) and the physical size of the
files (which also holds garbage the cleaner has not reclaimed yet):
document 001's fill-factor experiment.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runKVLoad(cmd.OutOrStdout(), f) },
	}
	fl := cmd.Flags()
	fl.IntVar(&f.rows, "rows", 1_000_000, "rows to insert")
	fl.StringVar(&f.codecs, "codec", "none,lz4,zstd,deflate", "comma-separated codecs")
	fl.StringVar(&f.fillFactors, "fill-factor", "100,75", "comma-separated fill factors (percent)")
	fl.StringVar(&f.dir, "dir", "", "directory for the databases (default: a temporary one, removed)")
	fl.IntVar(&f.pageSize, "page-size", pagestore.DefaultPageSize, "page size in bytes (power of two, 4096..65536)")
	return cmd
}

func runKVLoad(out io.Writer, f kvLoadFlags) error {
	dir := f.dir
	if dir == "" {
		d, err := os.MkdirTemp(".", "strata-kvload-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	fmt.Fprintf(out, "%d sysbench rows, %d KiB pages, inserted in id order in batches of 1000\n\n", f.rows, f.pageSize>>10)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "codec\tfill factor\tpages\tlogical MiB\tstored MiB\tphysical MiB\tr\tload s\t")
	for _, c := range strings.Split(f.codecs, ",") {
		for _, ffs := range strings.Split(f.fillFactors, ",") {
			var ff int
			fmt.Sscan(ffs, &ff)
			path := fmt.Sprintf("%s/%s-%d", dir, c, ff)
			if err := mustBeNew(path); err != nil {
				return err
			}
			start := time.Now()
			st, err := kvLoad(path, c, ff, f.pageSize, f.rows)
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "%s\t%d%%\t%d\t%.1f\t%.1f\t%.1f\t%.2f\t%.1f\t\n", c, ff, st.Store.LivePages,
				float64(st.Store.LogicalBytes)/(1<<20), float64(st.Store.LiveRecordBytes)/(1<<20), float64(st.Store.PhysicalBytes)/(1<<20),
				st.Store.CompressionRatio, time.Since(start).Seconds())
		}
	}
	return tw.Flush()
}

func kvLoad(path, codecName string, fillFactor, pageSize, rows int) (strata.Stats, error) {
	db, err := strata.Open(path, &strata.Options{PageSize: pageSize, Codec: codecName, FillFactor: fillFactor, Sync: strata.SyncNever})
	if err != nil {
		return strata.Stats{}, err
	}
	g := sysbench.NewGenerator(1, uint64(rows))
	var row sysbench.Row
	b := db.NewBatch()
	key := make([]byte, 8)
	val := make([]byte, 0, sysbench.RowSize)
	for id := 1; id <= rows; id++ {
		g.Row(uint64(id), &row)
		binary.BigEndian.PutUint64(key, uint64(id))
		val = row.Encode(val[:0])
		b.Set(key, val[8:])
		if b.Len() == 1000 || id == rows {
			if err := b.Commit(strata.NoSync); err != nil {
				db.Close()
				return strata.Stats{}, err
			}
			b.Reset()
		}
	}
	if err := db.Checkpoint(); err != nil {
		db.Close()
		return strata.Stats{}, err
	}
	// Let the page store's cleaner reclaim the space of the pages that
	// copy-on-write replaced during the load.
	for i := 0; i < 50; i++ {
		st := db.Stats()
		if st.Store.GarbageBytes*10 < st.Store.PhysicalBytes {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	st := db.Stats()
	return st, db.Close()
}

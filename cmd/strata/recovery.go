package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratadb/strata"
	"github.com/stratadb/strata/internal/sysbench"
)

type recoveryFlags struct {
	rows   int
	walMiB int64
	dir    string
	child  bool
}

func newRecoveryCommand() *cobra.Command {
	var f recoveryFlags
	cmd := &cobra.Command{
		Use:   "recovery-time",
		Short: "Measure recovery after a crash: a loaded database, a full WAL, a killed process, a timed Open",
		Long: `recovery-time loads sysbench rows into a database in a child process,
checkpoints, then keeps committing synced batches without checkpointing until
the WAL holds --wal-mib MiB, and exits without closing (a crash: the buffer
pool's dirty pages are lost, the WAL is durable). The parent then times Open,
which replays the WAL, checkpoints and frees unreachable pages.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.child {
				return recoveryChild(f)
			}
			return recoveryParent(cmd.OutOrStdout(), f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.rows, "rows", 5_500_000, "rows to load first (5.5M sysbench rows ≈ 1 GiB logical)")
	fl.Int64Var(&f.walMiB, "wal-mib", 64, "WAL size to leave for recovery, in MiB")
	fl.StringVar(&f.dir, "dir", "", "a new or empty directory for the database it loads (default: a temporary one, removed)")
	fl.BoolVar(&f.child, "child", false, "internal: run the loading child")
	fl.MarkHidden("child")
	return cmd
}

func recoveryParent(out io.Writer, f recoveryFlags) error {
	if f.rows <= 0 || f.walMiB <= 0 {
		return fmt.Errorf("--rows %d, --wal-mib %d: want both positive", f.rows, f.walMiB)
	}
	dir := f.dir
	if dir != "" {
		if err := mustBeNew(dir); err != nil {
			return fmt.Errorf("--dir: %w", err)
		}
	} else {
		d, err := os.MkdirTemp(".", "strata-recovery-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d + "/db"
	}
	child := exec.Command(os.Args[0], "recovery-time", "--child", "--dir", dir,
		"--rows", fmt.Sprint(f.rows), "--wal-mib", fmt.Sprint(f.walMiB))
	child.Stdout, child.Stderr = out, os.Stderr
	start := time.Now()
	if err := child.Run(); err != nil {
		return fmt.Errorf("loading child: %w", err)
	}
	fmt.Fprintf(out, "load and crash: %.1f s\n", time.Since(start).Seconds())
	start = time.Now()
	// Open's log says how long the replay, its checkpoint and the walk
	// for unreachable pages took.
	db, err := strata.Open(dir, &strata.Options{Logger: slog.New(slog.NewTextHandler(out, nil))})
	if err != nil {
		return err
	}
	took := time.Since(start)
	st := db.Stats()
	fmt.Fprintf(out, "recovery (Open): %.2f s; database %.0f MiB logical, %.0f MiB physical; %d pages\n",
		took.Seconds(), float64(st.Store.LogicalBytes)/(1<<20), float64(st.Store.PhysicalBytes)/(1<<20), st.Store.LivePages)
	return db.Close()
}

func recoveryChild(f recoveryFlags) error {
	db, err := strata.Open(f.dir, &strata.Options{Sync: strata.SyncNever, CheckpointWAL: 1 << 40, CheckpointReplaced: -1})
	if err != nil {
		return err
	}
	g := sysbench.NewGenerator(1, uint64(f.rows))
	var row sysbench.Row
	b := db.NewBatch()
	key := make([]byte, 8)
	val := make([]byte, 0, sysbench.RowSize)
	put := func(id int) {
		g.Row(uint64(id), &row)
		binary.BigEndian.PutUint64(key, uint64(id))
		val = row.Encode(val[:0])
		b.Set(key, val[8:])
	}
	for id := 1; id <= f.rows; id++ {
		put(id)
		if b.Len() == 1000 || id == f.rows {
			if err := b.Commit(strata.NoSync); err != nil {
				return err
			}
			b.Reset()
		}
	}
	if err := db.Checkpoint(); err != nil {
		return err
	}
	// Updates of random rows, synced, until the WAL is full.
	fmt.Printf("loaded %d rows; filling the WAL\n", f.rows)
	base := db.Stats().WAL.Bytes // the checkpoint truncated the WAL to nothing
	for id := 1; db.Stats().WAL.Bytes-base < f.walMiB<<20; id = (id*7919)%f.rows + 1 {
		put(id)
		if b.Len() == 100 {
			if err := b.Commit(strata.Sync); err != nil {
				return err
			}
			b.Reset()
		}
	}
	fmt.Printf("WAL: %d MiB since the checkpoint; crashing\n", (db.Stats().WAL.Bytes-base)>>20)
	os.Exit(0) // no Close: dirty pages are lost, the WAL is durable
	return nil
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/stratadb/strata"
	"github.com/stratadb/strata/internal/server"
)

func newStatsCommand() *cobra.Command {
	var addr, password string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats [DIR]",
		Short: "print a database's statistics, or a running server's (--addr)",
		Long: `Print the engine's statistics (strata.Stats) as a table, or as JSON.

With DIR the database is opened (recovery runs, as at any Open), so the
figures are those of a freshly opened database: space, compression,
segments, WAL. With --addr HOST:PORT they come from a running strata serve
(its STRATA STATS command): hit ratios, R, T_disk_read, T_decom, T_comp
and the counters since it started.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var st strata.Stats
			switch {
			case addr != "" && len(args) == 0:
				var err error
				if st, err = remoteStats(cmd.Context(), addr, password); err != nil {
					return err
				}
			case addr == "" && len(args) == 1:
				if err := mustBeDatabase(args[0]); err != nil {
					return err
				}
				db, err := strata.Open(args[0], nil)
				if err != nil {
					return err
				}
				st = db.Stats()
				if err := db.Close(); err != nil {
					return err
				}
			default:
				return fmt.Errorf("give a database directory or --addr of a running server")
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			return writeStatsTable(cmd.OutOrStdout(), st)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "", "address of a running strata serve (host:port)")
	cmd.Flags().StringVar(&password, "password", "", "its --requirepass")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print strata.Stats as JSON")
	return cmd
}

// remoteStats asks a running server for its statistics.
func remoteStats(ctx context.Context, addr, password string) (strata.Stats, error) {
	var st strata.Stats
	c := redis.NewClient(&redis.Options{Addr: addr, Password: password, Protocol: 2, MaxRetries: -1, DialTimeout: 5 * time.Second})
	defer c.Close()
	js, err := c.Do(ctx, "STRATA", "STATS").Text()
	if err != nil {
		return st, fmt.Errorf("stats from %s: %w", addr, err)
	}
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		return st, fmt.Errorf("stats from %s: %w", addr, err)
	}
	return st, nil
}

func writeStatsTable(w io.Writer, st strata.Stats) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tvalue\tmeaning")
	for _, f := range server.StatsFields(st) {
		fmt.Fprintf(tw, "%s\t%v\t%s\n", f.Name, f.Value, f.Help)
	}
	return tw.Flush()
}

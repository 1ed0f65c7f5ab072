package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/stratadb/strata/internal/check"
	"github.com/stratadb/strata/internal/vfs"
)

// exitCode is an error that only sets the process's exit status (the
// command has printed what there is to say).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func newCheckCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check DIR",
		Short: "verify a database's files without changing them",
		Long: `Verify the Strata database in DIR read-only (it is not opened, nothing is
written or repaired): every page checksum and the page store's structure
(segments of both streams, checkpoint, map log), the page map, the B+tree
(key order, separators, reachability, no page used twice, freed pages
unreachable), overflow chains, the meta page and the WAL.

Each problem is printed with its file and offset (or page). Exit status:
0 no problem; 1 corruption; 2 states a crash explains, which Open repairs
(a torn tail, unreachable pages, WAL records to replay), and no corruption;
3 only leaked pages: pages no tree reaches in a database closed cleanly,
which Open does not look for (space lost, no data); 4 the check could not
run (the database is in use, DIR is not a database, an I/O error).
The database must not be in use (stop strata serve first).`,
		Args: func(cmd *cobra.Command, args []string) error {
			return cannotCheck(cmd, cobra.ExactArgs(1)(cmd, args))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := check.Check(vfs.Default, args[0])
			if err != nil {
				return cannotCheck(cmd, err)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(checkJSON(r)); err != nil {
					return cannotCheck(cmd, err)
				}
			} else {
				writeCheckReport(cmd.OutOrStdout(), r)
			}
			switch {
			case r.Corrupt() > 0:
				return exitCode(1)
			case r.Repairable() > 0:
				return exitCode(2)
			case r.Leaks() > 0:
				return exitCode(3)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.SetFlagErrorFunc(cannotCheck)
	return cmd
}

// cannotCheck prints err and makes check exit 4 (it could not check), not
// 1 (corruption); nil stays nil.
func cannotCheck(cmd *cobra.Command, err error) error {
	if err == nil {
		return nil
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "strata:", err)
	return exitCode(4)
}

func writeCheckReport(w io.Writer, r *check.Report) {
	fmt.Fprintf(w, "%s\n", r.Dir)
	clean := "no (recovery will run at open)"
	if r.CleanClose {
		clean = "yes"
	}
	fmt.Fprintf(w, "  page store: %d pages of %d bytes in %d segments (%d cold), map log of %d deltas, format %d; closed cleanly: %s\n",
		r.LivePages, r.PageSize, r.Segments, r.ColdSegments, r.MapLogDeltas, r.StoreVersion, clean)
	fmt.Fprintf(w, "  tree:       %d keys, depth %d, %d leaves, %d branches, %d overflow pages; %d pages reachable; last transaction %d\n",
		r.Keys, r.Depth, r.Leaves, r.Branches, r.OverflowPages, r.Reachable, r.MetaTxID)
	fmt.Fprintf(w, "  WAL:        %d files, %d records, %d after the checkpoint (LSN %d)\n", r.WALFiles, r.WALRecords, r.WALToReplay, r.MetaLSN)
	metaClean := "no (Open looks for unreachable pages)"
	if r.MetaClean {
		metaClean = "yes (Open skips the walk for unreachable pages)"
	}
	fmt.Fprintf(w, "  meta page:  closed cleanly: %s\n", metaClean)
	for _, p := range r.Problems {
		kind := "CORRUPT   "
		switch {
		case p.Leak:
			kind = "LEAK      "
		case p.Repairable:
			kind = "REPAIRABLE"
		}
		fmt.Fprintf(w, "  %s %s\n", kind, p)
	}
	switch {
	case r.Corrupt() > 0:
		fmt.Fprintf(w, "%d problems: %d corruption, %d repairable by Open\n", len(r.Problems), r.Corrupt(), r.Repairable())
	case r.Repairable() > 0:
		fmt.Fprintf(w, "no corruption; %d states a crash left, which Open repairs\n", r.Repairable())
	case r.Leaks() > 0:
		fmt.Fprintln(w, "no corruption; leaked pages (space lost, no data)")
	default:
		fmt.Fprintln(w, "OK")
	}
}

type checkProblemJSON struct {
	File       string `json:"file,omitempty"`
	Offset     int64  `json:"offset"`
	Page       int64  `json:"page"`
	Message    string `json:"message"`
	Repairable bool   `json:"repairable"`
	Leak       bool   `json:"leak"`
}

func checkJSON(r *check.Report) any {
	probs := make([]checkProblemJSON, 0, len(r.Problems))
	for _, p := range r.Problems {
		probs = append(probs, checkProblemJSON{p.File, p.Offset, p.Page, p.Msg, p.Repairable, p.Leak})
	}
	return map[string]any{
		"dir": r.Dir, "ok": len(r.Problems) == 0, "corrupt": r.Corrupt(), "repairable": r.Repairable(), "leaks": r.Leaks(), "meta_clean": r.MetaClean,
		"page_size": r.PageSize, "live_pages": r.LivePages, "reachable_pages": r.Reachable, "segments": r.Segments,
		"cold_segments": r.ColdSegments, "map_log_deltas": r.MapLogDeltas, "store_version": r.StoreVersion,
		"clean_close": r.CleanClose, "keys": r.Keys, "depth": r.Depth, "leaves": r.Leaves, "branches": r.Branches,
		"overflow_pages": r.OverflowPages, "meta_txid": r.MetaTxID, "meta_lsn": r.MetaLSN,
		"wal_files": r.WALFiles, "wal_records": r.WALRecords, "wal_to_replay": r.WALToReplay, "problems": probs,
	}
}

// Command strata is Strata's command-line tool.
//
// Subcommands:
//
//	strata demo        write sysbench-style rows into a page store and report
//	                   compression ratio, space and throughput per codec
//	strata pool-sweep  sweep the buffer pool's compressed share R on simulated
//	                   devices and plot throughput against it
//	strata bench       benchmark Strata against bbolt, Pebble and Badger under
//	                   equal memory (each engine in a child process)
//	strata bench sweep vary one parameter of a bench run and plot throughput
//	                   and hit ratios against it
//	strata serve       serve a database over the Redis protocol, with
//	                   Prometheus metrics
//	strata check       verify a database's files (read-only)
//	strata stats       a database's or a running server's statistics
//	strata advise      measure the device and codecs on a database's pages
//	                   and recommend a configuration
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	maybeRunBenchChild()
	root := &cobra.Command{
		Use:           "strata",
		Short:         "Strata: an embedded storage engine with compressed pages and a cache that knows it",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newDemoCommand(), newPoolSweepCommand(), newKVLoadCommand(), newRecoveryCommand(), newBenchCommand(),
		newServeCommand(), newCheckCommand(), newStatsCommand(), newAdviseCommand())
	if err := root.Execute(); err != nil {
		var code exitCode
		if errors.As(err, &code) {
			os.Exit(int(code))
		}
		fmt.Fprintln(os.Stderr, "strata:", err)
		os.Exit(1)
	}
}

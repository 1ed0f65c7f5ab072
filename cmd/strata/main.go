// Command strata is Strata's command-line tool.
//
// Subcommands:
//
//	strata demo        write sysbench-style rows into a page store and report
//	                   compression ratio, space and throughput per codec
//	strata pool-sweep  sweep the buffer pool's compressed share R on simulated
//	                   devices and plot throughput against it
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "strata",
		Short:         "Strata: an embedded storage engine with compressed pages and a cache that knows it",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newDemoCommand(), newPoolSweepCommand(), newKVLoadCommand(), newRecoveryCommand())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "strata:", err)
		os.Exit(1)
	}
}

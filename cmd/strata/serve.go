package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratadb/strata"
	"github.com/stratadb/strata/internal/server"
)

// serveFlags are the flags of `strata serve`.
type serveFlags struct {
	addr          string
	metricsAddr   string
	password      string
	appendFsync   string
	maxClients    int
	idleTimeout   time.Duration
	maxBulk       string
	maxMultibulk  int64
	maxCommand    string
	maxOutput     string
	outputTimeout time.Duration
	enableFlushDB bool
	cache         string
	flashCache    string
	flashSize     string
	flashFormat   bool
	codec         string
	pageSize      string
	grace         time.Duration
	verbose       bool
	pprof         bool
}

func newServeCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [DIR]",
		Short: "serve a database over the Redis protocol (RESP2)",
		Long: `Serve the Strata database in DIR (default ./strata-data, created if absent)
to Redis clients: redis-cli -p 6380, or any Redis client library.

Durability (--appendfsync, in Redis's words):
  always    a write is acknowledged after its WAL record is fsynced
            (Strata's SyncAlways; concurrent clients share fsyncs)
  everysec  a write is acknowledged once written to the OS; the WAL is
            fsynced in the background every 10 ms (SyncPeriodic). A process
            crash loses nothing, a machine crash the last ~10 ms.
  no        fsync only at checkpoints and shutdown (SyncNever). A process
            crash loses nothing, a machine crash everything since the last
            checkpoint.

SIGTERM, SIGINT and the SHUTDOWN command stop accepting clients, let every
connection finish the commands it has sent, checkpoint and close; a second
SIGTERM or SIGINT ends the process at once (the next start recovers).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "strata-data"
			if len(args) == 1 {
				dir = args[0]
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			// After the first signal a second one ends the process at once
			// (the default action): the shutdown's grace and checkpoint are
			// skipped, and the next Open recovers from the WAL.
			go func() { <-ctx.Done(); stop() }()
			return runServe(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), dir, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:6380", "address to listen on")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics (off if empty)")
	fl.StringVar(&f.password, "requirepass", "", "password clients must AUTH with (none if empty)")
	fl.StringVar(&f.appendFsync, "appendfsync", "everysec", "durability: always, everysec or no (see above)")
	fl.IntVar(&f.maxClients, "maxclients", 10000, "most concurrent clients")
	fl.DurationVar(&f.idleTimeout, "timeout", 0, "close a client idle this long (0: never)")
	fl.StringVar(&f.maxBulk, "proto-max-bulk-len", strconv.FormatInt(server.DefaultLimits.MaxBulkLen, 10), "longest argument (the default is 16 MiB + 1 KiB, for a 16 MiB value and its framing)")
	fl.Int64Var(&f.maxMultibulk, "max-multibulk-len", server.DefaultLimits.MaxMultibulkLen, "most arguments of one command")
	fl.StringVar(&f.maxCommand, "client-query-buffer-limit", formatSize(server.DefaultLimits.MaxCommandBytes), "largest command on the wire")
	fl.StringVar(&f.maxOutput, "client-output-buffer-limit", "4MiB", "reply bytes a client may have pending before the server waits for it to read")
	fl.DurationVar(&f.outputTimeout, "output-timeout", 30*time.Second, "disconnect a client whose replies cannot be written for this long")
	fl.BoolVar(&f.enableFlushDB, "enable-flushdb", false, "allow FLUSHDB and FLUSHALL")
	fl.StringVar(&f.cache, "cache", "", "buffer pool size (default: Strata's, 64MiB)")
	fl.StringVar(&f.flashCache, "flash-cache", "", "file or device on flash for a second-level cache of clean pages (none if empty); one that holds other data is refused (see --flash-cache-format)")
	fl.StringVar(&f.flashSize, "flash-cache-size", "1GiB", "bytes of --flash-cache to use")
	fl.BoolVar(&f.flashFormat, "flash-cache-format", false, "allow --flash-cache to be formatted over a file or device that holds other data")
	fl.StringVar(&f.codec, "codec", "", "page codec of a new database (default: Strata's, zstd)")
	fl.StringVar(&f.pageSize, "page-size", "", "page size of a new database (default: Strata's, 4KiB)")
	fl.DurationVar(&f.grace, "shutdown-grace", 10*time.Second, "at shutdown, how long connections may take to finish their commands")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log connection errors and engine events to stderr (warnings are logged without it)")
	fl.BoolVar(&f.pprof, "pprof", false, "also serve Go's profiler at http://METRICS-ADDR/debug/pprof/ (needs --metrics-addr)")
	return cmd
}

// syncMode maps Redis's appendfsync onto Strata's sync modes.
func syncMode(appendFsync string) (strata.SyncMode, error) {
	switch appendFsync {
	case "always":
		return strata.SyncAlways, nil
	case "everysec":
		return strata.SyncPeriodic, nil
	case "no":
		return strata.SyncNever, nil
	}
	return 0, fmt.Errorf("--appendfsync %q: want always, everysec or no", appendFsync)
}

func (f serveFlags) options(logger *slog.Logger) (*strata.Options, error) {
	mode, err := syncMode(f.appendFsync)
	if err != nil {
		return nil, err
	}
	opts := &strata.Options{Sync: mode, Codec: f.codec, Logger: logger}
	if f.cache != "" {
		if opts.CacheSize, err = parseSize(f.cache); err != nil {
			return nil, fmt.Errorf("--cache: %w", err)
		}
	}
	if f.flashCache != "" {
		size, err := parseSize(f.flashSize)
		if err != nil {
			return nil, fmt.Errorf("--flash-cache-size: %w", err)
		}
		opts.FlashCache = strata.FlashCache{Path: f.flashCache, Size: size, Format: f.flashFormat}
	}
	if f.pageSize != "" {
		ps, err := parseSize(f.pageSize)
		if err != nil {
			return nil, fmt.Errorf("--page-size: %w", err)
		}
		opts.PageSize = int(ps)
	}
	return opts, nil
}

func (f serveFlags) config(logger *slog.Logger) (server.Config, error) {
	if f.grace <= 0 {
		return server.Config{}, fmt.Errorf("--shutdown-grace %v: want a positive duration", f.grace)
	}
	cfg := server.Config{
		Password: f.password, MaxClients: f.maxClients, IdleTimeout: f.idleTimeout,
		OutputTimeout: f.outputTimeout, EnableFlushDB: f.enableFlushDB, AppendFsync: f.appendFsync,
		ShutdownGrace: f.grace, Logger: logger,
	}
	var err error
	if cfg.Limits.MaxBulkLen, err = parseSize(f.maxBulk); err != nil {
		return cfg, fmt.Errorf("--proto-max-bulk-len: %w", err)
	}
	if cfg.Limits.MaxCommandBytes, err = parseSize(f.maxCommand); err != nil {
		return cfg, fmt.Errorf("--client-query-buffer-limit: %w", err)
	}
	cfg.Limits.MaxMultibulkLen = f.maxMultibulk
	out, err := parseSize(f.maxOutput)
	if err != nil {
		return cfg, fmt.Errorf("--client-output-buffer-limit: %w", err)
	}
	cfg.MaxOutputBuffer = int(out)
	return cfg, nil
}

// runServe opens the database, serves it until ctx ends or a client sends
// SHUTDOWN, then drains the connections, checkpoints and closes.
func runServe(ctx context.Context, stdout, stderr io.Writer, dir string, f serveFlags) error {
	// Warnings always (recovery dropping a torn log tail, a flash cache
	// disabled, ...: rare, and about the data); everything else with -v.
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if f.verbose {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	opts, err := f.options(logger)
	if err != nil {
		return err
	}
	cfg, err := f.config(logger)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer ln.Close()
	if ta, ok := ln.Addr().(*net.TCPAddr); ok {
		cfg.Port = ta.Port
	}
	db, err := strata.Open(dir, opts)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	var srv *server.Server
	if f.metricsAddr != "" {
		cfg.Metrics = server.NewMetrics(db, func() float64 { return float64(srv.Clients()) })
	}
	srv = server.New(db, cfg)
	var metricsSrv *http.Server
	if cfg.Metrics != nil {
		mln, err := net.Listen("tcp", f.metricsAddr)
		if err != nil {
			db.Close()
			return fmt.Errorf("serve: metrics: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", cfg.Metrics.Handler())
		if f.pprof {
			mux.HandleFunc("/debug/pprof/", pprof.Index)
			mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
			mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go metricsSrv.Serve(mln)
		fmt.Fprintf(stdout, "metrics on http://%s/metrics\n", mln.Addr())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "strata serve: %s on %s (appendfsync %s)\n", dir, ln.Addr(), f.appendFsync)
	var serveErr error
	serveDone := false
	select {
	case <-ctx.Done():
	case <-srv.ShutdownRequested():
	case serveErr = <-served:
		serveDone = true
	}
	fmt.Fprintln(stdout, "strata serve: shutting down")
	// Also after Serve returned on its own: Shutdown waits for the
	// connections' handlers, which may still be in a database call.
	if err := srv.Shutdown(context.Background()); err != nil {
		fmt.Fprintln(stderr, "strata serve:", err)
	}
	if !serveDone {
		serveErr = <-served
	}
	start := time.Now()
	ckptErr := db.Checkpoint()
	if cfg.Metrics != nil && ckptErr == nil {
		cfg.Metrics.ObserveCheckpoint(time.Since(start))
	}
	if metricsSrv != nil {
		// After the shutdown's checkpoint, which a last scrape may see.
		metricsSrv.Close()
	}
	closeErr := db.Close()
	if err := errors.Join(serveErr, ckptErr, closeErr); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintf(stdout, "strata serve: checkpointed and closed in %v\n", time.Since(start).Round(time.Millisecond))
	return nil
}

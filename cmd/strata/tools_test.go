package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata"
	"github.com/stratadb/strata/internal/server"
)

func runCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	c := newCheckCommand()
	switch args[0] {
	case "stats":
		c = newStatsCommand()
	case "advise":
		c = newAdviseCommand()
	case "recovery-time":
		c = newRecoveryCommand()
	case "kv-load":
		c = newKVLoadCommand()
	case "pool-sweep":
		c = newPoolSweepCommand()
	}
	c.SetArgs(args[1:])
	c.SetOut(&out)
	c.SetErr(&out)
	err := c.ExecuteContext(context.Background())
	return out.String(), err
}

func smallDB(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := strata.Open(dir, &strata.Options{PageSize: 4096, CacheSize: 1 << 20, DisableDirectIO: true})
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	for i := 0; i < 5000; i++ {
		b.Set([]byte(fmt.Sprintf("user:%06d", i)), []byte(fmt.Sprintf(`{"id":%d,"name":"user %d","score":%d}`, i, i, i*7%1000)))
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCheckCommand(t *testing.T) {
	dir := smallDB(t)
	out, err := runCmd(t, "check", dir)
	if err != nil || !strings.Contains(out, "5000 keys") || !strings.HasSuffix(strings.TrimSpace(out), "OK") {
		t.Fatalf("check of a healthy database: %v\n%s", err, out)
	}
	out, err = runCmd(t, "check", "--json", dir)
	var js map[string]any
	if err != nil || json.Unmarshal([]byte(out), &js) != nil || js["ok"] != true {
		t.Fatalf("check --json: %v\n%s", err, out)
	}
	// Flip a byte in the middle of a segment.
	seg := filepath.Join(dir, "00000001.seg")
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/3] ^= 0x55
	os.WriteFile(seg, b, 0o644)
	out, err = runCmd(t, "check", dir)
	var code exitCode
	if !errors.As(err, &code) || code != 1 || !strings.Contains(out, "CORRUPT") || !strings.Contains(out, "00000001.seg offset") {
		t.Fatalf("check of a corrupt database: %v\n%s", err, out)
	}
}

func TestStatsAndAdviseCommands(t *testing.T) {
	dir := smallDB(t)
	out, err := runCmd(t, "stats", dir)
	if err != nil || !strings.Contains(out, "compression_ratio") || !strings.Contains(out, "live_pages") {
		t.Fatalf("stats: %v\n%s", err, out)
	}
	out, err = runCmd(t, "stats", "--json", dir)
	var st strata.Stats
	if err != nil || json.Unmarshal([]byte(out), &st) != nil || st.Store.LivePages == 0 {
		t.Fatalf("stats --json: %v\n%s", err, out)
	}
	// A running server: stats --addr and advise --addr.
	db, err := strata.Open(dir, &strata.Options{DisableDirectIO: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(db, server.Config{})
	go srv.Serve(ln)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		db.Close()
	}()
	for i := 0; i < 100; i++ {
		db.Get([]byte(fmt.Sprintf("user:%06d", i*37)))
	}
	out, err = runCmd(t, "stats", "--addr", ln.Addr().String())
	if err != nil || !strings.Contains(out, "hit_ratio_uncompressed") {
		t.Fatalf("stats --addr: %v\n%s", err, out)
	}
	out, err = runCmd(t, "advise", "--reads", "50", "--sample", "30", "--addr", ln.Addr().String(), dir)
	if err != nil || !strings.Contains(out, "Recommendation: codec") || !strings.Contains(out, "measured") {
		t.Fatalf("advise: %v\n%s", err, out)
	}
}

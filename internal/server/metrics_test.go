package server

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stratadb/strata"
)

func TestMetrics(t *testing.T) {
	db, err := strata.Open(t.TempDir(), &strata.Options{CacheSize: 8 << 20, Sync: strata.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	var ts *testServer
	m := NewMetrics(db, func() float64 { return float64(ts.srv.Clients()) })
	ts = startServerOn(t, db, Config{Metrics: m})
	c := ts.client()
	c.Set(bg, "k", "v", 0)
	c.Get(bg, "k")
	c.Get(bg, "k")
	c.Set(bg, "s", "x", 0)
	c.Incr(bg, "s") // an error reply
	c.Do(bg, "nosuch")
	c.Do(bg, "SAVE")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	for _, want := range []string{
		`strata_server_command_duration_seconds_count{cmd="get"} 2`,
		`strata_server_command_duration_seconds_count{cmd="set"} 2`,
		`strata_server_command_errors_total{cmd="incr"} 1`,
		`strata_server_unknown_commands_total 1`,
		`strata_server_connected_clients 1`,
		`strata_checkpoint_duration_seconds_count 1`,
		"strata_pool_hit_ratio_uncompressed ",
		"strata_pool_hit_ratio_compressed ",
		"strata_pool_miss_ratio ",
		"strata_pool_compressed_share ",
		"strata_pool_compressed_share_target ",
		"strata_pool_compressed_share_ceiling ",
		"strata_pool_inner_pages ",
		"strata_pool_disk_read_seconds ",
		"strata_pool_decompress_seconds ",
		"strata_pool_compress_seconds ",
		"strata_store_compression_ratio ",
		"strata_store_space_amplification ",
		"strata_store_write_amplification ",
		"strata_pool_free_buffer_waits_total ",
		"strata_checkpoints_total ",
		`strata_db_operations_total{op="get"} 2`,
		"go_goroutines ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(text, "strata_flash_cache_") {
		t.Error("flash cache metrics without a flash cache")
	}
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// TestFlashCacheMetrics: a database with a flash cache exports its
// figures (and one without does not, see TestMetrics).
func TestFlashCacheMetrics(t *testing.T) {
	dir := t.TempDir()
	db, err := strata.Open(dir+"/db", &strata.Options{CacheSize: 8 << 20, Sync: strata.SyncNever,
		FlashCache: strata.FlashCache{Path: dir + "/flash", Size: 8 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := NewMetrics(db, nil)
	db.Set([]byte("k"), []byte("v"))
	db.Get([]byte("k"))
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	for _, want := range []string{
		"strata_flash_cache_active 1",
		"strata_flash_cache_hits_total ",
		"strata_flash_cache_hit_ratio ",
		"strata_flash_cache_admitted_total ",
		"strata_flash_cache_dropped_busy_total ",
		"strata_flash_cache_bytes_written_total ",
		"strata_flash_cache_evictions_total ",
		"strata_flash_cache_stale_rejects_total ",
		"strata_flash_cache_checksum_errors_total ",
		"strata_flash_cache_rebuild_seconds ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

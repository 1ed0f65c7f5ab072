package main

import (
	"slices"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
	}{
		{"4096", 4096}, {"64MiB", 64 << 20}, {"64mib", 64 << 20}, {"64M", 64 << 20}, {"64 MiB", 64 << 20},
		{"1.5GiB", 3 << 29}, {"16KiB", 16 << 10}, {"1KB", 1000}, {"2MB", 2e6}, {"1GB", 1e9}, {"1TiB", 1 << 40},
		{"0", 0}, {"10B", 10},
	} {
		got, err := parseSize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "MiB", "-1", "12XB", "1.5", "1.2.3MiB", "99999999TiB", "0.3KiB"} {
		if got, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", bad, got)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for _, tt := range []struct {
		in   int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1 KiB"}, {64 << 20, "64 MiB"}, {3 << 29, "1.5 GiB"}, {336 << 20, "336 MiB"}} {
		if got := formatSize(tt.in); got != tt.want {
			t.Errorf("formatSize(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseEngines(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"strata", []string{"strata"}},
		{"all", []string{"strata", "bbolt", "pebble", "badger"}},
		{" Pebble , strata,pebble ", []string{"pebble", "strata"}},
		{"badger,all", []string{"badger", "strata", "bbolt", "pebble"}},
	} {
		got, err := parseEngines(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("parseEngines(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", " , ", "rocksdb", "strata,lmdb"} {
		if got, err := parseEngines(bad); err == nil {
			t.Errorf("parseEngines(%q) = %v, want an error", bad, got)
		}
	}
}

func TestParseShare(t *testing.T) {
	for in, want := range map[string]float64{"auto": autoShare, "AUTO": autoShare, "0": 0, "0.25": 0.25, "1": 1} {
		if got, err := parseShare(in); err != nil || got != want {
			t.Errorf("parseShare(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-0.1", "1.01", "NaN", "half"} {
		if _, err := parseShare(bad); err == nil {
			t.Errorf("parseShare(%q) succeeded", bad)
		}
	}
}

func TestMemLimitRule(t *testing.T) {
	if got, want := defaultMemLimit(64<<20), int64(64<<20+96<<20); got != want {
		t.Errorf("defaultMemLimit(64 MiB) = %s, want %s", formatSize(got), formatSize(want))
	}
	if got := goMemLimit(1000 << 20); got != 800<<20 {
		t.Errorf("goMemLimit(1000 MiB) = %s, want 800 MiB", formatSize(got))
	}
	for in, want := range map[string]int64{"": 0, "none": -1, "512MiB": 512 << 20} {
		f := benchFlags{memLimit: in}
		if got, err := f.memLimitBytes(); err != nil || got != want {
			t.Errorf("--mem-limit %q = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := (&benchFlags{memLimit: "0"}).memLimitBytes(); err == nil {
		t.Error("--mem-limit 0 accepted")
	}
}

func TestSpecTemplateRejectsBadFlags(t *testing.T) {
	good := func() benchFlags {
		return benchFlags{tableSize: 10, threads: 1, duration: 1, cache: "1MiB", share: "auto", device: "none", dataset: "sysbench"}
	}
	if _, err := func() (any, error) { f := good(); return f.specTemplate() }(); err != nil {
		t.Fatalf("good flags rejected: %v", err)
	}
	for name, mutate := range map[string]func(*benchFlags){
		"cache":        func(f *benchFlags) { f.cache = "lots" },
		"zero cache":   func(f *benchFlags) { f.cache = "0" },
		"r":            func(f *benchFlags) { f.share = "2" },
		"table size":   func(f *benchFlags) { f.tableSize = 0 },
		"threads":      func(f *benchFlags) { f.threads = 0 },
		"duration":     func(f *benchFlags) { f.duration = 0 },
		"fill factor":  func(f *benchFlags) { f.fillFactor = 5 },
		"device":       func(f *benchFlags) { f.device = "floppy" },
		"dataset":      func(f *benchFlags) { f.dataset = "tpcc" },
		"distribution": func(f *benchFlags) { f.distribution = "normal" },
		"page size":    func(f *benchFlags) { f.pageSize = "big" },
	} {
		f := good()
		mutate(&f)
		if _, err := f.specTemplate(); err == nil {
			t.Errorf("bad %s accepted", name)
		}
	}
	if _, err := parseWorkloads("oltp_read_only,tpcc"); err == nil {
		t.Error("unknown workload accepted")
	}
	if ws, err := parseWorkloads("oltp_read_only, ycsb_a"); err != nil || !slices.Equal(ws, []string{"oltp_read_only", "ycsb_a"}) {
		t.Errorf("parseWorkloads = %v, %v", ws, err)
	}
}

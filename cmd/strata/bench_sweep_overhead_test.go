package main

import "testing"

// TestStrataOverheadDefaultsByWorkload: --strata-cache fill leaves Strata's
// process 16 MiB beyond its cache for a reading workload and 32 MiB for
// one that writes (with 24 its collector took 20% of the CPU); a value
// given on the command line wins.
func TestStrataOverheadDefaultsByWorkload(t *testing.T) {
	for _, c := range []struct{ given, workload, want string }{
		{"", "oltp_point_select", readOverhead},
		{"", "oltp_read_only", readOverhead},
		{"", "ycsb_c", readOverhead},
		{"", "oltp_write_only", writeOverhead},
		{"", "oltp_insert", writeOverhead},
		{"", "ycsb_a", writeOverhead},
		{"20MiB", "oltp_write_only", "20MiB"},
		{"40MiB", "oltp_point_select", "40MiB"},
	} {
		if got := strataOverheadFor(c.given, c.workload); got != c.want {
			t.Errorf("strataOverheadFor(%q, %s) = %s, want %s", c.given, c.workload, got, c.want)
		}
	}
	if readOverhead == writeOverhead {
		t.Error("the defaults do not differ: the test proves nothing")
	}
}

// TestOverheadWarningForWrites: --strata-overhead below what a writing
// workload needs is warned about; enough, or a reading workload, is not.
func TestOverheadWarningForWrites(t *testing.T) {
	for _, c := range []struct {
		overhead int64
		workload string
		warn     bool
	}{
		{24 << 20, "oltp_write_only", true},
		{32 << 20, "oltp_write_only", false},
		{40 << 20, "ycsb_a", false},
		{24 << 20, "oltp_point_select", false},
		{16 << 20, "oltp_read_only", false},
	} {
		if got := overheadWarning(c.overhead, "X", c.workload); (got != "") != c.warn {
			t.Errorf("overheadWarning(%d MiB, %s) = %q, want a warning: %v", c.overhead>>20, c.workload, got, c.warn)
		}
	}
}
